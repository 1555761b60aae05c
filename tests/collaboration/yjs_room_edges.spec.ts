import { test } from '@japa/runner'
import * as Y from 'yjs'
import * as decoding from 'lib0/decoding'
import { awarenessFrame, awarenessUpdate } from '../../src/collaboration/engines/yjs/awareness.ts'
import {
  REMOTE_ORIGIN,
  type Connection,
  type YjsRoom,
} from '../../src/collaboration/engines/yjs/room.ts'
import { onCollaborationError } from '../../src/collaboration/observability.ts'
import {
  Client,
  RecordingStorage,
  startEngine,
  stateWith,
  syncFrame,
  waitFor,
  type EngineHarness,
} from './yjs_harness.ts'

/**
 * Database-free: what a room does with updates and presence that do not come
 * from its own sockets (other instances, handshake buffers), and its batching
 * driven through `receive` with connections that have no socket.
 */
test.group('Yjs room edges', (group) => {
  let harness: EngineHarness
  // a mutant that drops a resolve fails in seconds, not at the runner's 30 s
  group.each.timeout(6000)
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => harness?.close())

  test('an update another instance applied is broadcast and compacted, never appended', async ({
    assert,
  }) => {
    harness = await startEngine({ debounce: 10 })
    harness.host.appendInterval = 1
    const client = await Client.joined(`${harness.url}/doc`)
    const room = await harness.engine.acquire('doc')
    Y.applyUpdate(room.doc, stateWith('remote'), REMOTE_ORIGIN)
    await waitFor(() => client.text() === 'remote')
    await waitFor(() => harness.storage.calls.length >= 1)
    assert.deepEqual(
      harness.storage.calls.map((call) => call.operation),
      ['compactDocument']
    )
    // a local change is appended: the log was open all along
    client.type('!')
    await waitFor(() => harness.storage.calls.some((call) => call.operation === 'appendUpdate'))
  })

  test('presence of other instances is relayed, and expired when they go silent', async ({
    assert,
  }) => {
    harness = await startEngine()
    const client = await Client.joined(`${harness.url}/doc`)
    const room = await harness.engine.acquire('doc')
    let broadcasts = 0
    room.onAwarenessBroadcast = () => broadcasts++
    room.applyRemoteAwareness(awarenessUpdate([[40, 3, '{"far":true}']]))
    const relayed = await client.next('awareness')
    assert.deepEqual(relayed.entries, [{ clientId: 40, clock: 3, state: '{"far":true}' }])
    assert.equal(broadcasts, 1)
    // still fresh: nothing expires
    room.expireRemoteAwareness(60_000)
    assert.equal(room.awareness.size, 1)
    room.expireRemoteAwareness(-1)
    const expired = await client.next('awareness', 2)
    assert.deepEqual(expired.entries, [{ clientId: 40, clock: 4, state: 'null' }])
    assert.equal(room.awareness.size, 0)
  })

  test('a remote presence update that changes nothing schedules no broadcast', async ({
    assert,
  }) => {
    harness = await startEngine()
    const room = await harness.engine.acquire('doc')
    let broadcasts = 0
    room.onAwarenessBroadcast = () => broadcasts++
    room.applyRemoteAwareness(awarenessUpdate([[40, 3, 'null']]))
    room.expireRemoteAwareness(-1)
    // a broadcast scheduled by either would run at the end of this turn
    await new Promise((resolve) => setImmediate(resolve))
    // a marker through the same window: a broadcast of a real change
    room.applyRemoteAwareness(awarenessUpdate([[41, 1, '{}']]))
    await waitFor(() => broadcasts > 0)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(broadcasts, 1)
  })

  test('handshake messages after a malformed one are dropped; the session is released at join', async ({
    assert,
  }) => {
    let connections = 0
    harness = await startEngine({
      buffered: () =>
        connections++ === 0
          ? [Buffer.from([0, 9, 0]), Buffer.from(syncFrame(stateWith('after')))]
          : [],
    })
    const client = await Client.joined(`${harness.url}/doc`)
    assert.equal(await client.closed, 4400)
    const watcher = await Client.joined(`${harness.url}/doc`)
    watcher.sendStep1(new Uint8Array([0]))
    await watcher.next('step2')
    assert.equal(watcher.text(), '')
    const session = harness.sessions[0]
    assert.isUndefined(session.request)
    assert.lengthOf(session.buffered, 0)
  })

  test('a socket closed while its document loads releases the room', async ({ assert }) => {
    const storage = new RecordingStorage()
    let load!: () => void
    storage.loadGate = new Promise<void>((resolve) => (load = resolve))
    // asked once the storage load returned nothing: the room is built right after
    let seeded = false
    harness = await startEngine({
      storage,
      seed: async () => {
        seeded = true
        return null
      },
    })
    const client = await Client.open(`${harness.url}/doc`)
    await waitFor(() => storage.loads.length === 1)
    await client.close()
    load()
    await waitFor(() => seeded)
    await new Promise((resolve) => setImmediate(resolve))
    assert.isFalse(harness.engine.hasLiveDocument('doc'))
    assert.lengthOf(storage.loads, 1)
    assert.deepEqual(harness.joined, [])
    assert.deepEqual(harness.engine.openDocuments(), [])
  })

  test('presence of other instances is not capped by maxAwarenessClients', async ({ assert }) => {
    harness = await startEngine({ limits: { maxAwarenessClients: 2 } })
    const client = await Client.joined(`${harness.url}/doc`)
    const room = await harness.engine.acquire('doc')
    // each instance caps its own clients; together they may hold more
    room.applyRemoteAwareness(
      awarenessUpdate([
        [40, 1, '{}'],
        [41, 1, '{}'],
        [42, 1, '{}'],
      ])
    )
    const relayed = await client.next('awareness')
    assert.deepEqual(
      relayed.entries.map((entry) => entry.clientId),
      [40, 41, 42]
    )
  })

  test('a client that reconnects after its presence was removed is relayed again', async ({
    assert,
  }) => {
    harness = await startEngine()
    const watcher = await Client.joined(`${harness.url}/doc`)
    const first = await Client.joined(`${harness.url}/doc`)
    first.send(awarenessFrame([[7, 1, '{"name":"ada"}']]))
    await watcher.next('awareness')
    await first.close()
    const removal = await watcher.next('awareness', 2)
    assert.deepEqual(removal.entries, [{ clientId: 7, clock: 2, state: 'null' }])
    // the same client id from a connection that joined after the removal
    const again = await Client.joined(`${harness.url}/doc`)
    again.send(awarenessFrame([[7, 3, '{"name":"ada"}']]))
    const back = await watcher.next('awareness', 3)
    assert.deepEqual(back.entries, [{ clientId: 7, clock: 3, state: '{"name":"ada"}' }])
  })

  test('the last client leaving with its presence set unloads the room; its removal goes to no one', async ({
    assert,
  }) => {
    harness = await startEngine()
    const client = await Client.joined(`${harness.url}/doc`)
    client.send(awarenessFrame([[7, 1, '{}']]))
    const room = await harness.engine.acquire('doc')
    await waitFor(() => room.awareness.size === 1)
    let broadcasts = 0
    room.onAwarenessBroadcast = () => broadcasts++
    await client.close()
    await waitFor(() => !harness.engine.hasLiveDocument('doc'))
    // the removal's broadcast, scheduled before the unload, runs on a destroyed room
    await waitFor(() => broadcasts === 1)
    assert.equal(room.awareness.size, 0)
  })

  test('messages past the connection budget close it with 4429', async ({ assert }) => {
    harness = await startEngine({ limits: { messagesPerSecond: 5, messageBurst: 5 } })
    const client = await Client.joined(`${harness.url}/doc`)
    // auth messages: ignored by the room, counted all the same
    for (let index = 0; index < 10; index++) client.send(new Uint8Array([2, 0]))
    assert.equal(await client.closed, 4429)
    assert.equal(client.closeReason, 'too many messages')
  })

  test('awareness queries past their budget close the connection with 4429', async ({ assert }) => {
    // a burst of five queries at one a second
    harness = await startEngine({ limits: { awarenessQueriesPerSecond: 1 } })
    const client = await Client.joined(`${harness.url}/doc`)
    for (let index = 0; index < 7; index++) client.send(new Uint8Array([3]))
    assert.equal(await client.closed, 4429)
    assert.equal(client.closeReason, 'too many awareness queries')
    assert.lengthOf(client.of('awareness'), 5)
  })
})

