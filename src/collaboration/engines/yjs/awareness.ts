import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import type { CollaborationLimits } from '../../limits.ts'
import { CLOSE_CODES } from '../../server/close_codes.ts'

export const MESSAGE_AWARENESS = 1

/** What the relay needs to know of a connection */
export interface AwarenessPeer {
  /** Order of arrival in the room: later connections are newer */
  seq: number
  /** Client ids this connection owns (created on first use) */
  clients?: Set<number>
  /** The other app instances' clients, relayed through the cluster */
  remote?: true
}

interface Entry {
  clock: number
  /** JSON of the state, kept encoded: the server relays it without parsing */
  state: string
  owner: AwarenessPeer
  /** When another instance last relayed it (remote entries only) */
  seenAt?: number
}

/** A removed client id: stale relays of it from older connections are ignored */
interface Tombstone {
  clock: number
  owner: number
  /** Connections with a seq up to this one joined before the removal */
  seq: number
  at: number
}

/** How long a removed id is remembered: y-protocols' own timeout for a silent client */
const TOMBSTONE_MS = 30_000
const MAX_TOMBSTONES = 10_000

/**
 * Encodes an awareness message from `[clientId, clock, state JSON]` entries.
 */
export function awarenessFrame(entries: Iterable<[number, number, string]>): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_AWARENESS)
  encoding.writeVarUint8Array(encoder, awarenessUpdate(entries))
  return encoding.toUint8Array(encoder)
}

/**
 * Encodes the awareness update (y-protocols' encoding, without the message
 * type) of `[clientId, clock, state JSON]` entries.
 */
export function awarenessUpdate(entries: Iterable<[number, number, string]>): Uint8Array {
  const inner = encoding.createEncoder()
  const list = [...entries]
  encoding.writeVarUint(inner, list.length)
  for (const [clientId, clock, state] of list) {
    encoding.writeVarUint(inner, clientId)
    encoding.writeVarUint(inner, clock)
    encoding.writeVarString(inner, state)
  }
  return encoding.toUint8Array(inner)
}

/**
 * The awareness of one document. A client id belongs to the connection that
 * first announced it: only that connection changes or removes it (y-websocket
 * clients relay every state they receive, and a viewer must not overwrite or
 * delete another user's presence). A closed connection's ids are removed at
 * once, for every peer.
 */
export class AwarenessRelay {
  readonly entries = new Map<number, Entry>()
  #tombstones = new Map<number, Tombstone>()
  #outgoing?: Map<number, [number, number, string]>
  /** The part of #outgoing this instance's own connections changed */
  #outgoingLocal?: Map<number, [number, number, string]>
  #snapshot?: Uint8Array

  constructor(readonly limits: CollaborationLimits) {}

  get size() {
    return this.entries.size
  }

  /** True when changes wait to be broadcast */
  get pending() {
    return Boolean(this.#outgoing?.size)
  }

  /**
   * Applies an awareness update from `peer`. Returns a close code when the
   * peer broke a cap (the update is then dropped from that entry on), or
   * null; `joins` is the newest connection seq of the room.
   */
  apply(peer: AwarenessPeer, update: Uint8Array, joins: number): number | null {
    const decoder = decoding.createDecoder(update)
    const count = decoding.readVarUint(decoder)
    for (let index = 0; index < count; index++) {
      const clientId = decoding.readVarUint(decoder)
      const clock = decoding.readVarUint(decoder)
      const start = decoder.pos
      const state = decoding.readVarString(decoder)
      if (decoder.pos - start > this.limits.maxAwarenessStateBytes) {
        return CLOSE_CODES.tooLarge
      }
      const known = this.entries.get(clientId)
      if (known) {
        if (known.owner !== peer || known.clock > clock) {
          // a relay, a forgery or a stale state: the owner's word stands
          continue
        }
        if (state === 'null') {
          this.#remove(clientId, known, clock, joins)
        } else {
          known.clock = clock
          known.state = state
          if (peer.remote) {
            known.seenAt = Date.now()
          }
        }
      } else {
        if (state === 'null' || !this.#mayClaim(peer, clientId, clock)) {
          continue
        }
        const owned = (peer.clients ??= new Set())
        // the other instances' clients are capped by those instances
        if (owned.size >= this.limits.maxAwarenessClients && !peer.remote) {
          return CLOSE_CODES.tooLarge
        }
        owned.add(clientId)
        this.#tombstones.delete(clientId)
        this.entries.set(clientId, {
          clock,
          state,
          owner: peer,
          ...(peer.remote ? { seenAt: Date.now() } : {}),
        })
      }
      this.#queue(clientId, clock, state, !peer.remote)
    }
    return null
  }

  /**
   * An id removed earlier may be claimed again by a connection that joined
   * after the removal (the same client reconnecting) or by its former owner
   * with a newer clock; an older connection relaying it is stale.
   */
  #mayClaim(peer: AwarenessPeer, clientId: number, clock: number) {
    const tombstone = this.#tombstones.get(clientId)
    if (!tombstone) {
      return true
    }
    if (Date.now() - tombstone.at > TOMBSTONE_MS) {
      this.#tombstones.delete(clientId)
      return true
    }
    if (peer.seq > tombstone.seq) {
      return true
    }
    return tombstone.owner === peer.seq && clock > tombstone.clock
  }

