/* eslint-disable @unicorn/no-await-expression-member -- tests read close codes and responses inline */
import { createServer } from 'node:http'
import { test } from '@japa/runner'
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import { WebSocketServer } from 'ws'
import { CLOSE_CODES } from '../../src/collaboration/manager.ts'
import { connectClient, tokenFor, waitFor } from '../collaboration/helpers.ts'
import {
  message,
  rawClient,
  rawUpgrade,
  serverCloseCode,
  setupHostileApp,
  updateMessage,
  upgradeStatus,
  wsFrame,
} from './collaboration_helpers.ts'

const UNMASKED = Buffer.from([0x82, 0x01, 0x00])
const HUNDRED_MIB = 100 * 1024 * 1024

test.group('Hostile clients: the handshake', () => {
  test('an unmasked frame after a handshake without a token gets 401, and the process lives', async ({
    assert,
  }) => {
    const { port, bystander } = await setupHostileApp()
    for (const path of ['/collaboration/demo/1', '/collaboration/demo/1?token=bogus']) {
      const raw = await rawUpgrade(port, path, UNMASKED)
      assert.equal(raw.status, 401, path)
      await raw.ended
    }
    assert.equal(await bystander(), '200 still here')
  })

  test('an unmasked frame after an accepted handshake closes that socket with 1002', async ({
    assert,
  }) => {
    const { port, bystander } = await setupHostileApp()
    const raw = await rawUpgrade(port, `/collaboration/demo/1?token=${tokenFor('demo/1')}`)
    assert.equal(raw.status, 101)
    raw.socket.write(UNMASKED)
    await raw.ended
    assert.equal(serverCloseCode(raw.received()), 1002)

    // the same frame in the upgrade request's own packet (ws gets it as `head`)
    const early = await rawUpgrade(
      port,
      `/collaboration/demo/1?token=${tokenFor('demo/1')}`,
      UNMASKED
    )
    assert.equal(early.status, 101)
    await early.ended
    assert.equal(serverCloseCode(early.received()), 1002)
    assert.equal(await bystander(), '200 still here')
  })

  test('a frame declaring 100 MiB is refused with 1009 without reading it', async ({ assert }) => {
    const { port, bystander } = await setupHostileApp()
    const refused = await rawUpgrade(
      port,
      '/collaboration/demo/1?token=nope',
      wsFrame(new Uint8Array(16), { declaredLength: HUNDRED_MIB })
    )
    assert.equal(refused.status, 401)

    const raw = await rawUpgrade(port, `/collaboration/demo/1?token=${tokenFor('demo/1')}`)
    assert.equal(raw.status, 101)
    raw.socket.write(wsFrame(new Uint8Array(16), { declaredLength: HUNDRED_MIB }))
    await raw.ended
    assert.equal(serverCloseCode(raw.received()), 1009)
    assert.equal(await bystander(), '200 still here')
  })

  test('maxPayload comes from limits: a message over it closes with 1009', async ({ assert }) => {
    const { wsBase } = await setupHostileApp({
      limits: { maxPayload: 1024, maxDocumentBytes: 512 },
    })
    const client = rawClient(`${wsBase}/demo/1?token=${tokenFor('demo/1')}`)
    await client.opened
    client.socket.send(updateMessage(new Uint8Array(2000)))
    assert.equal((await client.closed).code, 1009)
  })
})

test.group('Hostile clients: a rule that never answers', () => {
  test('closes the socket with the retryable 4503 after limits.authorizeTimeoutMs', async ({
    assert,
  }) => {
    const { wsBase } = await setupHostileApp({
      authorize: () => new Promise(() => {}),
      limits: { authorizeTimeoutMs: 100 },
    })
    const client = rawClient(`${wsBase}/slow/1?token=${tokenFor('slow/1')}`)
    await client.opened
    assert.equal((await client.closed).code, CLOSE_CODES.authorizationFailed)
  })
})

