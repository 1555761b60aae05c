import type { PresenceAwareness } from './types.ts'

/** The channel of automerge-repo's `Presence` this adapter publishes on */
const CHANNEL = 'atrium'

/** What the adapter uses of automerge-repo's `Presence` */
export interface AutomergePresenceLike {
  start(config: {
    initialState: Record<string, unknown>
    heartbeatMs?: number
    peerTtlMs?: number
  }): void
  stop(): void
  broadcast(channel: string, value: unknown): void
  getPeerStates(): { value: Record<string, { value: Record<string, unknown> }> }
  on(event: string, listener: (...args: any[]) => void): unknown
  off(event: string, listener: (...args: any[]) => void): unknown
}

export type AutomergePresenceClass = new (options: { handle: any }) => AutomergePresenceLike

export interface AutomergePresenceOptions {
  /** How often an idle client repeats its state, in ms (automerge-repo's default when absent) */
  heartbeatMs?: number
  /** How long a silent peer is kept, in ms (automerge-repo's default when absent) */
  peerTtlMs?: number
}

/** What one client publishes: its numeric id beside the awareness fields */
interface Published {
  clientId: number
  state: Record<string, unknown> | null
}

function isPublished(value: unknown): value is Published {
  const published = value as Published | undefined
  return (
    Number.isSafeInteger(published?.clientId) &&
    (published!.state === null || typeof published!.state === 'object')
  )
}

/**
 * Presence on an Automerge document with the interface of a Yjs awareness,
 * so `useAwareness` and `useCollabEditor` work on both engines. It runs on
 * automerge-repo's own `Presence` (ephemeral messages, heartbeats, a
 * goodbye on stop, peers dropped after their time to live); the server
 * relays those messages only between connections to the same document and
 * caps their size.
 */
export class AutomergeAwareness implements PresenceAwareness {
  /** A random id per client, as a Yjs awareness has */
  readonly clientID = Math.floor(Math.random() * 2 ** 31)
  #presence: AutomergePresenceLike
  #local: Record<string, unknown> | null = {}
  #listeners = new Set<(...args: any[]) => void>()
  #notify = () => {
    for (const listener of this.#listeners) listener()
  }

  constructor(
    Presence: AutomergePresenceClass,
    handle: unknown,
    options: AutomergePresenceOptions = {}
  ) {
    this.#presence = new Presence({ handle })
    for (const event of ['update', 'snapshot', 'goodbye', 'pruning']) {
      this.#presence.on(event, this.#notify)
    }
    this.#presence.start({
      initialState: { [CHANNEL]: this.#published() },
      ...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {}),
      ...(options.peerTtlMs ? { peerTtlMs: options.peerTtlMs } : {}),
    })
  }

  getLocalState() {
    return this.#local
  }

  /** Every client's state by client id, this one's included, as a Yjs awareness answers */
  getStates(): Map<number, Record<string, unknown>> {
    const states = new Map<number, Record<string, unknown>>()
    if (this.#local) states.set(this.clientID, this.#local)
    for (const peer of Object.values(this.#presence.getPeerStates().value)) {
      const published = peer.value?.[CHANNEL]
      if (isPublished(published) && published.state && published.clientId !== this.clientID) {
        states.set(published.clientId, published.state)
      }
    }
    return states
  }

  setLocalState(state: Record<string, unknown> | null) {
    this.#local = state
    this.#presence.broadcast(CHANNEL, this.#published())
    this.#notify()
  }

  setLocalStateField(field: string, value: unknown) {
    if (this.#local) this.setLocalState({ ...this.#local, [field]: value })
  }

  on(_event: 'change', listener: (...args: any[]) => void) {
    this.#listeners.add(listener)
  }

  off(_event: 'change', listener: (...args: any[]) => void) {
    this.#listeners.delete(listener)
  }

  /** Says goodbye, so peers forget this client at once instead of after the time to live */
  destroy() {
    for (const event of ['update', 'snapshot', 'goodbye', 'pruning']) {
      this.#presence.off(event, this.#notify)
    }
    this.#presence.stop()
    this.#listeners.clear()
  }

  #published(): Published {
    return { clientId: this.clientID, state: this.#local }
  }
}
