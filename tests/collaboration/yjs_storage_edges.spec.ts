import { test } from '@japa/runner'
import * as Y from 'yjs'
import { CollabStorageError } from '../../src/collaboration/errors.ts'
import { onCollaborationError } from '../../src/collaboration/observability.ts'
import { RoomStorage, mergeBounded } from '../../src/collaboration/engines/yjs/room_storage.ts'
import { AdaptiveWindow } from '../../src/collaboration/engines/yjs/adaptive_window.ts'
import { DEFAULT_LIMITS } from '../../src/collaboration/limits.ts'
import type { CollabEngineHost } from '../../src/collaboration/engines/engine.ts'
import { RecordingStorage, at, waitFor } from './yjs_harness.ts'

/**
 * Database-free: a document's writes (the update log, the debounced
 * compaction, the retries after a failure) driven on `RoomStorage` itself,
 * with a recording in-memory storage that can be told to fail.
 */
function hostOf(storage: RecordingStorage, timings: Partial<CollabEngineHost> = {}) {
  return {
    storage,
    debounce: 20,
    maxWait: 1000,
    appendInterval: 5,
    limits: { ...DEFAULT_LIMITS },
    seed: async () => null,
    onJoin: () => {},
    onLeave: () => {},
    ...timings,
  } satisfies CollabEngineHost
}

/** A document whose every change is handed to the storage as the room would */
function roomDoc(storage: RecordingStorage, timings: Partial<CollabEngineHost> = {}) {
  const doc = new Y.Doc()
  const saved: number[] = []
  const roomStorage = new RoomStorage('notes', doc, hostOf(storage, timings), (bytes) =>
    saved.push(bytes)
  )
  doc.on('update', (update: Uint8Array) => roomStorage.markDirty(update))
  return { doc, roomStorage, saved }
}

function textOf(state: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  return doc.getText('t').toString()
}