  #remove(clientId: number, entry: Entry, clock: number, joins: number) {
    this.entries.delete(clientId)
    entry.owner.clients?.delete(clientId)
    if (this.#tombstones.size >= MAX_TOMBSTONES) {
      const now = Date.now()
      for (const [id, tombstone] of this.#tombstones) {
        if (this.#tombstones.size < MAX_TOMBSTONES && now - tombstone.at <= TOMBSTONE_MS) {
          break
        }
        this.#tombstones.delete(id)
      }
    }
    this.#tombstones.set(clientId, { clock, owner: entry.owner.seq, seq: joins, at: Date.now() })
  }

  /**
   * Removes every id `peer` owns, queueing their removal for every peer.
   * Returns true when something was removed.
   */
  removeOwnedBy(peer: AwarenessPeer, joins: number): boolean {
    let removed = false
    for (const clientId of [...(peer.clients ?? [])]) {
      const entry = this.entries.get(clientId)
      if (entry && entry.owner === peer) {
        this.#remove(clientId, entry, entry.clock + 1, joins)
        this.#queue(clientId, entry.clock + 1, 'null', !peer.remote)
        removed = true
      }
    }
    return removed
  }

  /**
   * Removes the other instances' clients not relayed for `maxAgeMs` (their
   * instance stopped: a live client renews its state every 15 s).
   */
  expireRemote(peer: AwarenessPeer, maxAgeMs: number, joins: number): boolean {
    const oldest = Date.now() - maxAgeMs
    let removed = false
    for (const clientId of [...(peer.clients ?? [])]) {
      const entry = this.entries.get(clientId)
      if (entry && entry.owner === peer && (entry.seenAt ?? 0) < oldest) {
        this.#remove(clientId, entry, entry.clock + 1, joins)
        this.#queue(clientId, entry.clock + 1, 'null', false)
        removed = true
      }
    }
    return removed
  }

  #queue(clientId: number, clock: number, state: string, local: boolean) {
    this.#snapshot = undefined
    ;(this.#outgoing ??= new Map()).set(clientId, [clientId, clock, state])
    if (local && this.tracksLocal) {
      ;(this.#outgoingLocal ??= new Map()).set(clientId, [clientId, clock, state])
    }
  }

  /** Set when another instance needs this instance's changes (multiInstance) */
  tracksLocal = false

  /** The awareness update (without the message type) of this instance's own changes since the last call */
  takeLocalOutgoing(): Uint8Array | null {
    const outgoing = this.#outgoingLocal
    this.#outgoingLocal = undefined
    return outgoing?.size ? awarenessUpdate(outgoing.values()) : null
  }

  /** The frame of the changes since the last call, or null */
  takeOutgoing(): Uint8Array | null {
    const outgoing = this.#outgoing
    this.#outgoing = undefined
    return outgoing?.size ? awarenessFrame(outgoing.values()) : null
  }

  /** The awareness update of every state this instance's own connections own, or null */
  localSnapshot(): Uint8Array | null {
    const local = [...this.entries]
      .filter(([, entry]) => !entry.owner.remote)
      .map(([clientId, entry]): [number, number, string] => [clientId, entry.clock, entry.state])
    return local.length ? awarenessUpdate(local) : null
  }

  /** Every current state, encoded once until one changes */
  snapshot(): Uint8Array {
    this.#snapshot ??= awarenessFrame(
      [...this.entries].map(([clientId, entry]) => [clientId, entry.clock, entry.state])
    )
    return this.#snapshot
  }

  clear() {
    this.entries.clear()
    this.#tombstones.clear()
    this.#outgoing = undefined
    this.#outgoingLocal = undefined
    this.#snapshot = undefined
  }
}
