import * as Y from 'yjs'
import { join } from 'node:path'
import { mkdtemp } from 'node:fs/promises'
import { WebSocket } from 'ws'
import { test } from '@japa/runner'
import { TMP_ROOT } from '../helpers.ts'
import { closeOf, connectClient, setupCollabApp, waitFor } from './helpers.ts'
import {
  JWT_SECRET,
  WORKER_SECRET,
  bundleScaffoldedWorker,
  freePort,
  startWorker,
} from './hosted_setup.ts'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { issueToken, signHostedToken } from '../../src/collaboration/tokens.ts'
import { normalizeConfig } from '../../src/collaboration/define_config.ts'
import type { CollaborationManager } from '../../src/collaboration/manager.ts'

/*
 * The PartyServer room worker that `collaboration:init --engine=partyserver`
 * scaffolds, bundled as wrangler would and run in workerd through Miniflare,
 * against a real Adonis app that stores the documents.
 */

function hostedToken(docName: string, options: { readOnly?: boolean; secret?: string } = {}) {
  return signHostedToken(
    { userId: 'u1', docName, ...(options.readOnly ? { readOnly: true as const } : {}) },
    options.secret ?? JWT_SECRET
  )
}

function textOf(state: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  return doc.getText('content').toString()
}

async function storedText(manager: CollaborationManager, docName: string) {
  return textOf(await manager.getDocumentState({ docName }))
}

/** The status the worker answers an upgrade with, or 101 when it opens */
function upgradeStatus(url: string) {
  return new Promise<number>((resolve) => {
    const socket = new WebSocket(url)
    socket.on('error', () => {})
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0)
      socket.terminate()
    })
    socket.on('open', () => {
      resolve(101)
      socket.close()
    })
  })
}