test.group('Hostile clients: upgrades nobody serves', () => {
  test('a path outside the collaboration prefix gets 404 when Atrium is the only listener', async ({
    assert,
  }) => {
    const { port } = await setupHostileApp()
    const raw = await rawUpgrade(port, '/not-collab')
    assert.equal(raw.status, 404)
    await raw.ended
  })

  test('a malformed document name gets 400 and a closed socket', async ({ assert }) => {
    const { port } = await setupHostileApp()
    for (const path of ['/collaboration/%ZZ', '/collaboration/demo//1', '/collaboration/']) {
      const raw = await rawUpgrade(port, `${path}?token=${tokenFor('demo/1')}`)
      assert.equal(raw.status, 400, path)
      await raw.ended
    }
  })

  test('another upgrade listener keeps its own paths; Atrium still answers under its prefix', async ({
    assert,
  }) => {
    const { manager } = await setupHostileApp()
    const server = createServer()
    const wss = new WebSocketServer({ noServer: true })
    manager.attach(server)
    server.on('upgrade', (request, socket, head) => {
      if (request.url === '/app-socket') {
        wss.handleUpgrade(request, socket, head, (ws) => ws.send('app'))
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    try {
      const app = await rawUpgrade(port, '/app-socket')
      assert.equal(app.status, 101)
      await waitFor(() => app.received().includes('app'), 5000, "the app's socket message")
      const invalid = await rawUpgrade(port, '/collaboration/%ZZ')
      assert.equal(invalid.status, 400)
      app.socket.destroy()
    } finally {
      wss.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

test.group('Hostile clients: writers', () => {
  test('a writer flooding updates is closed with 4429; peers and HTTP keep working', async ({
    assert,
  }) => {
    const { wsBase, bystander } = await setupHostileApp({
      limits: { messagesPerSecond: 50, messageBurst: 200 },
    })
    const peer = connectClient(wsBase, 'flood/1', tokenFor('flood/1', 'peer'))
    await peer.synced
    const flooder = rawClient(`${wsBase}/flood/1?token=${tokenFor('flood/1', 'flooder')}`)
    await flooder.opened
    const source = new Y.Doc()
    source.on('update', (update: Uint8Array) => flooder.socket.send(updateMessage(update)))
    const text = source.getText('content')
    for (let index = 0; index < 5000 && flooder.socket.readyState === 1; index++) {
      text.insert(text.length, 'x')
    }
    assert.equal((await flooder.closed).code, CLOSE_CODES.rateLimited)
    assert.equal(await bystander(), '200 still here')
    // the peer still edits through the server
    const other = connectClient(wsBase, 'flood/1', tokenFor('flood/1', 'other'))
    await other.synced
    peer.text.insert(0, 'after the flood ')
    await waitFor(() => other.text.toString().startsWith('after the flood '))
  })

  test('a writer closed with 4429 that reconnects at once does not get a fresh burst', async ({
    assert,
  }) => {
    const { wsBase, bystander } = await setupHostileApp({
      // no cool-down to speak of: the budget alone is under test
      limits: { messagesPerSecond: 10, messageBurst: 100, abuseCooldownMs: 1 },
    })
    const flood = async (count: number) => {
      const flooder = rawClient(`${wsBase}/flood/2?token=${tokenFor('flood/2', 'flooder')}`)
      await flooder.opened
      const source = new Y.Doc()
      source.on('update', (update: Uint8Array) => flooder.socket.send(updateMessage(update)))
      const text = source.getText('content')
      for (let index = 0; index < count && flooder.socket.readyState === 1; index++) {
        text.insert(text.length, 'x')
      }
      return (await flooder.closed).code
    }
    assert.equal(await flood(1000), CLOSE_CODES.rateLimited)
    // 60 messages fit a fresh burst of 100, not what is left of the user's budget
    assert.equal(await flood(60), CLOSE_CODES.rateLimited)
    assert.equal(await bystander(), '200 still here')
  })

  test('a user closed with 4429 is refused with HTTP 429 before any frame until the cool-down ends', async ({
    assert,
  }) => {
    const { wsBase, bystander } = await setupHostileApp({
      limits: { messagesPerSecond: 10, messageBurst: 100, abuseCooldownMs: 60_000 },
    })
    const flooder = rawClient(`${wsBase}/flood/3?token=${tokenFor('flood/3', 'flooder')}`)
    await flooder.opened
    const source = new Y.Doc()
    source.on('update', (update: Uint8Array) => flooder.socket.send(updateMessage(update)))
    const text = source.getText('content')
    for (let index = 0; index < 1000 && flooder.socket.readyState === 1; index++) {
      text.insert(text.length, 'x')
    }
    assert.equal((await flooder.closed).code, CLOSE_CODES.rateLimited)
    const as = (user: string) => `${wsBase}/flood/3?token=${tokenFor('flood/3', user)}`
    assert.equal(await upgradeStatus(as('flooder')), 429)
    // other users are not punished for it
    assert.equal(await upgradeStatus(as('someone-else')), 101)
    assert.equal(await bystander(), '200 still here')
  })

  test('a malformed message closes with 4400', async ({ assert }) => {
    const { wsBase } = await setupHostileApp()
    const client = rawClient(`${wsBase}/bad/1?token=${tokenFor('bad/1')}`)
    await client.opened
    // a sync message whose update length runs past the end of the message
    client.socket.send(
      message(0, (encoder) => encoding.writeUint8Array(encoder, new Uint8Array([2, 200])))
    )
    assert.equal((await client.closed).code, CLOSE_CODES.malformed)
  })
})