test.group('Yjs room storage', (group) => {
  // a mutant that drops a resolve fails in seconds, not at the runner's 30 s
  group.each.timeout(6000)
  let stop: (() => void) | undefined
  // a listener keeps the expected failures off the error console
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => stop?.())

  test('flush compacts the whole state once, reports its size and is clean after', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 60_000 })
    assert.isFalse(roomStorage.dirty)
    doc.getText('t').insert(0, 'hello')
    assert.isTrue(roomStorage.dirty)
    await roomStorage.flush()
    assert.isFalse(roomStorage.dirty)
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['compactDocument']
    )
    assert.equal(textOf(storage.calls[0].bytes), 'hello')
    assert.deepEqual(storage.calls[0].bytes, Y.encodeStateAsUpdate(doc))
    assert.isUndefined(storage.calls[0].merge, 'a single instance merges nothing')
    assert.deepEqual(saved, [Y.encodeStateAsUpdate(doc).byteLength])
    // clean: a second flush writes nothing
    await roomStorage.flush()
    assert.lengthOf(storage.calls, 1)
    roomStorage.destroy()
  })

  test('in a cluster the compaction merges what other instances appended', async ({ assert }) => {
    const storage = new RecordingStorage()
    const { doc, roomStorage } = roomDoc(storage, {
      debounce: 60_000,
      cluster: {} as CollabEngineHost['cluster'],
    })
    doc.getText('t').insert(0, 'x')
    await roomStorage.flush()
    assert.strictEqual(storage.calls[0].merge, mergeBounded)
    roomStorage.destroy()
  })

  test('a storage without an update log gets saveDocument and never an append', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 60_000, appendInterval: 1 })
    doc.getText('t').insert(0, 'plain')
    await roomStorage.flush()
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['saveDocument']
    )
    assert.equal(textOf(storage.calls[0].bytes), 'plain')
    assert.lengthOf(saved, 1)
    roomStorage.destroy()
  })

  test('updates are appended to the log in one merged batch per interval', async ({ assert }) => {
    const storage = new RecordingStorage()
    const { doc, roomStorage } = roomDoc(storage, { debounce: 60_000, appendInterval: 10 })
    const text = doc.getText('t')
    text.insert(0, 'a')
    text.insert(1, 'b')
    text.insert(2, 'c')
    await waitFor(() => storage.calls.length === 1)
    assert.equal(storage.calls[0].operation, 'appendUpdate')
    assert.equal(textOf(storage.calls[0].bytes), 'abc')
    assert.isTrue(roomStorage.dirty, 'an append is not a compaction')
    // the next batch holds only what came after the first
    text.insert(3, 'd')
    await waitFor(() => storage.calls.length === 2)
    assert.equal(storage.calls[1].operation, 'appendUpdate')
    const later = new Y.Doc()
    Y.applyUpdate(later, storage.calls[0].bytes)
    const before = later.getText('t').toString()
    Y.applyUpdate(later, storage.calls[1].bytes)
    assert.equal(before, 'abc')
    assert.equal(later.getText('t').toString(), 'abcd')
    assert.isAbove(storage.calls[1].bytes.byteLength, 0)
    assert.isBelow(storage.calls[1].bytes.byteLength, storage.calls[0].bytes.byteLength + 4)
    roomStorage.destroy()
  })

  test('changes marked without logging (another instance logs them) are only compacted', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    const doc = new Y.Doc()
    const roomStorage = new RoomStorage(
      'notes',
      doc,
      hostOf(storage, { debounce: 15, appendInterval: 1 }),
      () => {}
    )
    doc.on('update', (update: Uint8Array) => roomStorage.markDirty(update, false))
    doc.getText('t').insert(0, 'remote')
    await waitFor(() => storage.calls.length === 1)
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['compactDocument']
    )
    roomStorage.destroy()
  })

  test('a quiet document is compacted after the debounce, without a flush', async ({ assert }) => {
    const storage = new RecordingStorage({ log: false })
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 15 })
    doc.getText('t').insert(0, 'quiet')
    await waitFor(() => saved.length === 1)
    assert.equal(textOf(storage.calls[0].bytes), 'quiet')
    assert.isFalse(roomStorage.dirty)
    roomStorage.destroy()
  })

  test('a document edited without pause is compacted within maxWait', async ({ assert }) => {
    const storage = new RecordingStorage({ log: false })
    const { doc, roomStorage } = roomDoc(storage, { debounce: 30, maxWait: 80 })
    let typed = 0
    const typing = setInterval(() => doc.getText('t').insert(0, String(typed++ % 10)), 2)
    stop = () => clearInterval(typing)
    // never quiet for 30 ms while typing: only maxWait stores it
    await waitFor(() => storage.calls.length >= 1)
    clearInterval(typing)
    assert.isTrue(textOf(storage.calls[0].bytes).length > 0)
    roomStorage.destroy()
  })

  test('compactCheck waits for the rest of the quiet time while changes keep coming', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    const { doc, roomStorage } = roomDoc(storage, { debounce: 40, maxWait: 60_000 })
    doc.getText('t').insert(0, 'a')
    // a change just now: not quiet yet, so the check re-arms instead of storing
    roomStorage.compactCheck()
    // a write the check queued would have started by the end of this turn
    await new Promise((resolve) => setImmediate(resolve))
    assert.lengthOf(storage.calls, 0)
    await waitFor(() => storage.calls.length === 1)
    assert.equal(textOf(storage.calls[0].bytes), 'a')
    roomStorage.destroy()
  })

  test('a clean document is never stored by a check or a retry', async ({ assert }) => {
    const storage = new RecordingStorage()
    const { roomStorage } = roomDoc(storage)
    roomStorage.compactCheck()
    roomStorage.retry()
    await roomStorage.flush()
    assert.lengthOf(storage.calls, 0)
    roomStorage.destroy()
  })

  test('a failed compaction rejects with a storage error, is reported and retried with backoff', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    storage.failures = 3
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 20 })
    const reported: string[] = []
    stop = onCollaborationError((event) =>
      reported.push(`${event.scope} ${event.operation} ${event.docName}`)
    )
    doc.getText('t').insert(0, 'kept')
    const failure = await roomStorage.flush().catch((error) => error)
    assert.instanceOf(failure, CollabStorageError)
    assert.include(failure.message, '"notes"')
    assert.include(failure.message, 'saveDocument')
    assert.equal(failure.cause.message, 'storage down')
    assert.deepEqual(reported, ['storage saveDocument notes'])
    assert.isTrue(roomStorage.dirty, 'what failed to store stays dirty')
    assert.lengthOf(saved, 0)
    // retried with no further edit: 20 ms, then 40 ms, then 80 ms after each failure
    await waitFor(() => saved.length === 1, 5000)
    const times = storage.calls.map((call) => call.at)
    assert.lengthOf(times, 4)
    assert.isAtLeast(times[2] - times[1], 38)
    assert.isAtLeast(times[3] - times[2], 78)
    assert.equal(textOf(storage.calls[3].bytes), 'kept')
    assert.isFalse(roomStorage.dirty)
    assert.lengthOf(reported, 3)
    roomStorage.destroy()
  })

  test('a flush after a failure does not cancel the scheduled retry', async ({ assert }) => {
    const storage = new RecordingStorage({ log: false })
    storage.failures = 2
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 20 })
    doc.getText('t').insert(0, 'x')
    await assert.rejects(() => roomStorage.flush())
    // the second failure comes from this flush; the retry it schedules stores it
    await assert.rejects(() => roomStorage.flush())
    await waitFor(() => saved.length === 1, 5000)
    assert.lengthOf(storage.calls, 3)
    roomStorage.destroy()
  })

  test('changes made while a compaction fails are stored by the retry', async ({ assert }) => {
    const storage = new RecordingStorage({ log: false })
    storage.failures = 1
    let resume!: () => void
    storage.gate = new Promise<void>((resolve) => (resume = resolve))
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 20 })
    doc.getText('t').insert(0, 'a')
    const flushed = roomStorage.flush()
    await waitFor(() => storage.calls.length === 1)
    // an edit while the failing write is in flight
    doc.getText('t').insert(1, 'b')
    resume()
    await assert.rejects(() => flushed)
    assert.isTrue(roomStorage.dirty)
    await waitFor(() => saved.length === 1, 5000)
    assert.equal(textOf(storage.calls.at(-1)!.bytes), 'ab')
    roomStorage.destroy()
  })

  test('a failed append stops the log until a compaction stores the whole state', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    storage.failAppends = 1
    const reported: string[] = []
    stop = onCollaborationError((event) => reported.push(event.operation))
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 30, appendInterval: 1 })
    const text = doc.getText('t')
    text.insert(0, 'a')
    // the failed append schedules the compaction that stores the whole state
    await waitFor(() => saved.length === 1, 5000)
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['appendUpdate', 'compactDocument']
    )
    assert.deepEqual(reported, ['appendUpdate'])
    assert.equal(textOf(storage.calls[1].bytes), 'a')
    // the log works again after the compaction
    text.insert(1, 'b')
    await waitFor(() => storage.calls.length === 3)
    assert.equal(storage.calls[2].operation, 'appendUpdate')
    roomStorage.destroy()
  })

  test('while the log is broken, new changes are not appended', async ({ assert }) => {
    const storage = new RecordingStorage()
    storage.failAppends = 1
    storage.failures = 1
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 30, appendInterval: 1 })
    const text = doc.getText('t')
    text.insert(0, 'a')
    await waitFor(() => storage.calls.length === 1)
    await assert.rejects(() => roomStorage.flush())
    // log broken and compaction failed: this edit waits for the retry
    text.insert(1, 'b')
    await waitFor(() => saved.length === 1, 5000)
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['appendUpdate', 'compactDocument', 'compactDocument']
    )
    assert.equal(textOf(storage.calls[2].bytes), 'ab')
    roomStorage.destroy()
  })

  test('the flush drops the pending append: the compaction holds it', async ({ assert }) => {
    const storage = new RecordingStorage()
    const { doc, roomStorage } = roomDoc(storage, { debounce: 60_000, appendInterval: 30 })
    doc.getText('t').insert(0, 'x')
    await roomStorage.flush()
    // a marker timer past the append interval: the append never came
    await new Promise((resolve) => setTimeout(resolve, 60))
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['compactDocument']
    )
    roomStorage.destroy()
  })

  test('a change made while a retry writes is stored after the retry succeeds', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    storage.failures = 1
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 20 })
    doc.getText('t').insert(0, 'a')
    await assert.rejects(() => roomStorage.flush())
    // the retry (20 ms on) is held while it writes
    let resume!: () => void
    storage.gate = new Promise<void>((resolve) => (resume = resolve))
    await waitFor(() => storage.calls.length === 2)
    doc.getText('t').insert(1, 'b')
    resume()
    await waitFor(() => saved.length === 1)
    assert.equal(textOf(storage.calls[1].bytes), 'a')
    // nobody edits again: the change still reaches storage
    await waitFor(() => saved.length === 2)
    assert.equal(textOf(storage.calls[2].bytes), 'ab')
    assert.isFalse(roomStorage.dirty)
    roomStorage.destroy()
  })

  test('failures of the debounced check and of a retry are reported as saveDocument', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    storage.failures = 2
    const reported: string[] = []
    stop = onCollaborationError((event) =>
      reported.push(`${event.scope} ${event.operation} ${event.docName}`)
    )
    const { doc, roomStorage, saved } = roomDoc(storage, { debounce: 5 })
    // no flush: the check stores it, fails, then a retry fails and the next one stores it
    doc.getText('t').insert(0, 'x')
    await waitFor(() => saved.length === 1)
    assert.deepEqual(reported, ['storage saveDocument notes', 'storage saveDocument notes'])
    roomStorage.destroy()
  })

  test('an append queued behind a compaction writes nothing: the compaction holds its updates', async ({
    assert,
  }) => {
    const storage = new RecordingStorage()
    let resume!: () => void
    storage.gate = new Promise<void>((resolve) => (resume = resolve))
    const { doc, roomStorage } = roomDoc(storage, { debounce: 60_000, appendInterval: 5 })
    const text = doc.getText('t')
    text.insert(0, 'a')
    const first = roomStorage.flush()
    await waitFor(() => storage.calls.length === 1)
    // while the first compaction is held: a change, its append timer, a second flush
    text.insert(1, 'b')
    const second = roomStorage.flush()
    // a marker timer set after the append timer, with a longer delay: the append is queued
    await new Promise((resolve) => setTimeout(resolve, 30))
    resume()
    await Promise.all([first, second])
    // the queue runs in order: this flush ends after the queued append
    await roomStorage.flush()
    assert.deepEqual(
      storage.calls.map((call) => call.operation),
      ['compactDocument', 'compactDocument']
    )
    assert.equal(textOf(storage.calls[1].bytes), 'ab')
    roomStorage.destroy()
  })

  test('destroy cancels the pending append and compaction', async ({ assert }) => {
    const storage = new RecordingStorage()
    const { doc, roomStorage } = roomDoc(storage, { debounce: 10, appendInterval: 10 })
    doc.getText('t').insert(0, 'x')
    roomStorage.destroy()
    const marker = new RecordingStorage()
    const other = roomDoc(marker, { debounce: 30, appendInterval: 60_000 })
    other.doc.getText('t').insert(0, 'y')
    // the marker document's compaction is due after both of the destroyed one's timers
    await waitFor(() => marker.calls.length === 1)
    assert.lengthOf(storage.calls, 0)
    other.roomStorage.destroy()
  })
})

