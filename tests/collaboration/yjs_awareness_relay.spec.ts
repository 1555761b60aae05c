import { test } from '@japa/runner'
import * as decoding from 'lib0/decoding'
import {
  AwarenessRelay,
  MESSAGE_AWARENESS,
  awarenessUpdate,
  type AwarenessPeer,
} from '../../src/collaboration/engines/yjs/awareness.ts'
import { CLOSE_CODES } from '../../src/collaboration/server/close_codes.ts'
import { DEFAULT_LIMITS, type CollaborationLimits } from '../../src/collaboration/limits.ts'
import { at } from './yjs_harness.ts'

/**
 * Database-free: the awareness relay of a Yjs room on its own, fed encoded
 * awareness updates the way y-websocket clients send them. Who owns a client
 * id, what a removal remembers, the caps, and what each outgoing frame holds.
 */
type Row = [clientId: number, clock: number, state: string]

function relay(limits: Partial<CollaborationLimits> = {}) {
  return new AwarenessRelay({ ...DEFAULT_LIMITS, ...limits })
}

function update(...rows: Row[]) {
  return awarenessUpdate(rows)
}

function rowsOf(bytes: Uint8Array): Row[] {
  const decoder = decoding.createDecoder(bytes)
  const rows: Row[] = []
  for (let count = decoding.readVarUint(decoder); count > 0; count--) {
    rows.push([
      decoding.readVarUint(decoder),
      decoding.readVarUint(decoder),
      decoding.readVarString(decoder),
    ])
  }
  return rows
}

/** The rows of an outgoing frame (message type checked) */
function frameRows(frame: Uint8Array | null): Row[] {
  if (!frame) return []
  const decoder = decoding.createDecoder(frame)
  if (decoding.readVarUint(decoder) !== MESSAGE_AWARENESS) {
    throw new Error('not an awareness frame')
  }
  return rowsOf(decoding.readVarUint8Array(decoder))
}

function states(relayed: AwarenessRelay) {
  return [...relayed.entries].map(([id, entry]) => [id, entry.clock, entry.state])
}

const USER = '{"user":"ada"}'

