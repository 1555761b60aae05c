import * as Y from 'yjs'
import { join } from 'node:path'
import { mkdtemp } from 'node:fs/promises'
import { WebSocket } from 'ws'
import { test } from '@japa/runner'
import { TMP_ROOT } from '../helpers.ts'
import { closeOf, connectClient, setupCollabApp, waitFor } from './helpers.ts'
import {
  APP_ENV_CANARY,
  JWT_SECRET,
  WORKER_SECRET,
  freePort,
  scaffoldPartyKitProject,
  startPartyKit,
} from './hosted_setup.ts'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { signHostedToken } from '../../src/collaboration/tokens.ts'
import type { CollaborationManager } from '../../src/collaboration/manager.ts'

/*
 * The PartyKit room that `collaboration:init --engine=partykit` scaffolds,
 * run by PartyKit's own `partykit dev` (its workerd, offline), against a
 * real Adonis app that stores the documents.
 */

/** `partykit dev` builds the project and starts workerd in each test: seconds under load */
const PARTYKIT_TEST_TIMEOUT_MS = 90_000

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

/** The status the room answers an upgrade with, or 101 when it opens */
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

test.group('Collaboration | PartyKit room under partykit dev', (group) => {
  let projectDir: string
  let files: string[]

  group.setup(async () => {
    ;({ dir: projectDir, files } = await scaffoldPartyKitProject())
  })
  group.each.timeout(PARTYKIT_TEST_TIMEOUT_MS)

  /** The app, and `partykit dev` on the port its `roomHost` names */
  async function setup(
    cleanup: (fn: () => Promise<void>) => void,
    options: { workerSecret?: string } = {}
  ) {
    const storageDir = await mkdtemp(join(TMP_ROOT, 'partykit-storage-'))
    const port = await freePort()
    const app = await setupCollabApp({
      engine: 'partykit',
      storage: new FileSystemStorage(storageDir),
      hosted: {
        roomHost: `ws://127.0.0.1:${port}`,
        jwtSecret: JWT_SECRET,
        workerSecret: WORKER_SECRET,
      },
    })
    const room = await startPartyKit(projectDir, app.url, {
      port,
      workerSecret: options.workerSecret,
    })
    cleanup(room.stop)
    return { ...app, ...room }
  }

  test('the scaffold is a complete PartyKit project', ({ assert }) => {
    assert.sameMembers(files, [
      '.env',
      'package.json',
      'partykit.json',
      'src/server.ts',
      'src/atrium.ts',
    ])
  })

  test("the app's .env stays out of the room's code: PartyKit compiles in the nearest .env", async ({
    assert,
    cleanup,
  }) => {
    const { bundle } = await setup(cleanup)
    const code = await bundle()
    assert.include(code, 'x-atrium-read-only')
    assert.notInclude(code, APP_ENV_CANARY)
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
    assert.equal(await upgradeStatus(`${room}?token=not.a.token`), 401)
    assert.equal(await upgradeStatus(room), 401)
    assert.equal(await upgradeStatus(`${room}?token=${hostedToken('notes/2')}`), 101)
  })

  test('the room loads the stored document, edits land in the app storage, and a second client loads them', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base } = await setup(cleanup)
    const seed = new Y.Doc()
    seed.getText('content').insert(0, 'stored')
    await manager.persistDocument({ docName: 'notes/1', state: Y.encodeStateAsUpdate(seed) })

    const first = connectClient(base, encodeURIComponent('notes/1'), hostedToken('notes/1'))
    await waitFor(() => first.provider.synced)
    assert.equal(first.doc.getText('content').toString(), 'stored')

    first.doc.getText('content').insert(6, ' and edited')
    await waitFor(async () => (await storedText(manager, 'notes/1')) === 'stored and edited')

    const second = connectClient(base, encodeURIComponent('notes/1'), hostedToken('notes/1'))
    await waitFor(() => second.provider.synced)
    assert.equal(second.doc.getText('content').toString(), 'stored and edited')
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

  test('the room takes a pushed state only from the app, by POST, and only a Yjs update', async ({
    assert,
    cleanup,
  }) => {
    const { manager, base, roomUrl } = await setup(cleanup)
    const client = connectClient(base, encodeURIComponent('notes/8'), hostedToken('notes/8'))
    await waitFor(() => client.provider.synced)
    const intruder = new Y.Doc()
    intruder.getText('content').insert(0, 'forged ')
    const push = (
      headers: Record<string, string>,
      body: Uint8Array | null = Y.encodeStateAsUpdate(intruder),
      method = 'POST'
    ) =>
      fetch(`${roomUrl}/${encodeURIComponent('notes/8')}`, {
        method,
        headers,
        ...(body ? { body } : {}),
      }).then(async (response) => {
        await response.body?.cancel()
        return response.status
      })
    const fromApp = { 'x-collab-worker-secret': WORKER_SECRET }

    assert.equal(await push({}), 404)
    assert.equal(await push({ 'x-collab-worker-secret': 'not-the-worker-secret' }), 404)
    assert.equal(await push({ 'x-collab-worker-secret': JWT_SECRET }), 404)
    assert.equal(await push(fromApp, null, 'GET'), 404)
    assert.equal(await push(fromApp, null), 413)
    assert.equal(await push(fromApp, new Uint8Array(0)), 413)
    assert.equal(await push(fromApp, new TextEncoder().encode('not a yjs update')), 400)

    // the marker goes through the room after the refused pushes: once it is stored, they would be
    client.doc.getText('content').insert(0, 'marker')
    await waitFor(async () => (await storedText(manager, 'notes/8')) === 'marker')
    assert.equal(client.doc.getText('content').toString(), 'marker')
  })

  test('the app refuses a room with the wrong worker secret, and the room does not open empty', async ({
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
})