/**
 * Records the delay of every timer set while installed, by the callback's
 * name (`runCompactCheck`, `runRetry`), then sets it as usual.
 */
function recordTimers() {
  const realSetTimeout = globalThis.setTimeout
  const delays: Array<[name: string, delay: number]> = []
  const recording = function (this: unknown, ...args: Parameters<typeof setTimeout>) {
    const [callback, delay] = args
    if (typeof callback === 'function') delays.push([callback.name, delay ?? 0])
    return Reflect.apply(realSetTimeout, this, args)
  }
  globalThis.setTimeout = recording as typeof setTimeout
  return {
    of: (name: string) => delays.filter(([called]) => called === name).map(([, delay]) => delay),
    restore() {
      globalThis.setTimeout = realSetTimeout
    },
  }
}

/**
 * A write a check queued starts within a few microtasks; a timer it armed
 * instead (even of 1 ms) cannot fire before they ran
 */
async function queuedWritesStarted() {
  for (let tick = 0; tick < 10; tick++) await null
}

/**
 * The debounce, maxWait and backoff arithmetic on a stubbed clock: the real
 * timers are a minute or more away, so only the checks called here run.
 */
test.group('Yjs room storage on a stubbed clock', (group) => {
  group.each.timeout(6000)
  const base = 1_000_000_000
  let timers: ReturnType<typeof recordTimers> | undefined
  group.setup(() => onCollaborationError(() => {}))
  group.each.teardown(() => {
    timers?.restore()
    timers = undefined
  })

  test('a check before the quiet time ends waits for the rest of it, or of maxWait', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    const { doc, roomStorage } = roomDoc(storage, { debounce: 60_000, maxWait: 100_000 })
    timers = recordTimers()
    at(base, () => doc.getText('t').insert(0, 'a'))
    at(base + 10_000, () => roomStorage.compactCheck())
    at(base + 95_000, () => doc.getText('t').insert(1, 'b'))
    at(base + 97_000, () => roomStorage.compactCheck())
    await queuedWritesStarted()
    assert.lengthOf(storage.calls, 0)
    // armed by the first change, then the rest of the quiet time, then the rest of maxWait
    assert.deepEqual(timers.of('runCompactCheck'), [60_000, 50_000, 3_000])
    roomStorage.destroy()
  })

  test('a check compacts once the document is quiet for debounce, or dirty for maxWait', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    const quiet = roomDoc(storage, { debounce: 60_000, maxWait: 100_000 })
    at(base, () => quiet.doc.getText('t').insert(0, 'quiet'))
    at(base + 59_999, () => quiet.roomStorage.compactCheck())
    await queuedWritesStarted()
    assert.lengthOf(storage.calls, 0)
    at(base + 60_000, () => quiet.roomStorage.compactCheck())
    await queuedWritesStarted()
    assert.lengthOf(storage.calls, 1)

    const busy = roomDoc(storage, { debounce: 60_000, maxWait: 100_000 })
    at(base, () => busy.doc.getText('t').insert(0, 'busy'))
    at(base + 99_000, () => busy.doc.getText('t').insert(4, '!'))
    at(base + 99_999, () => busy.roomStorage.compactCheck())
    await queuedWritesStarted()
    assert.lengthOf(storage.calls, 1)
    at(base + 100_000, () => busy.roomStorage.compactCheck())
    await queuedWritesStarted()
    assert.lengthOf(storage.calls, 2)
    assert.equal(textOf(storage.calls[1].bytes), 'busy!')
    quiet.roomStorage.destroy()
    busy.roomStorage.destroy()
  })

  test('retries wait debounce, then twice as long after each failure, at most 30 s', async ({
    assert,
  }) => {
    const storage = new RecordingStorage({ log: false })
    storage.failures = 3
    const { doc, roomStorage } = roomDoc(storage, { debounce: 10_000 })
    timers = recordTimers()
    doc.getText('t').insert(0, 'x')
    for (let failure = 0; failure < 3; failure++) {
      await assert.rejects(() => roomStorage.flush())
    }
    assert.deepEqual(timers.of('runRetry'), [10_000, 20_000, 30_000])
    roomStorage.destroy()
  })
})