test.group('Collaboration | PartyServer room worker under workerd', (group) => {
  let script: string
  let files: string[]

  group.setup(async () => {
    ;({ script, files } = await bundleScaffoldedWorker())
  })

  /** The app, and the worker on the port its `roomHost` names (`startRoom: false` leaves it closed) */
  async function setup(
    cleanup: (fn: () => Promise<void>) => void,
    options: { workerSecret?: string; startRoom?: boolean } = {}
  ) {
    const storageDir = await mkdtemp(join(TMP_ROOT, 'hosted-storage-'))
    const port = await freePort()
    const app = await setupCollabApp({
      engine: 'partyserver',
      storage: new FileSystemStorage(storageDir),
      hosted: {
        roomHost: `ws://127.0.0.1:${port}`,
        jwtSecret: JWT_SECRET,
        workerSecret: WORKER_SECRET,
      },
    })
    if (options.startRoom === false) {
      return { ...app, base: '', roomUrl: '' }
    }
    const worker = await startWorker(script, app.url, { workerSecret: options.workerSecret, port })
    cleanup(() => worker.mf.dispose())
    return { ...app, ...worker, roomUrl: `http://127.0.0.1:${port}/parties/main` }
  }

  test('the scaffold is a complete worker project', ({ assert }) => {
    assert.sameMembers(files, [
      'package.json',
      'tsconfig.json',
      'wrangler.jsonc',
      'src/server.ts',
      'src/atrium.ts',
    ])
  })

  test('the room loads the stored document, and edits land in the app storage', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base } = await setup(cleanup)
    const seed = new Y.Doc()
    seed.getText('content').insert(0, 'stored')
    await manager.persistDocument({ docName: 'notes/1', state: Y.encodeStateAsUpdate(seed) })

    const client = connectClient(base, encodeURIComponent('notes/1'), hostedToken('notes/1'))
    await waitFor(() => client.provider.synced)
    assert.equal(client.doc.getText('content').toString(), 'stored')

    client.doc.getText('content').insert(6, ' and edited')
    await waitFor(async () => (await storedText(manager, 'notes/1')) === 'stored and edited')
  })

  test('a token that is forged, expired or for another document is refused before the room', async ({
    assert,
    cleanup,
  }) => {
    const { base } = await setup(cleanup)
    const room = `${base}/${encodeURIComponent('notes/2')}`
    const expired = signHostedToken(
      { userId: 'u1', docName: 'notes/2', exp: Math.floor(Date.now() / 1000) - 1 },
      JWT_SECRET
    )
    assert.equal(
      await upgradeStatus(`${room}?token=${hostedToken('notes/2', { secret: 'x' })}`),
      401
    )
    assert.equal(await upgradeStatus(`${room}?token=${expired}`), 401)
    assert.equal(await upgradeStatus(`${room}?token=${hostedToken('notes/3')}`), 401)
    assert.equal(await upgradeStatus(room), 401)
    assert.equal(await upgradeStatus(`${room}?token=${hostedToken('notes/2')}`), 101)
  })

  test('a read-only token edits nothing, even with a forged read-only header: its changes reach neither peers nor the app', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base } = await setup(cleanup)
    const room = encodeURIComponent('notes/4')
    const writer = connectClient(base, room, hostedToken('notes/4'))
    // the header the worker sets once it verified the token: a client's own is overwritten
    const reader = connectClient(base, room, hostedToken('notes/4', { readOnly: true }), {
      headers: { 'x-atrium-read-only': 'false' },
    })
    await waitFor(() => writer.provider.synced && reader.provider.synced)

    reader.doc.getText('content').insert(0, 'forbidden ')
    // The marker is sent after the refused edit on the same room: once it
    // arrives everywhere, the refused edit would have too
    writer.doc.getText('content').insert(0, 'marker')
    await waitFor(async () => {
      const stored = await storedText(manager, 'notes/4')
      return stored.includes('marker')
    })
    await waitFor(() => reader.doc.getText('content').toString().includes('marker'))
    assert.equal(await storedText(manager, 'notes/4'), 'marker')
    assert.equal(writer.doc.getText('content').toString(), 'marker')
  })

  test('a restored version reaches the open editors through the room', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base } = await setup(cleanup)
    const client = connectClient(base, encodeURIComponent('notes/7'), hostedToken('notes/7'))
    await waitFor(() => client.provider.synced)
    client.doc.getText('content').insert(0, 'first draft')
    await waitFor(async () => (await storedText(manager, 'notes/7')) === 'first draft')
    const version = await manager.createVersion({ docName: 'notes/7', createdBy: 'u1' })
    client.doc.getText('content').delete(0, 5)
    client.doc.getText('content').insert(0, 'second')
    await waitFor(async () => (await storedText(manager, 'notes/7')) === 'second draft')

    await manager.restoreVersion({ docName: 'notes/7', versionId: version.id, restoredBy: 'u1' })
    await waitFor(() => client.doc.getText('content').toString() === 'first draft')
    await waitFor(async () => (await storedText(manager, 'notes/7')) === 'first draft')
    assert.equal(client.doc.getText('content').toString(), 'first draft')
  })

  test('the room takes a pushed state only from the app: with the worker secret, by POST', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base, roomUrl } = await setup(cleanup)
    const client = connectClient(base, encodeURIComponent('notes/8'), hostedToken('notes/8'))
    await waitFor(() => client.provider.synced)
    const intruder = new Y.Doc()
    intruder.getText('content').insert(0, 'forged ')
    const push = (headers: Record<string, string>, method = 'POST') =>
      fetch(`${roomUrl}/${encodeURIComponent('notes/8')}`, {
        method,
        headers,
        ...(method === 'POST' ? { body: Y.encodeStateAsUpdate(intruder) } : {}),
      }).then(async (response) => {
        await response.body?.cancel()
        return response.status
      })

    assert.equal(await push({}), 404)
    assert.equal(await push({ 'x-collab-worker-secret': 'not-the-worker-secret' }), 404)
    assert.equal(await push({ 'x-collab-worker-secret': JWT_SECRET }), 404)
    assert.equal(await push({ 'x-collab-worker-secret': WORKER_SECRET }, 'GET'), 404)
    const empty = await fetch(`${roomUrl}/${encodeURIComponent('notes/8')}`, {
      method: 'POST',
      headers: { 'x-collab-worker-secret': WORKER_SECRET },
    })
    assert.equal(empty.status, 413)
    await empty.body?.cancel()

    // the marker goes through the room after the refused pushes: once it is stored, they would be
    client.doc.getText('content').insert(0, 'marker')
    await waitFor(async () => (await storedText(manager, 'notes/8')) === 'marker')
    assert.equal(client.doc.getText('content').toString(), 'marker')
  })

  test('a restore whose room cannot be reached answers E_COLLAB_ROOM and keeps the restored state', async ({
    assert,
    cleanup,
  }) => {
    const { manager } = await setup(cleanup, { startRoom: false })
    const seed = new Y.Doc()
    seed.getText('content').insert(0, 'kept')
    await manager.persistDocument({ docName: 'notes/9', state: Y.encodeStateAsUpdate(seed) })
    const version = await manager.createVersion({ docName: 'notes/9', createdBy: 'u1' })
    seed.getText('content').insert(4, ' and changed')
    await manager.persistDocument({ docName: 'notes/9', state: Y.encodeStateAsUpdate(seed) })

    const error = await manager
      .restoreVersion({ docName: 'notes/9', versionId: version.id, restoredBy: 'u1' })
      .catch((caught) => caught)
    assert.equal(error.code, 'E_COLLAB_ROOM')
    assert.equal(error.status, 502)
    assert.include(error.message, 'shows when the room next loads')
    assert.equal(await storedText(manager, 'notes/9'), 'kept')
  })

  test('the app refuses a worker with the wrong secret, and the room does not open empty', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base } = await setup(cleanup, { workerSecret: 'not-the-worker-secret' })
    const seed = new Y.Doc()
    seed.getText('content').insert(0, 'kept')
    await manager.persistDocument({ docName: 'notes/5', state: Y.encodeStateAsUpdate(seed) })

    const closed = await closeOf(
      `${base}/${encodeURIComponent('notes/5')}?token=${hostedToken('notes/5')}`
    )
    assert.equal(closed.code, 1011)
    assert.equal(await storedText(manager, 'notes/5'), 'kept')
  })

  test('the app signs read-only hosted tokens for users who may not write, and points them at the worker', async ({
    assert,
  }) => {
    const config = normalizeConfig({
      engine: 'partyserver',
      hosted: { roomHost: 'rooms.example.com', jwtSecret: JWT_SECRET },
    })
    const claimsOf = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())
    const reader = await issueToken(config, { id: 7 }, 'notes/6', {
      canRead: true,
      canWrite: false,
      canComment: false,
    })
    const writer = await issueToken(config, { id: 8 }, 'notes/6', {
      canRead: true,
      canWrite: true,
      canComment: true,
    })
    assert.isTrue(claimsOf(reader.token).readOnly)
    assert.notProperty(claimsOf(writer.token), 'readOnly')
    assert.equal(reader.wsUrl, 'wss://rooms.example.com/parties/main/notes%2F6')
    assert.equal(reader.engine, 'partyserver')
  })
})
