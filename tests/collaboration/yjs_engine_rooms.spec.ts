import { test } from '@japa/runner'
import * as Y from 'yjs'
import { awarenessFrame } from '../../src/collaboration/engines/yjs/awareness.ts'
import { onCollaborationError } from '../../src/collaboration/observability.ts'
import {
  Client,
  RecordingStorage,
  startEngine,
  stateWith,
  waitFor,
  type EngineHarness,
} from './yjs_harness.ts'

/**
 * Database-free: the Yjs engine's presence relay over real `ws` clients, and
 * its document API (load, seed, state, restore, unload) without sockets, on
 * the harness of tests/collaboration/yjs_harness.ts.
 */
test.group('Yjs engine over sockets: awareness', (group) => {
  // a mutant that drops a resolve fails in seconds, not at the runner's 30 s
  group.each.timeout(6000)
  let harness: EngineHarness
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => harness?.close())

  test('presence is relayed, sent to late joiners, answered on query and removed on leave', async ({
    assert,
  }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    a.send(awarenessFrame([[11, 1, '{"name":"ada"}']]))
    const relayed = await b.next('awareness')
    assert.deepEqual(relayed.entries, [{ clientId: 11, clock: 1, state: '{"name":"ada"}' }])
    const late = await Client.joined(`${harness.url}/doc`)
    const snapshot = await late.next('awareness')
    assert.deepEqual(snapshot.entries, relayed.entries)
    // the sender is still served: its own sync step 1 is answered
    a.sendStep1()
    await a.next('step2')
    // an awareness query (type 3) is answered with the snapshot
    late.send(new Uint8Array([3]))
    const answer = await late.next('awareness', 2)
    assert.deepEqual(answer.entries, relayed.entries)
    await a.close()
    const removal = await b.next('awareness', 2)
    assert.deepEqual(removal.entries, [{ clientId: 11, clock: 2, state: 'null' }])
  })

  test('a state past maxAwarenessStateBytes closes with 4413', async ({ assert }) => {
    harness = await startEngine({ limits: { maxAwarenessStateBytes: 64 } })
    const a = await Client.joined(`${harness.url}/doc`)
    a.send(awarenessFrame([[1, 1, JSON.stringify({ name: 'x'.repeat(100) })]]))
    assert.equal(await a.closed, 4413)
    assert.equal(a.closeReason, 'awareness over its limits')
  })

  test('more client ids than maxAwarenessClients closes with 4413, after relaying those within', async ({
    assert,
  }) => {
    harness = await startEngine({ limits: { maxAwarenessClients: 2 } })
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    a.send(
      awarenessFrame([
        [1, 1, '{}'],
        [2, 1, '{}'],
        [3, 1, '{}'],
      ])
    )
    assert.equal(await a.closed, 4413)
    const seen = new Set<number>()
    await waitFor(() => {
      for (const message of b.of('awareness')) {
        for (const entry of message.entries) if (entry.state !== 'null') seen.add(entry.clientId)
      }
      return seen.size === 2
    })
    assert.sameMembers([...seen], [1, 2])
  })
})