/** A connection of the room without a socket: what the room sends it, and its close codes */
function fakeConnection(room: YjsRoom, seq: number) {
  const updates: Uint8Array[] = []
  const closes: number[] = []
  const guard = {
    closed: false,
    send: () => {},
    sendShared: (frame: { payload: Uint8Array }) => {
      // a sync update frame: type 0, sync type 2, then the update
      if (frame.payload[0] === 0 && frame.payload[1] === 2) updates.push(frame.payload)
    },
    close: (code: number) => {
      closes.push(code)
      guard.closed = true
    },
    admitQuery: () => true,
  }
  const connection = {
    socket: {},
    guard,
    session: {},
    room,
    readOnly: false,
    seq,
  } as unknown as Connection
  room.connections.add(connection)
  /** The text of the document the connection has been sent */
  const text = () => {
    const doc = new Y.Doc()
    for (const frame of updates) {
      const decoder = decoding.createDecoder(frame)
      decoding.readVarUint(decoder)
      decoding.readVarUint(decoder)
      Y.applyUpdate(doc, decoding.readVarUint8Array(decoder))
    }
    return doc.getText('t').toString()
  }
  return { connection, updates, closes, text }
}

function updateFrom(doc: Y.Doc, text: string) {
  const before = Y.encodeStateVector(doc)
  doc.getText('t').insert(doc.getText('t').length, text)
  return Buffer.from(syncFrame(Y.encodeStateAsUpdate(doc, before)))
}

