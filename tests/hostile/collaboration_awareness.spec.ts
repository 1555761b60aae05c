/* eslint-disable @unicorn/no-await-expression-member -- tests read close codes and responses inline */
import { test } from '@japa/runner'
import * as Y from 'yjs'
import { CLOSE_CODES } from '../../src/collaboration/manager.ts'
import { connectClient, tokenFor, waitFor } from '../collaboration/helpers.ts'
import {
  awarenessMessage,
  message,
  rawClient,
  rawUpgrade,
  setupHostileApp,
  updateMessage,
} from './collaboration_helpers.ts'

/** Ends a y-websocket client's socket the way a killed tab does: no awareness `null`, no close frame */
function killTab(client: ReturnType<typeof connectClient>) {
  client.provider.shouldConnect = false
  ;(client.provider.ws as any).terminate()
}

const readOnlyFor = (viewer: string) => (ctx: any) => ({
  canRead: true,
  canWrite: ctx.connection?.userId !== viewer,
  canComment: false,
})

test.group('Hostile clients: awareness amplification', () => {
  test('an awareness frame with more client ids than allowed closes with 4413 and reaches nobody', async ({
    assert,
  }) => {
    const { wsBase, bystander } = await setupHostileApp({
      authorize: readOnlyFor('viewer'),
    })
    const attacker = rawClient(`${wsBase}/aw/1?token=${tokenFor('aw/1', 'viewer')}`)
    await attacker.opened
    const entries = Array.from(
      { length: 300 },
      (_, index) => [1000 + index, 1, '{"user":{"name":"spam"}}'] as [number, number, string]
    )
    attacker.socket.send(awarenessMessage(entries))
    assert.equal((await attacker.closed).code, CLOSE_CODES.tooLarge)

    const late = connectClient(wsBase, 'aw/1', tokenFor('aw/1', 'late'))
    await late.synced
    late.provider.awareness.setLocalStateField('user', { name: 'Late' })
    // a round trip through the server: the join snapshot came before this
    const peer = connectClient(wsBase, 'aw/1', tokenFor('aw/1', 'peer'))
    await waitFor(() => peer.provider.awareness.getStates().get(late.doc.clientID)?.user)
    const ids = [...late.provider.awareness.getStates().keys()]
    assert.isFalse(ids.some((id) => id >= 1000 && id < 1300))
    assert.equal(await bystander(), '200 still here')
  })

  test('an awareness state over maxAwarenessStateBytes closes with 4413', async ({ assert }) => {
    const { wsBase } = await setupHostileApp({ limits: { maxAwarenessStateBytes: 1024 } })
    const client = rawClient(`${wsBase}/aw/2?token=${tokenFor('aw/2')}`)
    await client.opened
    client.socket.send(awarenessMessage([[7, 1, JSON.stringify({ blob: 'x'.repeat(5000) })]]))
    assert.equal((await client.closed).code, CLOSE_CODES.tooLarge)
  })

  test('a flood of awareness queries closes with 4429', async ({ assert }) => {
    const { wsBase, bystander } = await setupHostileApp({ authorize: readOnlyFor('viewer') })
    const client = rawClient(`${wsBase}/aw/3?token=${tokenFor('aw/3', 'viewer')}`)
    await client.opened
    for (let index = 0; index < 100; index++) {
      client.socket.send(message(3, () => {}))
    }
    assert.equal((await client.closed).code, CLOSE_CODES.rateLimited)
    assert.equal(await bystander(), '200 still here')
  })

  test('a client that never reads is dropped once maxBufferedBytes is queued for it', async ({
    assert,
  }) => {
    const { port, wsBase, manager, bystander } = await setupHostileApp({
      // no compaction while the test writes: encoding a growing document is not what it measures
      debounce: 60_000,
      limits: { maxBufferedBytes: 256 * 1024, maxDocumentBytes: 64 * 1024 * 1024 },
    })
    const slow = await rawUpgrade(port, `/collaboration/big/1?token=${tokenFor('big/1', 'slow')}`)
    assert.equal(slow.status, 101)
    slow.socket.pause()
    const writer = rawClient(`${wsBase}/big/1?token=${tokenFor('big/1', 'writer')}`)
    await writer.opened
    const source = new Y.Doc()
    source.on('update', (update: Uint8Array) => writer.socket.send(updateMessage(update)))
    // 16 MiB for a reader that reads nothing: more than the kernel's socket buffers hold
    const chunk = 'y'.repeat(2 * 1024 * 1024)
    for (let index = 0; index < 8; index++) {
      source.getText('content').insert(0, chunk)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    // reading again drains what the kernel held, then meets the end the server sent
    slow.socket.resume()
    let ended = false
    slow.ended.then(() => (ended = true))
    await waitFor(() => ended, 5000, 'the server to drop the reader that never read')
    // the writer, which reads, is still served
    assert.equal(writer.socket.readyState, 1)
    await waitFor(() => manager.openDocuments().includes('big/1'))
    assert.equal(await bystander(), '200 still here')
  })
})

test.group('Hostile clients: awareness ownership', () => {
  test("a viewer can neither overwrite nor delete another user's awareness", async ({ assert }) => {
    const { wsBase } = await setupHostileApp({ authorize: readOnlyFor('viewer') })
    const alice = connectClient(wsBase, 'own/1', tokenFor('own/1', 'alice'))
    const bob = connectClient(wsBase, 'own/1', tokenFor('own/1', 'bob'))
    await Promise.all([alice.synced, bob.synced])
    alice.provider.awareness.setLocalStateField('user', { name: 'Alice' })
    const aliceId = alice.doc.clientID
    await waitFor(() => bob.provider.awareness.getStates().get(aliceId)?.user?.name === 'Alice')

    // every state of alice bob sees from now on, and whether he saw her removed
    const seen: string[] = []
    bob.provider.awareness.on(
      'change',
      ({ updated, removed }: { updated: number[]; removed: number[] }) => {
        if (removed.includes(aliceId)) {
          seen.push('removed')
        }
        if (updated.includes(aliceId)) {
          seen.push(bob.provider.awareness.getStates().get(aliceId)?.user?.name)
        }
      }
    )
    const viewer = rawClient(`${wsBase}/own/1?token=${tokenFor('own/1', 'viewer')}`)
    await viewer.opened
    viewer.socket.send(awarenessMessage([[aliceId, 6, '{"user":{"name":"Mallory"}}']]))
    // a separate batch: the server must not coalesce the forgeries away
    await waitFor(() => viewer.messages.length > 0)
    viewer.socket.send(message(3, () => {}))
    await waitFor(() => viewer.messages.length > 1)
    viewer.socket.send(awarenessMessage([[aliceId, 7, 'null']]))
    // the viewer's own presence, sent after the forgeries, is the marker
    viewer.socket.send(awarenessMessage([[424242, 1, '{"user":{"name":"Viewer"}}']]))
    await waitFor(() => bob.provider.awareness.getStates().get(424242)?.user?.name === 'Viewer')
    assert.deepEqual(seen, [])
    assert.equal(bob.provider.awareness.getStates().get(aliceId)?.user?.name, 'Alice')
    assert.equal(alice.provider.awareness.getLocalState()?.user?.name, 'Alice')

    const late = connectClient(wsBase, 'own/1', tokenFor('own/1', 'late'))
    await late.synced
    await waitFor(() => late.provider.awareness.getStates().has(424242), 5000, 'the snapshot')
    assert.equal(late.provider.awareness.getStates().get(aliceId)?.user?.name, 'Alice')
  })

  test('a tab killed without a goodbye disappears for its peers at once, not after 30 s', async ({
    assert,
  }) => {
    const { wsBase } = await setupHostileApp()
    const alice = connectClient(wsBase, 'own/2', tokenFor('own/2', 'alice'))
    const bob = connectClient(wsBase, 'own/2', tokenFor('own/2', 'bob'))
    await Promise.all([alice.synced, bob.synced])
    alice.provider.awareness.setLocalStateField('user', { name: 'Alice' })
    bob.provider.awareness.setLocalStateField('user', { name: 'Bob' })
    const aliceId = alice.doc.clientID
    await waitFor(() => bob.provider.awareness.getStates().get(aliceId)?.user?.name === 'Alice')
    await waitFor(() => alice.provider.awareness.getStates().get(bob.doc.clientID)?.user)

    killTab(alice)
    // y-protocols' own timeout would take 30 s; the server's removal takes a round trip
    await waitFor(() => !bob.provider.awareness.getStates().has(aliceId), 5000, "alice's removal")
    assert.isFalse(bob.provider.awareness.getStates().has(aliceId))
  })

  test('when one of three clients leaves, the other two never see each other removed', async ({
    assert,
  }) => {
    const { wsBase } = await setupHostileApp()
    const [a, b, c] = ['a', 'b', 'c'].map((user) =>
      connectClient(wsBase, 'own/3', tokenFor('own/3', user))
    )
    await Promise.all([a.synced, b.synced, c.synced])
    for (const [client, name] of [
      [a, 'A'],
      [b, 'B'],
      [c, 'C'],
    ] as const) {
      client.provider.awareness.setLocalStateField('user', { name })
    }
    const everyone = [a, b, c].map((client) => client.doc.clientID)
    for (const client of [a, b, c]) {
      await waitFor(() => everyone.every((id) => client.provider.awareness.getStates().has(id)))
    }
    const removedSeenBy = new Map<number, number[]>([
      [a.doc.clientID, []],
      [b.doc.clientID, []],
    ])
    for (const client of [a, b]) {
      client.provider.awareness.on('change', ({ removed }: { removed: number[] }) =>
        removedSeenBy.get(client.doc.clientID)!.push(...removed)
      )
    }

    killTab(c)
    await waitFor(() => !a.provider.awareness.getStates().has(c.doc.clientID), 5000, 'C gone at A')
    await waitFor(() => !b.provider.awareness.getStates().has(c.doc.clientID), 5000, 'C gone at B')
    // markers after the removal: a removal of A or B would have arrived before them
    a.provider.awareness.setLocalStateField('marker', 1)
    b.provider.awareness.setLocalStateField('marker', 1)
    await waitFor(() => b.provider.awareness.getStates().get(a.doc.clientID)?.marker === 1)
    await waitFor(() => a.provider.awareness.getStates().get(b.doc.clientID)?.marker === 1)

    assert.deepEqual(removedSeenBy.get(a.doc.clientID), [c.doc.clientID])
    assert.deepEqual(removedSeenBy.get(b.doc.clientID), [c.doc.clientID])
  })
})
