import { test } from '@japa/runner'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
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
 * Database-free: the Yjs engine behind a bare HTTP server, driven by real
 * `ws` clients with y-protocols messages (no app boot, no tokens). A
 * negative ("never sent", "never stored") is proven by a later marker the
 * same path delivers, never by a sleep.
 */
const EMPTY_STATE_VECTOR = new Uint8Array([0])

test.group('Yjs engine over sockets: sync', (group) => {
  // a mutant that drops a resolve fails in seconds, not at the runner's 30 s
  group.each.timeout(6000)
  let harness: EngineHarness
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => harness?.close())

  test('a joining client gets sync step 1, then the stored state for its empty state vector', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    const [state, logged] = [stateWith('stored'), stateWith('!')]
    await storage.saveDocument('doc', state)
    await storage.appendUpdate('doc', logged)
    harness = await startEngine({ storage })
    const client = await Client.joined(`${harness.url}/doc`)
    const step1 = client.of('step1')[0]
    const server = new Y.Doc()
    Y.applyUpdate(server, state)
    Y.applyUpdate(server, logged)
    assert.deepEqual(
      Y.decodeStateVector(step1.stateVector),
      Y.decodeStateVector(Y.encodeStateVector(server))
    )
    client.sendStep1(EMPTY_STATE_VECTOR)
    const step2 = await client.next('step2')
    assert.deepEqual(step2.update, Y.encodeStateAsUpdate(server))
    // the same full state again, now cached: a second empty client gets identical bytes
    client.sendStep1(EMPTY_STATE_VECTOR)
    const again = await client.next('step2', 2)
    assert.deepEqual(again.update, step2.update)
    assert.deepEqual(harness.joined, ['1'])
    assert.deepEqual(storage.loads, ['doc'])
  })

  test('a client with part of the document gets only what it lacks', async ({ assert }) => {
    harness = await startEngine()
    const writer = await Client.joined(`${harness.url}/doc`)
    writer.type('abc')
    await waitFor(() => harness.engine.hasLiveDocument('doc'))
    const reader = await Client.joined(`${harness.url}/doc`)
    reader.sendStep1(EMPTY_STATE_VECTOR)
    await waitFor(() => reader.text() === 'abc')
    writer.type('def')
    await waitFor(() => reader.text() === 'abcdef')
    // a third client that has 'abc' asks with its state vector
    const third = await Client.joined(`${harness.url}/doc`)
    third.sendStep1(Y.encodeStateVector(writer.doc))
    const step2 = await third.next('step2')
    const missing = Y.encodeStateAsUpdate(reader.doc, Y.encodeStateVector(writer.doc))
    assert.deepEqual(step2.update, missing)
    assert.notDeepEqual(step2.update, Y.encodeStateAsUpdate(reader.doc))
  })

  test('the full state is encoded again after the document changed', async ({ assert }) => {
    harness = await startEngine()
    const writer = await Client.joined(`${harness.url}/doc`)
    writer.sendStep1(EMPTY_STATE_VECTOR)
    await writer.next('step2')
    writer.type('one')
    const other = await Client.joined(`${harness.url}/doc`)
    other.sendStep1(EMPTY_STATE_VECTOR)
    await waitFor(() => other.text() === 'one')
    writer.type('two')
    const late = await Client.joined(`${harness.url}/doc`)
    late.sendStep1(EMPTY_STATE_VECTOR)
    await waitFor(() => late.text() === 'onetwo')
    assert.equal(late.text(), 'onetwo')
  })

  test('an update reaches every other client once and is not echoed to its writer', async ({
    assert,
  }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    const c = await Client.joined(`${harness.url}/doc`)
    a.type('from a')
    await waitFor(() => b.text() === 'from a' && c.text() === 'from a')
    // b's marker reaches a: had a's own update been echoed, it would be there first
    b.type('|b')
    await waitFor(() => a.of('update').length >= 1)
    const toA = a.of('update')
    assert.lengthOf(toA, 1)
    assert.equal(a.text(), 'from a|b')
    assert.lengthOf(b.of('update'), 1, 'b got a’s update, not its own')
    await waitFor(() => c.of('update').length === 2)
  })

  test('updates from several writers in one batch reach every client, the writers included', async ({
    assert,
  }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    a.type('A')
    b.type('B')
    await waitFor(() => watcher.text().length === 2)
    await waitFor(() => a.text().length === 2 && b.text().length === 2)
    assert.equal(a.text(), watcher.text())
    assert.equal(b.text(), watcher.text())
  })

  test('sync step 2 from a client is applied like an update', async ({ assert }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    a.type('offline edit', syncProtocol.messageYjsSyncStep2)
    await waitFor(() => b.text() === 'offline edit')
    assert.equal(b.text(), 'offline edit')
  })

  test('messages sent during the handshake are applied at join', async ({ assert }) => {
    harness = await startEngine({
      buffered: () => [Buffer.from(syncFrame(stateWith('early')))],
    })
    const client = await Client.joined(`${harness.url}/doc`)
    await harness.engine.flushAll()
    assert.equal(await harness.storage.storedText('doc'), 'early')
    assert.equal(client.text(), '', 'the writer is not sent its own update')
  })

  test('a read-only client’s update reaches neither the document, its peers nor storage', async ({
    assert,
  }) => {
    harness = await startEngine()
    const viewer = await Client.joined(`${harness.url}/doc?write=0`)
    const writer = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    viewer.type('forged')
    viewer.type('forged again', syncProtocol.messageYjsSyncStep2)
    // the viewer's socket then carries a sync step 1: answered, so its updates were read
    viewer.sendStep1(EMPTY_STATE_VECTOR)
    await viewer.next('step2')
    writer.type('marker')
    await waitFor(() => watcher.of('update').length === 1)
    assert.equal(watcher.text(), 'marker')
    await harness.engine.flushAll()
    assert.equal(await harness.storage.storedText('doc'), 'marker')
    assert.isUndefined(viewer.closeCode, 'a viewer is not closed for it')
  })
})