test.group('Yjs mergeBounded', () => {
  test('merges any count of updates into one holding all of them', ({ assert }) => {
    const doc = new Y.Doc()
    const updates: Uint8Array[] = []
    doc.on('update', (update: Uint8Array) => updates.push(update))
    const text = doc.getText('t')
    for (let index = 0; index < 300; index++) {
      text.insert(index, String(index % 10))
    }
    assert.lengthOf(updates, 300)
    const merged = mergeBounded(updates)
    assert.equal(textOf(merged), text.toString())
    assert.deepEqual(Y.decodeUpdate(merged), Y.decodeUpdate(Y.mergeUpdates(updates)))
    // 65 updates: one chunk of 64 and one of 1, merged again
    assert.equal(textOf(mergeBounded(updates.slice(0, 65))), text.toString().slice(0, 65))
  })

  test('one update is returned as it is', ({ assert }) => {
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'one')
    const update = Y.encodeStateAsUpdate(doc)
    assert.strictEqual(mergeBounded([update]), update)
  })
})

test.group('Yjs adaptive window', () => {
  test('waits factor times the smoothed cost since the last start, never past the cap', ({
    assert,
  }) => {
    const window = new AdaptiveWindow(3, 16)
    assert.isAtMost(window.wait(0), 0, 'nothing ran yet: at once')
    window.ran(100, 104)
    // cost 0.25 * 4 = 1 ms, so 3 ms after the start
    assert.equal(window.wait(100), 3)
    assert.equal(window.wait(102), 1)
    assert.equal(window.wait(103), 0)
    window.ran(200, 204)
    // cost 0.75 * 1 + 0.25 * 4 = 1.75 ms
    assert.equal(window.wait(200), 5.25)
    window.ran(300, 400)
    // cost far above: the cap
    assert.equal(window.wait(300), 16)
    assert.equal(window.wait(310), 6)
  })

  test('schedules at once when free, after the wait when busy', async ({ assert }) => {
    const window = new AdaptiveWindow(3, 16)
    const ran = await new Promise<string>((resolve) => window.schedule(resolve, 'free'))
    assert.equal(ran, 'free')
    const start = performance.now()
    window.ran(start, start + 100)
    // busy: a timer for the rest of the window (at most the 16 ms cap), never at once
    const timers = recordTimers()
    try {
      await new Promise<void>((resolve) =>
        window.schedule(function broadcast() {
          resolve()
        }, null)
      )
    } finally {
      timers.restore()
    }
    const [delay] = timers.of('broadcast')
    assert.isAbove(delay, 0)
    assert.isAtMost(delay, 16)
  })
})