test.group('Yjs engine without sockets', (group) => {
  // a mutant that drops a resolve fails in seconds, not at the runner's 30 s
  group.each.timeout(6000)
  let harness: EngineHarness
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => harness?.close())

  test('a document is loaded once however many ask at once', async ({ assert }) => {
    harness = await startEngine()
    const rooms = await Promise.all([1, 2, 3].map(() => harness.engine.acquire('doc')))
    assert.strictEqual(rooms[0], rooms[1])
    assert.strictEqual(rooms[1], rooms[2])
    assert.deepEqual(harness.storage.loads, ['doc'])
  })

  test('the state: live when open, stored when not, empty when never stored', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    await storage.saveDocument('stored', stateWith('on disk'))
    await storage.appendUpdate('stored', stateWith('+log'))
    harness = await startEngine({ storage })
    const textOf = (state: Uint8Array) => harness.engine.textOf(state)
    assert.equal(textOf(await harness.engine.getDocumentState('never')), '')
    assert.deepEqual(
      await harness.engine.getDocumentState('never'),
      Y.encodeStateAsUpdate(new Y.Doc())
    )
    const stored = textOf(await harness.engine.getDocumentState('stored'))
    assert.include(stored, 'on disk')
    assert.include(stored, '+log')
    assert.isFalse(harness.engine.hasLiveDocument('stored'))
    await harness.engine.applyState('live', stateWith('applied'))
    assert.equal(textOf(await harness.engine.getDocumentState('live')), 'applied')
    assert.equal(await storage.storedText('live'), 'applied')
  })

  test('an empty stored state with a log loads the log', async ({ assert }) => {
    const storage = new RecordingStorage()
    await storage.appendUpdate('doc', stateWith('log only'))
    harness = await startEngine({ storage })
    // not open: read from storage, the empty state left out of the merge
    assert.equal(harness.engine.textOf(await harness.engine.getDocumentState('doc')), 'log only')
    const room = await harness.engine.acquire('doc')
    assert.equal(room.doc.getText('t').toString(), 'log only')
    assert.equal(harness.engine.textOf(await harness.engine.getDocumentState('other')), '')
  })

  test('a loaded document is not written back until it changes', async ({ assert }) => {
    const storage = new RecordingStorage()
    await storage.saveDocument('doc', stateWith('as stored'))
    storage.calls = []
    harness = await startEngine({ storage })
    const room = await harness.engine.acquire('doc')
    assert.isFalse(room.storage.dirty)
    await harness.engine.flushAll()
    assert.lengthOf(storage.calls, 0)
  })

  test('a seed is stored once before anyone is served; an empty or failing seed stores nothing', async ({
    assert,
  }) => {
    const seeded = new Y.Doc()
    seeded.getText('t').insert(0, 'from a doc')
    const seeds: Record<string, () => Promise<Uint8Array | Y.Doc | null>> = {
      bytes: async () => stateWith('from bytes'),
      doc: async () => seeded,
      empty: async () => new Uint8Array(0),
      none: async () => null,
      failing: async () => {
        throw new Error('seed failed')
      },
    }
    const reported: string[] = []
    const stop = onCollaborationError((event) =>
      reported.push(`${event.scope} ${event.operation} ${event.docName}`)
    )
    harness = await startEngine({ seed: (name) => seeds[name]() })
    try {
      for (const name of Object.keys(seeds)) await harness.engine.acquire(name)
      assert.equal(await harness.storage.storedText('bytes'), 'from bytes')
      assert.equal(await harness.storage.storedText('doc'), 'from a doc')
      assert.deepEqual(
        harness.storage.calls.map((call) => `${call.operation} ${call.docName}`),
        ['saveDocument bytes', 'saveDocument doc']
      )
      assert.deepEqual(reported, ['storage load failing'])
      const room = await harness.engine.acquire('bytes')
      assert.isFalse(room.storage.dirty, 'the seed is not written again')
    } finally {
      stop()
    }
  })

  test('a seed that cannot be stored is still served, and reported', async ({ assert }) => {
    const storage = new RecordingStorage()
    storage.failures = 1
    const reported: string[] = []
    const stop = onCollaborationError((event) =>
      reported.push(`${event.scope} ${event.operation} ${event.docName}`)
    )
    harness = await startEngine({ storage, seed: async () => stateWith('seed') })
    try {
      const room = await harness.engine.acquire('doc')
      assert.equal(room.doc.getText('t').toString(), 'seed')
      assert.deepEqual(reported, ['storage saveDocument doc'])
    } finally {
      stop()
    }
  })

  test('withLiveDocument runs on an open document only, and its edits are stored', async ({
    assert,
  }) => {
    harness = await startEngine()
    assert.deepEqual(await harness.engine.withLiveDocument('doc', () => 1), {
      live: false,
      reason: 'not-loaded',
    })
    const client = await Client.joined(`${harness.url}/doc`)
    const result = await harness.engine.withLiveDocument('doc', (doc: Y.Doc) => {
      doc.getText('t').insert(0, 'server')
      return 'done'
    })
    assert.deepEqual(result, { live: true, value: 'done' })
    await waitFor(() => client.text() === 'server')
    await harness.engine.flushAll()
    assert.equal(await harness.storage.storedText('doc'), 'server')
  })

  test('withLiveDocument holds the room while it runs, though its last client leaves', async ({
    assert,
  }) => {
    harness = await startEngine()
    const client = await Client.joined(`${harness.url}/doc`)
    const result = await harness.engine.withLiveDocument('doc', async (doc: Y.Doc) => {
      client.close()
      await waitFor(() => harness.engine.connectionCount('doc') === 0)
      // the client is gone, the operation is not: the room stays
      assert.isTrue(harness.engine.hasLiveDocument('doc'))
      doc.getText('t').insert(0, 'kept')
      return harness.engine.hasLiveDocument('doc')
    })
    assert.deepEqual(result, { live: true, value: true })
    // the operation ended: the room is stored and unloaded
    await waitFor(() => !harness.engine.hasLiveDocument('doc'))
    assert.equal(await harness.storage.storedText('doc'), 'kept')
  })

  test("a document that cannot be loaded rejects with the storage's error; the next call loads it", async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    storage.failLoads = 1
    harness = await startEngine({ storage })
    await assert.rejects(() => harness.engine.acquire('doc'), /storage down/)
    const room = await harness.engine.acquire('doc')
    assert.isTrue(harness.engine.hasLiveDocument('doc'))
    harness.engine.release(room)
    await waitFor(() => !harness.engine.hasLiveDocument('doc'))
  })

  test('replaceContent writes a version back as new changes, stored and broadcast', async ({
    assert,
  }) => {
    harness = await startEngine()
    const client = await Client.joined(`${harness.url}/doc`)
    client.type('current')
    const room = await harness.engine.acquire('doc')
    await waitFor(() => room.doc.getText('t').toString() === 'current')
    await harness.engine.replaceContent('doc', stateWith('restored'))
    await waitFor(() => client.text() === 'restored')
    assert.equal(await harness.storage.storedText('doc'), 'restored')
    assert.deepEqual(harness.engine.diff(stateWith('abc'), stateWith('abXYc')), {
      added: 2,
      removed: 0,
    })
  })

  test('a room used by an operation is unloaded once the operation ends', async ({ assert }) => {
    harness = await startEngine()
    await harness.engine.applyState('doc', stateWith('x'))
    await waitFor(() => !harness.engine.hasLiveDocument('doc'))
    assert.equal(await harness.storage.storedText('doc'), 'x')
  })
})