test.group('Yjs room without sockets', (group) => {
  let harness: EngineHarness
  group.each.timeout(6000)
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => harness?.close())

  test('a batch written by several connections reaches each of them whole', async ({ assert }) => {
    harness = await startEngine()
    const room = await harness.engine.acquire('doc')
    const a = fakeConnection(room, 1)
    const b = fakeConnection(room, 2)
    const c = fakeConnection(room, 3)
    const docA = new Y.Doc()
    const docB = new Y.Doc()
    // a writes; c's sync step 1 applies it without broadcasting; then b writes
    room.receive(a.connection, updateFrom(docA, 'from a'))
    room.receive(c.connection, Buffer.from([0, 0, 1, 0]))
    room.receive(b.connection, updateFrom(docB, 'from b'))
    room.deliver()
    // one merged frame holding both: a and b get it too (neither wrote all of it)
    assert.lengthOf(b.updates, 1)
    assert.include(b.text(), 'from a')
    assert.lengthOf(a.updates, 1)
    assert.include(a.text(), 'from b')
    assert.lengthOf(c.updates, 1)
  })

  test('a batch written by one connection is not sent back to it', async ({ assert }) => {
    harness = await startEngine()
    const room = await harness.engine.acquire('doc')
    const a = fakeConnection(room, 1)
    const b = fakeConnection(room, 2)
    const docA = new Y.Doc()
    room.receive(a.connection, updateFrom(docA, 'one'))
    room.receive(b.connection, Buffer.from([0, 0, 1, 0]))
    room.receive(a.connection, updateFrom(docA, 'two'))
    room.deliver()
    assert.lengthOf(a.updates, 0)
    assert.equal(b.text(), 'onetwo')
  })

  test('512 updates waiting are applied at once, without waiting for the delivery', async ({
    assert,
  }) => {
    harness = await startEngine()
    const room = await harness.engine.acquire('doc')
    const a = fakeConnection(room, 1)
    const docA = new Y.Doc()
    // a batch delivered first: the count starts again from zero after it
    room.receive(a.connection, updateFrom(docA, 'x'))
    room.deliver()
    for (let index = 0; index < 511; index++) room.receive(a.connection, updateFrom(docA, 'x'))
    assert.equal(room.doc.getText('t').length, 1, 'queued until the delivery')
    room.receive(a.connection, updateFrom(docA, 'x'))
    assert.equal(room.doc.getText('t').length, 513)
    assert.deepEqual(a.closes, [])
  })

  test('updates received in one turn are delivered once, in one frame', async ({ assert }) => {
    harness = await startEngine()
    const room = await harness.engine.acquire('doc')
    const a = fakeConnection(room, 1)
    const b = fakeConnection(room, 2)
    let deliveries = 0
    const deliver = room.deliver.bind(room)
    room.deliver = () => {
      deliveries++
      deliver()
    }
    const docA = new Y.Doc()
    room.receive(a.connection, updateFrom(docA, 'one'))
    room.receive(a.connection, updateFrom(docA, 'two'))
    await waitFor(() => b.updates.length > 0)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(deliveries, 1)
    assert.lengthOf(b.updates, 1)
    assert.equal(b.text(), 'onetwo')
  })

  test('presence changes received in one turn are broadcast once; a change of nothing is not', async ({
    assert,
  }) => {
    harness = await startEngine()
    const room = await harness.engine.acquire('doc')
    const a = fakeConnection(room, 1)
    let broadcasts = 0
    room.onAwarenessBroadcast = () => broadcasts++
    // the removal of an id nobody has: nothing to broadcast
    room.receive(a.connection, Buffer.from(awarenessFrame([[9, 1, 'null']])))
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(broadcasts, 0)
    room.receive(a.connection, Buffer.from(awarenessFrame([[7, 1, '{}']])))
    room.receive(a.connection, Buffer.from(awarenessFrame([[8, 1, '{}']])))
    await waitFor(() => broadcasts > 0)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(broadcasts, 1)
    assert.equal(room.awareness.size, 2)
  })
})