test.group('Yjs awareness relay', () => {
  test('a new client id belongs to the connection that announced it', ({ assert }) => {
    const awareness = relay()
    const owner: AwarenessPeer = { seq: 1 }
    const other: AwarenessPeer = { seq: 2 }
    assert.isFalse(awareness.pending)
    assert.isNull(awareness.apply(owner, update([7, 1, USER]), 2))
    assert.deepEqual([...owner.clients!], [7])
    assert.isTrue(awareness.pending)
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [[7, 1, USER]])
    assert.isFalse(awareness.pending)
    assert.isNull(awareness.takeOutgoing())

    // another connection relaying or forging it changes nothing and sends nothing
    awareness.apply(other, update([7, 9, '{"user":"mallory"}']), 2)
    awareness.apply(other, update([7, 10, 'null']), 2)
    assert.deepEqual(states(awareness), [[7, 1, USER]])
    assert.isFalse(awareness.pending)
    assert.isUndefined(other.clients)
  })

  test('the owner changes its state with the same or a newer clock, never an older one', ({
    assert,
  }) => {
    const awareness = relay()
    const owner: AwarenessPeer = { seq: 1 }
    awareness.apply(owner, update([7, 3, USER]), 1)
    awareness.takeOutgoing()
    awareness.apply(owner, update([7, 2, '{"stale":true}']), 1)
    assert.isFalse(awareness.pending)
    awareness.apply(owner, update([7, 3, '{"cursor":1}']), 1)
    awareness.apply(owner, update([7, 4, '{"cursor":2}']), 1)
    assert.deepEqual(states(awareness), [[7, 4, '{"cursor":2}']])
    // one row per client in a frame, the newest
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [[7, 4, '{"cursor":2}']])
    // a removal with the clock of the last state removes it (as y-protocols does)
    awareness.apply(owner, update([7, 4, 'null']), 1)
    assert.deepEqual(states(awareness), [])
  })

  test('several clients in one update are each applied', ({ assert }) => {
    const awareness = relay()
    const owner: AwarenessPeer = { seq: 1 }
    awareness.apply(owner, update([1, 1, '{"a":1}'], [2, 5, '{"b":2}'], [3, 1, 'null']), 1)
    assert.deepEqual(states(awareness), [
      [1, 1, '{"a":1}'],
      [2, 5, '{"b":2}'],
    ])
    assert.equal(awareness.size, 2)
    // an unknown id announced as removed is not relayed
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [
      [1, 1, '{"a":1}'],
      [2, 5, '{"b":2}'],
    ])
  })

  test('a state over maxAwarenessStateBytes (its length prefix included) is refused with 4413', ({
    assert,
  }) => {
    const awareness = relay({ maxAwarenessStateBytes: 10 })
    const owner: AwarenessPeer = { seq: 1 }
    // 9 characters and their one-byte length: exactly the limit
    assert.isNull(awareness.apply(owner, update([1, 1, '"1234567"']), 1))
    assert.equal(
      awareness.apply(owner, update([2, 1, '"ok"'], [3, 1, '"12345678"'], [4, 1, '"x"']), 1),
      CLOSE_CODES.tooLarge
    )
    // rows before the refused one stand, none after it is read
    assert.deepEqual(
      states(awareness).map(([id]) => id),
      [1, 2]
    )
  })

  test('a connection owns at most maxAwarenessClients ids; other instances are capped there', ({
    assert,
  }) => {
    const awareness = relay({ maxAwarenessClients: 2 })
    const owner: AwarenessPeer = { seq: 1 }
    assert.isNull(awareness.apply(owner, update([1, 1, USER], [2, 1, USER]), 1))
    // updating an id it owns is not a new one
    assert.isNull(awareness.apply(owner, update([2, 2, USER]), 1))
    assert.equal(awareness.apply(owner, update([3, 1, USER]), 1), CLOSE_CODES.tooLarge)
    assert.isFalse(awareness.entries.has(3))

    const remote: AwarenessPeer = { seq: 0, remote: true }
    assert.isNull(awareness.apply(remote, update([10, 1, USER], [11, 1, USER], [12, 1, USER]), 1))
    assert.deepEqual([...remote.clients!], [10, 11, 12])
  })

  test('a removed id is not brought back by an older connection relaying it', ({ assert }) => {
    const awareness = relay()
    const viewer: AwarenessPeer = { seq: 1 }
    const owner: AwarenessPeer = { seq: 2 }
    awareness.apply(owner, update([7, 4, USER]), 2)
    awareness.apply(owner, update([7, 5, 'null']), 2)
    assert.deepEqual(states(awareness), [])
    assert.deepEqual([...owner.clients!], [])
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [[7, 5, 'null']])

    // the viewer joined before the removal: its copy of the state is stale, whatever its clock
    awareness.apply(viewer, update([7, 99, USER]), 2)
    assert.deepEqual(states(awareness), [])
    assert.isFalse(awareness.pending)
  })

  test('a removed id may be claimed again by its owner with a newer clock, or a later connection', ({
    assert,
  }) => {
    const awareness = relay()
    const owner: AwarenessPeer = { seq: 2 }
    awareness.apply(owner, update([7, 4, USER], [8, 4, USER]), 2)
    awareness.apply(owner, update([7, 5, 'null'], [8, 5, 'null']), 2)

    awareness.apply(owner, update([7, 5, USER]), 2)
    assert.isFalse(awareness.entries.has(7), 'the removal clock itself is stale')
    awareness.apply(owner, update([7, 6, USER]), 2)
    assert.equal(awareness.entries.get(7)?.owner, owner)

    // the same client reconnecting: a connection that joined after the removal
    const reconnected: AwarenessPeer = { seq: 3 }
    awareness.apply(reconnected, update([8, 1, USER]), 3)
    assert.equal(awareness.entries.get(8)?.owner, reconnected)
  })

  test('a removal is remembered for 30 s', ({ assert }) => {
    const awareness = relay()
    const viewer: AwarenessPeer = { seq: 1 }
    const owner: AwarenessPeer = { seq: 2 }
    at(1_000_000, () => {
      awareness.apply(owner, update([7, 1, USER], [8, 1, USER]), 2)
      awareness.apply(owner, update([7, 2, 'null'], [8, 2, 'null']), 2)
    })
    at(1_030_000, () => awareness.apply(viewer, update([7, 3, USER]), 2))
    assert.isFalse(awareness.entries.has(7))
    at(1_030_001, () => awareness.apply(viewer, update([8, 3, USER]), 2))
    assert.equal(awareness.entries.get(8)?.owner, viewer)
  })

  test('at most 10,000 removals are remembered: the oldest and the expired go first', ({
    assert,
  }) => {
    const awareness = relay({ maxAwarenessClients: 100_000 })
    const viewer: AwarenessPeer = { seq: 1 }
    const owner: AwarenessPeer = { seq: 2 }
    const removeMany = (from: number, to: number) => {
      const ids = Array.from({ length: to - from + 1 }, (_, index) => from + index)
      awareness.apply(owner, update(...ids.map((id): Row => [id, 1, USER])), 2)
      awareness.apply(owner, update(...ids.map((id): Row => [id, 2, 'null'])), 2)
    }
    at(1_000_000, () => removeMany(1, 10_000))
    at(1_000_000, () => removeMany(10_001, 10_001))
    // id 1 was forgotten to make room; id 2 is still remembered
    at(1_000_000, () => awareness.apply(viewer, update([1, 5, USER], [2, 5, USER]), 2))
    assert.isTrue(awareness.entries.has(1))
    assert.isFalse(awareness.entries.has(2))
    // exactly 30 s old is still remembered: one more removal then forgets only the oldest
    at(1_030_000, () => removeMany(10_002, 10_002))
    at(1_000_000, () => awareness.apply(viewer, update([2, 5, USER], [3, 5, USER]), 2))
    assert.isTrue(awareness.entries.has(2))
    assert.isFalse(awareness.entries.has(3))

    // 31 s later every remembered removal has expired: one more forgets all of them at once
    at(1_031_000, () => removeMany(20_001, 20_001))
    // seen from the time they were made, they would still be remembered
    at(1_000_000, () => awareness.apply(viewer, update([3, 5, USER], [10_001, 5, USER]), 2))
    assert.isTrue(awareness.entries.has(3))
    assert.isTrue(awareness.entries.has(10_001))
    at(1_031_000, () => awareness.apply(viewer, update([20_001, 5, USER]), 2))
    assert.isFalse(awareness.entries.has(20_001), 'the newest removal is remembered')
  })

  test('a closed connection’s ids are removed for every peer, with a newer clock', ({ assert }) => {
    const awareness = relay()
    const leaving: AwarenessPeer = { seq: 1 }
    const staying: AwarenessPeer = { seq: 2 }
    awareness.apply(leaving, update([1, 4, USER], [2, 1, USER]), 2)
    awareness.apply(staying, update([3, 1, USER]), 2)
    awareness.takeOutgoing()

    assert.isTrue(awareness.removeOwnedBy(leaving, 2))
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [
      [1, 5, 'null'],
      [2, 2, 'null'],
    ])
    assert.deepEqual(
      states(awareness).map(([id]) => id),
      [3]
    )
    assert.isFalse(awareness.removeOwnedBy(leaving, 2))
    assert.isFalse(awareness.pending)
    // its relays after the removal are stale
    awareness.apply(staying, update([1, 9, USER]), 2)
    assert.isFalse(awareness.entries.has(1))
  })

  test('other instances’ clients not relayed for maxAgeMs expire', ({ assert }) => {
    const awareness = relay()
    awareness.tracksLocal = true
    const remote: AwarenessPeer = { seq: 0, remote: true }
    at(1_000_000, () => awareness.apply(remote, update([1, 1, USER], [2, 1, USER]), 1))
    at(1_010_000, () => awareness.apply(remote, update([2, 2, USER]), 1))
    awareness.takeOutgoing()

    assert.isFalse(at(1_010_000, () => awareness.expireRemote(remote, 10_000, 1)))
    assert.isTrue(at(1_010_001, () => awareness.expireRemote(remote, 10_000, 1)))
    assert.deepEqual(
      states(awareness).map(([id]) => id),
      [2]
    )
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [[1, 2, 'null']])
    // an expiry is this instance's view of another's client: never sent back to the cluster
    assert.isNull(awareness.takeLocalOutgoing())
    // a late relay of the state it had is stale; its next renewal (a newer clock) is not
    at(1_010_002, () => awareness.apply(remote, update([1, 1, USER], [1, 2, USER]), 1))
    assert.isFalse(awareness.entries.has(1))
    at(1_010_003, () => awareness.apply(remote, update([1, 3, USER]), 1))
    assert.isTrue(awareness.entries.has(1))
  })

  test('only this instance’s own changes are kept for the cluster, and only when asked', ({
    assert,
  }) => {
    const awareness = relay()
    const local: AwarenessPeer = { seq: 1 }
    const remote: AwarenessPeer = { seq: 0, remote: true }
    awareness.apply(local, update([1, 1, USER]), 1)
    assert.isNull(awareness.takeLocalOutgoing(), 'not tracked on a single instance')

    awareness.tracksLocal = true
    awareness.apply(local, update([1, 2, USER]), 1)
    awareness.apply(remote, update([2, 1, USER]), 1)
    assert.deepEqual(rowsOf(awareness.takeLocalOutgoing()!), [[1, 2, USER]])
    assert.isNull(awareness.takeLocalOutgoing())
    assert.deepEqual(rowsOf(awareness.localSnapshot()!), [[1, 2, USER]])

    awareness.removeOwnedBy(local, 1)
    assert.deepEqual(rowsOf(awareness.takeLocalOutgoing()!), [[1, 3, 'null']])
    assert.isNull(awareness.localSnapshot())
    assert.deepEqual(frameRows(awareness.takeOutgoing()), [
      [1, 3, 'null'],
      [2, 1, USER],
    ])
  })

  test('the snapshot holds every current state and is encoded again after a change', ({
    assert,
  }) => {
    const awareness = relay()
    const owner: AwarenessPeer = { seq: 1 }
    assert.deepEqual(frameRows(awareness.snapshot()), [])
    awareness.apply(owner, update([1, 1, USER]), 1)
    const first = awareness.snapshot()
    assert.strictEqual(awareness.snapshot(), first)
    assert.deepEqual(frameRows(first), [[1, 1, USER]])
    awareness.apply(owner, update([1, 2, '{"cursor":3}']), 1)
    assert.deepEqual(frameRows(awareness.snapshot()), [[1, 2, '{"cursor":3}']])
  })

  test('clear forgets states, removals and what was waiting to be sent', ({ assert }) => {
    const awareness = relay()
    awareness.tracksLocal = true
    const viewer: AwarenessPeer = { seq: 1 }
    const owner: AwarenessPeer = { seq: 2 }
    awareness.apply(owner, update([1, 1, USER], [2, 1, USER]), 2)
    awareness.apply(owner, update([2, 2, 'null']), 2)
    awareness.snapshot()
    awareness.clear()
    assert.equal(awareness.size, 0)
    assert.isFalse(awareness.pending)
    assert.isNull(awareness.takeOutgoing())
    assert.isNull(awareness.takeLocalOutgoing())
    assert.deepEqual(frameRows(awareness.snapshot()), [])
    awareness.apply(viewer, update([2, 1, USER]), 2)
    assert.equal(awareness.entries.get(2)?.owner, viewer)
  })
})
