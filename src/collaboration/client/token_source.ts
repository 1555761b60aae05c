import { fetchToken } from './rest.ts'
import type { CollabClientConfig, CollabTokenInfo } from './types.ts'

/** A token this close to its expiry is not used for a new connection */
const EXPIRY_SLACK_MS = 1_000
/** The longest a token is refreshed ahead of its expiry */
const MAX_REFRESH_LEAD_MS = 60_000

/** Milliseconds since epoch at which a token expires, or null when it does not say */
export function expiryOf(info: CollabTokenInfo): number | null {
  if (info.expiresAt === undefined) return null
  const at = Date.parse(info.expiresAt)
  return Number.isFinite(at) ? at : Number.NaN
}

/** True when an entry of `initialTokens` can open a connection */
function usable(info: unknown): info is CollabTokenInfo {
  const entry = info as CollabTokenInfo | null
  if (!entry || typeof entry.token !== 'string' || !entry.token) return false
  if (typeof entry.wsUrl !== 'string' || !entry.wsUrl) return false
  const expiry = expiryOf(entry)
  return expiry === null || expiry - EXPIRY_SLACK_MS > Date.now()
}

/**
 * The tokens of one document: the pre-issued one first (once), then the
 * token endpoint. Once a token is in hand, a refresh is scheduled ahead of
 * its expiry so that a reconnect never presents an expired token.
 */
export class TokenSource {
  #docName: string
  #config: CollabClientConfig
  #initial: CollabTokenInfo | undefined
  #current: CollabTokenInfo | null = null
  #timer: ReturnType<typeof setTimeout> | undefined
  #inflight: Promise<CollabTokenInfo> | null = null
  #listeners = new Set<(info: CollabTokenInfo) => void>()
  #failures = 0
  #stopped = false
  /** How many tokens came from the endpoint (for diagnostics and tests) */
  fetched = 0

  constructor(docName: string, config: CollabClientConfig, initial?: CollabTokenInfo) {
    this.#docName = docName
    this.#config = config
    this.#initial = initial ?? config.initialTokens?.[docName]
  }

  /** The token in hand, or null before the first one */
  get current(): CollabTokenInfo | null {
    return this.#current
  }

  /** True when the token in hand is missing or (nearly) expired */
  get expired(): boolean {
    if (!this.#current) return true
    const expiry = expiryOf(this.#current)
    return expiry !== null && !(expiry - EXPIRY_SLACK_MS > Date.now())
  }

  /** A usable token: the one in hand, the pre-issued one (first call only), or a fetched one */
  async get(): Promise<CollabTokenInfo> {
    this.#stopped = false
    if (this.#current && !this.expired) return this.#current
    const initial = this.#initial
    this.#initial = undefined
    if (usable(initial)) {
      this.#accept(initial)
      return initial
    }
    return this.refresh()
  }

  /** Fetches a new token now (one request at a time) */
  refresh(): Promise<CollabTokenInfo> {
    this.#inflight ??= fetchToken(this.#config, this.#docName)
      .then((info) => {
        this.fetched++
        this.#failures = 0
        this.#accept(info)
        return info
      })
      .finally(() => {
        this.#inflight = null
      })
    return this.#inflight
  }

  /** Called with each new token; returns an unsubscribe */
  onToken(listener: (info: CollabTokenInfo) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Cancels the scheduled refresh; `get()` starts again */
  stop() {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #accept(info: CollabTokenInfo) {
    this.#current = info
    for (const listener of this.#listeners) listener(info)
    this.#schedule()
  }

  #schedule() {
    clearTimeout(this.#timer)
    const expiry = this.#current ? expiryOf(this.#current) : null
    if (this.#stopped || expiry === null || Number.isNaN(expiry)) return
    const left = expiry - Date.now()
    // a quarter of the lifetime ahead, at most a minute: a 5-minute token is
    // renewed a minute early, a 4-second one a second early
    const wait = Math.max(0, left - Math.min(MAX_REFRESH_LEAD_MS, left / 4))
    this.#timer = setTimeout(() => this.#refreshInBackground(), wait)
  }

  #refreshInBackground() {
    this.refresh().catch(() => {
      // the live connection does not need the token: retry with backoff,
      // and a reconnect asks again on its own
      this.#failures++
      if (this.#stopped) return
      const wait = Math.min(30_000, 500 * 2 ** this.#failures)
      this.#timer = setTimeout(() => this.#refreshInBackground(), wait)
    })
  }
}
