import { test } from '@japa/runner'
import * as Y from 'yjs'
import { CollabDoc } from '../../src/collaboration/client/collab_doc.ts'
import {
  createExcalidrawAdapter,
  createTextAdapter,
  createTldrawAdapter,
  type EditorAdapter,
} from '../../src/collaboration/client/adapters.ts'

/** Two replicas of one document that exchange every update, as two clients through a server */
function replicas() {
  const a = new Y.Doc()
  const b = new Y.Doc()
  a.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin !== 'remote') Y.applyUpdate(b, update, 'remote')
  })
  b.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin !== 'remote') Y.applyUpdate(a, update, 'remote')
  })
  return { a: new CollabDoc(a), b: new CollabDoc(b) }
}

/** Two replicas whose updates are held until `exchange()`: concurrent edits */
function offlineReplicas() {
  const a = new Y.Doc()
  const b = new Y.Doc()
  return {
    a: new CollabDoc(a),
    b: new CollabDoc(b),
    exchange() {
      const fromA = Y.encodeStateAsUpdate(a, Y.encodeStateVector(b))
      const fromB = Y.encodeStateAsUpdate(b, Y.encodeStateVector(a))
      Y.applyUpdate(b, fromA, 'remote')
      Y.applyUpdate(a, fromB, 'remote')
    },
  }
}

function bind<S>(adapter: EditorAdapter<S>, doc: CollabDoc, editorId = 'editor') {
  const binding = adapter.create(doc, editorId)
  let notified = 0
  binding.observe(() => notified++)
  return { binding, notified: () => notified }
}

test.group('Collaboration client | editor adapters', () => {
  test('text: a write changes only the middle, so concurrent edits both survive', ({ assert }) => {
    const { a, b, exchange } = offlineReplicas()
    const adapter = createTextAdapter()
    assert.equal(adapter.empty(), '')
    const left = bind(adapter, a)
    left.binding.write('the quick fox')
    exchange()
    const right = bind(adapter, b)
    assert.equal(right.binding.read(), 'the quick fox')

    left.binding.write('the quick brown fox')
    right.binding.write('the quick fox jumps')
    exchange()
    assert.equal(left.binding.read(), 'the quick brown fox jumps')
    assert.equal(right.binding.read(), 'the quick brown fox jumps')
    assert.isAbove(right.notified(), 0)

    const before = right.notified()
    right.binding.write('the quick brown fox jumps')
    assert.equal(right.notified(), before)
  })

  test('Excalidraw: elements merge by id; a write never replaces a newer version, a tie goes to the lower nonce', ({
    assert,
  }) => {
    const { a, b, exchange } = offlineReplicas()
    const adapter = createExcalidrawAdapter()
    const left = bind(adapter, a, 'canvas').binding
    const right = bind(adapter, b, 'canvas').binding
    left.write([{ id: 'rect', version: 1, versionNonce: 5, index: 'a0', type: 'rectangle' }])
    right.write([{ id: 'ellipse', version: 1, versionNonce: 9, index: 'a1', type: 'ellipse' }])
    exchange()
    assert.deepEqual(
      left.read().map((element) => element.id),
      ['rect', 'ellipse']
    )
    assert.deepEqual(left.read(), right.read())

    left.write([{ id: 'rect', version: 3, versionNonce: 1, index: 'a0', x: 10 }])
    exchange()
    // a stale copy never overwrites a newer one
    right.write([{ id: 'rect', version: 2, versionNonce: 0, index: 'a0', x: 99 }])
    assert.equal(right.read()[0].x, 10)

    left.write([{ id: 'rect', version: 4, versionNonce: 7, index: 'a0', x: 1 }])
    left.write([{ id: 'rect', version: 4, versionNonce: 3, index: 'a0', x: 2 }])
    left.write([{ id: 'rect', version: 4, versionNonce: 8, index: 'a0', x: 3 }])
    exchange()
    assert.equal(right.read()[0].x, 2)
  })

  test('tldraw: changed records are set and removed ones deleted on every replica', ({
    assert,
  }) => {
    const { a, b } = replicas()
    const adapter = createTldrawAdapter()
    assert.deepEqual(adapter.empty(), {})
    const left = bind(adapter, a, 'tldraw').binding
    const right = bind(adapter, b, 'tldraw')
    left.write({
      'shape:1': { id: 'shape:1', x: 0 },
      'shape:2': { id: 'shape:2', x: 5 },
    })
    assert.deepEqual(right.binding.read(), {
      'shape:1': { id: 'shape:1', x: 0 },
      'shape:2': { id: 'shape:2', x: 5 },
    })
    right.binding.write({ 'shape:2': { id: 'shape:2', x: 6 } })
    assert.deepEqual(left.read(), { 'shape:2': { id: 'shape:2', x: 6 } })

    const before = right.notified()
    left.write({ 'shape:2': { id: 'shape:2', x: 6 } })
    assert.equal(right.notified(), before)
  })

  test('CollabDoc: key-value writes reach the other replica, tagged local or remote', ({
    assert,
  }) => {
    const { a, b } = replicas()
    const seen: [string[], boolean][] = []
    const stop = b.onUpdate((keys, local) => seen.push([keys, local]))
    a.write('title', 'Plan')
    assert.equal(b.read('title'), 'Plan')
    b.write('title', 'Plan B')
    assert.equal(a.read('title'), 'Plan B')
    stop()
    a.write('title', 'ignored by the stopped listener')
    assert.deepEqual(seen, [
      [['title'], false],
      [['title'], true],
    ])
  })
})