test.group('Yjs engine over sockets: hostile messages and failures', (group) => {
  // a mutant that drops a resolve fails in seconds, not at the runner's 30 s
  group.each.timeout(6000)
  let harness: EngineHarness
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => harness?.close())

  test('a malformed message closes the socket with 4400 and the room keeps serving', async ({
    assert,
  }) => {
    harness = await startEngine()
    const bad = [
      new Uint8Array([0, 9, 0]), // unknown sync message type
      new Uint8Array([0]), // truncated
      new Uint8Array([0, 2, 5, 1]), // update longer than the message
      new Uint8Array([1, 3, 1, 1]), // awareness entry cut short
    ]
    for (const message of bad) {
      const client = await Client.joined(`${harness.url}/doc`)
      client.send(message)
      assert.equal(await client.closed, 4400, `message ${Array.from(message)}`)
      assert.equal(client.closeReason, 'malformed message')
    }
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    a.type('still served')
    await waitFor(() => b.text() === 'still served')
  })

  test('an update Yjs cannot apply closes its sender with 4400, not the other writer', async ({
    assert,
  }) => {
    harness = await startEngine()
    const broken = await Client.joined(`${harness.url}/doc`)
    const writer = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    broken.send(syncFrame(new Uint8Array([1, 1, 200, 1, 0, 4, 9, 9])))
    writer.type('good')
    assert.equal(await broken.closed, 4400)
    assert.equal(broken.closeReason, 'malformed message')
    await waitFor(() => watcher.text() === 'good')
    assert.isUndefined(writer.closeCode)
  })

  test('unknown top-level messages and auth messages are ignored', async ({ assert }) => {
    harness = await startEngine()
    const client = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    client.send(new Uint8Array([2, 0]))
    client.send(new Uint8Array([7]))
    client.type('after')
    await waitFor(() => watcher.text() === 'after')
    assert.isUndefined(client.closeCode)
  })

  test('a document that cannot be loaded closes the socket with 4500 and is retried by the next', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    storage.failLoads = 1
    const reported: string[] = []
    const stop = onCollaborationError((event) =>
      reported.push(`${event.scope} ${event.operation} ${event.docName}`)
    )
    harness = await startEngine({ storage })
    try {
      const client = await Client.open(`${harness.url}/doc`)
      assert.equal(await client.closed, 4500)
      assert.equal(client.closeReason, 'document could not be loaded')
      assert.deepEqual(reported, ['storage loadDocument doc'])
      assert.isFalse(harness.engine.hasLiveDocument('doc'))
      await Client.joined(`${harness.url}/doc`)
      assert.deepEqual(storage.loads, ['doc', 'doc'])
    } finally {
      stop()
    }
  })

  test('an update past maxDocumentBytes closes with 4413 and is not applied', async ({
    assert,
  }) => {
    harness = await startEngine({ limits: { maxDocumentBytes: 200 } })
    const writer = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    writer.type('x'.repeat(300))
    assert.equal(await writer.closed, 4413)
    assert.equal(writer.closeReason, 'document too large')
    const small = await Client.joined(`${harness.url}/doc`)
    small.type('small')
    await waitFor(() => watcher.text() === 'small')
  })

  test('a value overwritten again and again is measured near the cap, not refused', async ({
    assert,
  }) => {
    harness = await startEngine({ limits: { maxDocumentBytes: 200 } })
    const writer = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    // each update is about 65 bytes and counts in full; the old values are garbage
    // collected, so the document stays near 75 bytes: the fourth passes the bound and fits
    for (let round = 1; round <= 4; round++) {
      const before = Y.encodeStateVector(writer.doc)
      writer.doc.getMap('m').set('k', `${round}`.repeat(40))
      writer.send(syncFrame(Y.encodeStateAsUpdate(writer.doc, before)))
      await waitFor(() => watcher.doc.getMap('m').get('k') === `${round}`.repeat(40))
    }
    assert.isUndefined(writer.closeCode)
  })

  test('updates queued in one batch count against maxDocumentBytes together', async ({
    assert,
  }) => {
    harness = await startEngine({ limits: { maxDocumentBytes: 200 } })
    const writer = await Client.joined(`${harness.url}/doc`)
    // 3 updates of about 80 bytes each, sent in one write: the third passes the cap
    const updates = ['a', 'b', 'c'].map((letter) => {
      const before = Y.encodeStateVector(writer.doc)
      writer.doc.getText('t').insert(0, letter.repeat(60))
      return syncFrame(Y.encodeStateAsUpdate(writer.doc, before))
    })
    for (const frame of updates) writer.send(frame)
    assert.equal(await writer.closed, 4413)
  })

  test('a stored document counts its state and its update log against maxDocumentBytes', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    const source = new Y.Doc()
    source.getText('t').insert(0, 'a'.repeat(100))
    const parts = [Y.encodeStateAsUpdate(source)]
    for (const letter of ['b', 'c']) {
      const before = Y.encodeStateVector(source)
      source.getText('t').insert(0, letter.repeat(60))
      parts.push(Y.encodeStateAsUpdate(source, before))
    }
    await storage.saveDocument('doc', parts[0])
    await storage.appendUpdate('doc', parts[1])
    await storage.appendUpdate('doc', parts[2])
    const stored = parts.reduce((sum, part) => sum + part.byteLength, 0)
    // room for 40 more bytes: one character fits; 60 fit the state alone, not state and log
    harness = await startEngine({ storage, limits: { maxDocumentBytes: stored + 40 } })
    const writer = await Client.joined(`${harness.url}/doc`)
    const watcher = await Client.joined(`${harness.url}/doc`)
    writer.type('y')
    await waitFor(() => watcher.text().includes('y'))
    writer.type('x'.repeat(60))
    assert.equal(await writer.closed, 4413)
  })

  test('a writer whose document cannot be stored keeps it live until a retry stores it', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    // no debounced write: the close's flush is the first, whatever the machine's load
    harness = await startEngine({ storage })
    const client = await Client.joined(`${harness.url}/doc`)
    client.type('precious')
    const room = await harness.engine.acquire('doc')
    await waitFor(() => room.storage.dirty)
    storage.failures = 1
    // a failed write is retried after the debounce
    harness.host.debounce = 20
    await client.close()
    // the final flush failed: the room stays loaded, then a retry stores and unloads it
    await waitFor(() => storage.calls.length >= 1)
    assert.isTrue(harness.engine.hasLiveDocument('doc'))
    assert.equal(
      new TextDecoder().decode(await harness.engine.getDocumentState('doc')).includes('precious'),
      true
    )
    await waitFor(() => !harness.engine.hasLiveDocument('doc'), 5000)
    assert.equal(await storage.storedText('doc'), 'precious')
    assert.deepEqual(harness.left, ['1'])
  })

  test('a client leaving while another stays writes nothing', async ({ assert }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    a.type('kept')
    await waitFor(() => b.text() === 'kept')
    await b.close()
    await waitFor(() => harness.left.length === 1)
    // a round trip of the one left: an unload's flush would have started by then
    a.sendStep1()
    await a.next('step2')
    assert.deepEqual(harness.storage.calls, [])
    assert.deepEqual(harness.engine.openDocuments(), ['doc'])
  })

  test('the last client leaving stores the document and unloads it', async ({ assert }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    const b = await Client.joined(`${harness.url}/doc`)
    a.type('kept')
    await waitFor(() => b.text() === 'kept')
    await a.close()
    await waitFor(() => harness.engine.connectionCount('doc') === 1)
    assert.deepEqual(harness.engine.openDocuments(), ['doc'])
    await b.close()
    await waitFor(() => harness.engine.openDocuments().length === 0)
    assert.equal(await harness.storage.storedText('doc'), 'kept')
    assert.equal(harness.engine.connectionCount('doc'), 0)
    // loaded again from storage by the next client
    const c = await Client.joined(`${harness.url}/doc`)
    c.sendStep1(EMPTY_STATE_VECTOR)
    await waitFor(() => c.text() === 'kept')
  })

  test('a client connecting while the last one’s changes are stored joins the reloaded document', async ({
    assert,
  }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/doc`)
    a.type('kept')
    const first = await harness.engine.acquire('doc')
    await waitFor(() => first.storage.dirty)
    let write!: () => void
    harness.storage.gate = new Promise<void>((resolve) => (write = resolve))
    await a.close()
    await waitFor(() => harness.storage.calls.length === 1)
    // the unload's store is held: this client waits for it, then loads the document again
    const b = await Client.open(`${harness.url}/doc`)
    write()
    await b.next('step1')
    b.sendStep1(EMPTY_STATE_VECTOR)
    await waitFor(() => b.text() === 'kept')
    // one room: a third client sees the second's edit
    const c = await Client.joined(`${harness.url}/doc`)
    c.sendStep1(EMPTY_STATE_VECTOR)
    await waitFor(() => c.text() === 'kept')
    b.type('!')
    await waitFor(() => c.text() === 'kept!')
    assert.deepEqual(harness.engine.openDocuments(), ['doc'])
    assert.equal(harness.engine.connectionCount('doc'), 2)
    assert.deepEqual(harness.storage.loads, ['doc', 'doc'])
  })

  test('close resolves once every document is stored', async ({ assert }) => {
    harness = await startEngine()
    const client = await Client.joined(`${harness.url}/one`)
    client.type('kept')
    const room = await harness.engine.acquire('one')
    await waitFor(() => room.storage.dirty)
    await harness.engine.close()
    assert.equal(await harness.storage.storedText('one'), 'kept')
    assert.equal(await client.closed, 1001)
  })

  test('close stores every document, closes sockets with 1001 and rejects on a failed store', async ({
    assert,
  }) => {
    harness = await startEngine()
    const a = await Client.joined(`${harness.url}/one`)
    const b = await Client.joined(`${harness.url}/two`)
    a.type('1')
    b.type('2')
    const one = await harness.engine.acquire('one')
    const two = await harness.engine.acquire('two')
    await waitFor(() => one.storage.dirty && two.storage.dirty)
    harness.storage.failures = 1
    await assert.rejects(() => harness.engine.close(), /Could not store/)
    const writes = harness.storage.calls.length
    assert.equal(await a.closed, 1001)
    assert.equal(a.closeReason, 'server shutting down')
    assert.equal(await b.closed, 1001)
    // the sockets leaving a closed engine start no unload: nothing is written after close
    await waitFor(() => harness.left.length === 2)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(harness.storage.calls.length, writes)
    assert.deepEqual(harness.engine.openDocuments(), [])
    const texts = [await harness.storage.storedText('one'), await harness.storage.storedText('two')]
    assert.sameMembers(
      texts.filter((text) => text),
      texts.includes('1') ? ['1'] : ['2'],
      'one store failed, the other was written'
    )
  })
})
