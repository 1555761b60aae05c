/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import * as Y from 'yjs'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { onCollaborationError } from '../../src/collaboration/observability.ts'
import { onDiagnostic } from '../../src/shared/diagnostics.ts'
import { CLOSE_CODES } from '../../src/collaboration/manager.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import { createDatabase } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import {
  allow,
  closeOf,
  connectClient,
  setupCollabApp,
  sleep,
  storedText,
  tokenFor,
  waitFor,
  withoutLog,
} from './helpers.ts'
import { upgradeStatus } from '../hostile/collaboration_helpers.ts'

test.group('Collaboration server (y-websocket clients)', () => {
  test('edits propagate between clients and persist through the debounce', async () => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase } = await setupCollabApp({ storage: withoutLog(storage), debounce: 150 })
    const alice = connectClient(wsBase, 'notes/1')
    const bob = connectClient(wsBase, 'notes/1', tokenFor('notes/1', 'u2'))
    await Promise.all([alice.synced, bob.synced])

    alice.text.insert(0, 'hello from alice')
    await waitFor(() => bob.text.toString() === 'hello from alice', 5000, 'bob to see the edit')
    bob.text.insert(bob.text.length, ' and bob')
    await waitFor(() => alice.text.toString() === 'hello from alice and bob')

    await waitFor(async () => (await storedText(storage, 'notes/1')) === 'hello from alice and bob')
  })

  test('an edit reaches the relational update log long before the debounce compacts it', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'collaboration')
    const { wsBase, manager, close } = await setupCollabApp(
      { storage: relationalStorage(), debounce: 60_000 },
      { database: true }
    )
    const storage = manager.config.storage
    const client = connectClient(wsBase, 'notes/sql')
    await client.synced
    client.text.insert(0, 'logged row')
    await waitFor(async () => (await storedText(storage, 'notes/sql')) === 'logged row')
    const stored = await storage.loadDocument('notes/sql')
    assert.equal(stored!.state.byteLength, 0)
    assert.isAbove(stored!.updates!.length, 0)

    client.provider.disconnect()
    // a read between the compaction's commit and the log's removal may see nothing: wait on
    await waitFor(async () => (await storage.loadDocument('notes/sql'))?.updates?.length === 0)
    assert.equal(await storedText(storage, 'notes/sql'), 'logged row')
    await close()
    await dropStubTables(db, 'collaboration')
  })

  test('stopping the app with clients connected closes their sockets and saves pending edits', async ({
    assert,
  }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase, close, manager } = await setupCollabApp({
      storage: withoutLog(storage),
      debounce: 60_000,
    })
    const client = connectClient(wsBase, 'notes/stop')
    await client.synced
    client.text.insert(0, 'typed before the stop')
    // The edit reaches the server; the 60 s debounce keeps it unsaved
    await waitFor(
      async () =>
        (await manager.getDocumentText({ docName: 'notes/stop' })) === 'typed before the stop'
    )
    assert.isNull(await storedText(storage, 'notes/stop'))
    const closed = new Promise<number>((resolve) =>
      client.provider.ws!.addEventListener('close', (event: any) => resolve(event.code))
    )
    // Adonis closes the HTTP server before providers shut down; this must still end
    await close()
    assert.equal(await closed, 1001)
    assert.equal(await storedText(storage, 'notes/stop'), 'typed before the stop')
  })

  test('a token for document A is refused on document B, over HTTP before any upgrade', async ({
    assert,
  }) => {
    const { wsBase } = await setupCollabApp()
    assert.equal(await upgradeStatus(`${wsBase}/notes/b?token=${tokenFor('notes/a')}`), 401)
    assert.equal(await upgradeStatus(`${wsBase}/notes/a?token=${tokenFor('notes/a')}`), 101)
  })

  test('an expired, tampered or missing token is refused with 401', async ({ assert }) => {
    const { wsBase } = await setupCollabApp()
    const expired = tokenFor('notes/1', 'u1', { ttl: -10 })
    assert.equal(await upgradeStatus(`${wsBase}/notes/1?token=${expired}`), 401)

    const valid = tokenFor('notes/1')
    const [header, payload, signature] = valid.split('.')
    const forged = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload, 'base64url').toString()),
        userId: 'admin',
      })
    ).toString('base64url')
    assert.equal(
      await upgradeStatus(`${wsBase}/notes/1?token=${header}.${forged}.${signature}`),
      401
    )
    const wrongSecret = tokenFor('notes/1', 'u1', { secret: 'another-secret' })
    assert.equal(await upgradeStatus(`${wsBase}/notes/1?token=${wrongSecret}`), 401)
    assert.equal(await upgradeStatus(`${wsBase}/notes/1`), 401)
  })

  test('a denial closes with 4003 and a throwing rule with the retryable 4503', async ({
    assert,
  }) => {
    const reported: string[] = []
    const off = onCollaborationError((event) => reported.push(`${event.scope}:${event.docName}`))
    const { wsBase } = await setupCollabApp({
      authorize: (_ctx, docName) => {
        if (docName === 'broken/1') {
          throw new Error('rules database down')
        }
        return { canRead: docName !== 'secret/1', canWrite: true, canComment: true }
      },
    })
    try {
      assert.equal(
        (await closeOf(`${wsBase}/secret/1?token=${tokenFor('secret/1')}`)).code,
        CLOSE_CODES.forbidden
      )
      const failed = await closeOf(`${wsBase}/broken/1?token=${tokenFor('broken/1')}`)
      assert.equal(failed.code, CLOSE_CODES.authorizationFailed)
      assert.include(failed.reason, 'retry')
      assert.deepEqual(reported, ['authorize:broken/1'])
    } finally {
      off()
    }
  })

  test('connections and failures are published on the atrium:collaboration channels', async ({
    assert,
    cleanup,
  }) => {
    const seen: string[] = []
    for (const event of ['connection.opened', 'connection.closed', 'authorize.failed']) {
      cleanup(
        onDiagnostic<Record<string, unknown>>('collaboration', event, ({ payload }) => {
          seen.push(`${event} ${payload.docName} ${payload.userId ?? payload.message}`)
        })
      )
    }
    const { wsBase } = await setupCollabApp({
      authorize: (_ctx, docName) => {
        if (docName === 'broken/2') throw new Error('rules database down')
        return allow
      },
    })
    const client = connectClient(wsBase, 'notes/bus', tokenFor('notes/bus', 'u7'))
    await client.synced
    client.provider.destroy()
    await waitFor(() => seen.length === 2, 5000, 'the close to be published')
    await closeOf(`${wsBase}/broken/2?token=${tokenFor('broken/2')}`)
    assert.deepEqual(seen, [
      'connection.opened notes/bus u7',
      'connection.closed notes/bus u7',
      'authorize.failed broken/2 rules database down',
    ])
  })

  test('with no matching rule the handshake is denied', async ({ assert }) => {
    const { wsBase } = await setupCollabApp({
      authorize: undefined,
      documents: { 'open/:id': { authorize: () => allow } },
    })
    assert.equal(
      (await closeOf(`${wsBase}/closed/1?token=${tokenFor('closed/1')}`)).code,
      CLOSE_CODES.forbidden
    )
    const client = connectClient(wsBase, 'open/1')
    await client.synced
  })

  test("a read-only client's edits never reach peers or storage", async ({ assert }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase, manager } = await setupCollabApp({
      storage,
      debounce: 50,
      authorize: (ctx: any) => ({
        canRead: true,
        canWrite: ctx.connection?.userId !== 'reader',
        canComment: true,
      }),
    })
    const writer = connectClient(wsBase, 'doc/ro')
    const reader = connectClient(wsBase, 'doc/ro', tokenFor('doc/ro', 'reader'))
    await Promise.all([writer.synced, reader.synced])

    writer.text.insert(0, 'legit')
    await waitFor(() => reader.text.toString().includes('legit'))
    reader.text.insert(0, 'vandalism')
    // the marker travels after the update on the same socket: once the writer
    // sees it, the server has handled (and dropped) the update before it
    reader.provider.awareness.setLocalStateField('marker', 'after-vandalism')
    const readerId = reader.doc.clientID
    await waitFor(
      () => writer.provider.awareness.getStates().get(readerId)?.marker === 'after-vandalism',
      5000,
      'the marker sent after the dropped update'
    )
    await manager.flush()

    assert.equal(writer.text.toString(), 'legit')
    assert.equal(await storedText(storage, 'doc/ro'), 'legit')
    assert.equal(await manager.getDocumentText({ docName: 'doc/ro' }), 'legit')
  })

  test('20 concurrent first connections seed a document once', async ({ assert }) => {
    const storage = new InMemoryCollaborationStorage()
    let loads = 0
    const { wsBase } = await setupCollabApp({
      storage,
      documents: {
        'seeded/:id': {
          load: async ({ params }: { params: Record<string, string> }) => {
            loads++
            await new Promise((resolve) => setTimeout(resolve, 50))
            const doc = new Y.Doc()
            doc.getText('content').insert(0, `seed of ${params.id}`)
            return Y.encodeStateAsUpdate(doc)
          },
        },
      },
    })
    const clients = Array.from({ length: 20 }, (_, index) =>
      connectClient(wsBase, 'seeded/x', tokenFor('seeded/x', `u${index}`))
    )
    await waitFor(
      () => clients.every((client) => client.provider.synced),
      8000,
      `sync ${clients.filter((c) => c.provider.synced).length}`
    )
    await waitFor(
      () => clients.every((client) => client.text.toString() === 'seed of x'),
      5000,
      'text'
    )
    assert.equal(loads, 1)
    assert.equal(await storedText(storage, 'seeded/x'), 'seed of x')
  })

  test('a throwing load is reported and the document opens empty', async ({ assert }) => {
    const reported: string[] = []
    const off = onCollaborationError((event) => reported.push(event.operation))
    try {
      const { wsBase } = await setupCollabApp({
        documents: { 'bad/:id': { load: () => Promise.reject(new Error('seed failed')) } },
      })
      const client = connectClient(wsBase, 'bad/1')
      await client.synced
      assert.equal(client.text.toString(), '')
      assert.deepEqual(reported, ['load'])
    } finally {
      off()
    }
  })

  test('a stop during a pending debounce loses nothing', async ({ assert }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase, close, manager } = await setupCollabApp({
      storage: withoutLog(storage),
      debounce: 60_000,
    })
    const client = connectClient(wsBase, 'notes/stop')
    await client.synced
    client.text.insert(0, 'unsaved work')
    // the server has the edit; the 60 s debounce keeps it unsaved
    await waitFor(
      async () => (await manager.getDocumentText({ docName: 'notes/stop' })) === 'unsaved work'
    )
    assert.isNull(await storedText(storage, 'notes/stop'))
    client.provider.disconnect()
    await close()
    assert.equal(await storedText(storage, 'notes/stop'), 'unsaved work')
  })

  test('a document edited without pause is still saved once maxWait passes', async () => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase } = await setupCollabApp({
      storage: withoutLog(storage),
      debounce: 400,
      maxWait: 600,
    })
    const client = connectClient(wsBase, 'notes/busy')
    await client.synced
    let typing = true
    const typist = (async () => {
      while (typing) {
        client.text.insert(client.text.length, 'x')
        await sleep(50)
      }
    })()
    try {
      // the document never goes quiet for 400 ms, yet storage receives it
      await waitFor(async () => ((await storedText(storage, 'notes/busy')) ?? '').length > 0, 5000)
    } finally {
      typing = false
      await typist
    }
  })

  test('a document is unloaded from memory after its last client leaves', async ({ assert }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase, manager } = await setupCollabApp({ storage })
    const client = connectClient(wsBase, 'notes/idle')
    await client.synced
    client.text.insert(0, 'kept')
    await waitFor(() => manager.openDocuments().includes('notes/idle'))
    client.provider.disconnect()
    await waitFor(() => !manager.openDocuments().includes('notes/idle'), 5000, 'the unload')
    assert.equal(await storedText(storage, 'notes/idle'), 'kept')
    assert.isFalse(await manager.hasLiveDocument({ docName: 'notes/idle' }))
  })

  test('awareness is relayed to peers and removed when a client disconnects', async ({
    assert,
  }) => {
    const { wsBase } = await setupCollabApp()
    const alice = connectClient(wsBase, 'notes/aw')
    const bob = connectClient(wsBase, 'notes/aw', tokenFor('notes/aw', 'u2'))
    await Promise.all([alice.synced, bob.synced])
    alice.provider.awareness.setLocalStateField('user', { name: 'Alice' })
    const aliceId = alice.doc.clientID
    await waitFor(() => bob.provider.awareness.getStates().get(aliceId)?.user?.name === 'Alice')
    alice.provider.disconnect()
    await waitFor(() => !bob.provider.awareness.getStates().has(aliceId), 5000, 'awareness removal')
    assert.isFalse(bob.provider.awareness.getStates().has(aliceId))
  })
})
