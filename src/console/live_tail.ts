import type { HttpContext } from '@adonisjs/core/http'
import debug from './debug.ts'
import { ConsoleInvalidQueryException } from './errors.ts'
import { readJsonBody } from './http/read_body.ts'
import type { ConsoleEntry, ConsoleEntrySummary } from './types.ts'

/** The one channel the dashboard subscribes to */
export const LIVE_TAIL_CHANNEL = 'atrium/console/live'

/** The most summaries one flush pushes; a larger flush sends its newest and counts the rest */
export const MAX_LIVE_ENTRIES = 100

/** The part of `@adonisjs/transmit`'s service the live tail uses */
export interface TransmitLike {
  authorize(channel: string, callback: (ctx: HttpContext) => boolean | Promise<boolean>): void
  broadcast(channel: string, payload?: any): void
  getSubscribersFor(channel: string): string[]
  createStream(params: {
    uid: string
    context: HttpContext
    request: any
    response: any
    injectResponseHeaders?: Record<string, any>
  }): any
  subscribe(params: { uid: string; channel: string; context: HttpContext }): Promise<boolean>
  unsubscribe(params: { uid: string; channel: string; context: HttpContext }): Promise<boolean>
}

/** What one live-tail message carries: summaries, never an entry's content */
export interface LiveTailMessage {
  entries: ConsoleEntrySummary[]
  /** Entries of the same flush left out past `MAX_LIVE_ENTRIES` */
  skipped: number
}

/**
 * Pushes the summaries of each flush's written entries to the dashboards
 * subscribed to `LIVE_TAIL_CHANNEL`: what the tail shows is what a click
 * opens. Nothing is sent while recording is paused, and nothing is built when
 * no dashboard listens, unless a transport fans messages out to other app
 * instances whose dashboards this one cannot see.
 */
export class LiveTail {
  #transmit: TransmitLike
  #fansOut: boolean
  #paused: () => boolean
  /** Messages sent, for the health view */
  sent = 0

  constructor(transmit: TransmitLike, options: { fansOut: boolean; paused: () => boolean }) {
    this.#transmit = transmit
    this.#fansOut = options.fansOut
    this.#paused = options.paused
  }

  /** Lets only readers of the console subscribe, whichever route they subscribe through */
  authorize(canRead: (ctx: HttpContext) => Promise<boolean>) {
    this.#transmit.authorize(LIVE_TAIL_CHANNEL, canRead)
  }

  /** Never throws: a failed push must not fail the flush that wrote the entries */
  publish(entries: ConsoleEntry[]) {
    if (entries.length === 0 || this.#paused()) return
    try {
      if (!this.#fansOut && this.#transmit.getSubscribersFor(LIVE_TAIL_CHANNEL).length === 0) return
      const newest = entries.slice(-MAX_LIVE_ENTRIES)
      const message: LiveTailMessage = {
        entries: newest.map(({ content: _content, ...summary }) => summary),
        skipped: entries.length - newest.length,
      }
      this.#transmit.broadcast(LIVE_TAIL_CHANNEL, message as any)
      this.sent++
    } catch (error) {
      debug('live tail push failed: %s', (error as Error)?.message)
    }
  }

  /**
   * The three routes `@adonisjs/transmit-client` calls, mounted under the
   * console's API so they carry its session cookie and pass its gates. Only
   * the live-tail channel can be subscribed to through them.
   */
  handlers() {
    const transmit = this.#transmit
    return {
      events: (ctx: HttpContext) => {
        const uid = identifier(ctx.request.qs().uid)
        if (!uid) throw new ConsoleInvalidQueryException('"uid" is required', 'uid')
        const stream = transmit.createStream({
          uid,
          context: ctx,
          request: ctx.request.request,
          response: ctx.response.response,
          injectResponseHeaders: ctx.response.getHeaders(),
        })
        return ctx.response.stream(stream)
      },
      subscribe: (ctx: HttpContext) => this.#subscription(ctx, 'subscribe'),
      unsubscribe: (ctx: HttpContext) => this.#subscription(ctx, 'unsubscribe'),
    }
  }

  async #subscription(ctx: HttpContext, action: 'subscribe' | 'unsubscribe') {
    // read here when the host has no bodyparser on the console's routes
    const body = await readJsonBody(ctx)
    const uid = identifier(body.uid)
    const channel = identifier(body.channel)
    if (!uid) throw new ConsoleInvalidQueryException('"uid" is required', 'uid')
    if (channel !== LIVE_TAIL_CHANNEL) {
      throw new ConsoleInvalidQueryException(
        `Only the channel "${LIVE_TAIL_CHANNEL}" is offered here`,
        'channel'
      )
    }
    // the console's gates have passed already: a refusal here means no event stream has this uid
    const done = await this.#transmit[action]({ uid, channel, context: ctx })
    if (!done) throw new ConsoleInvalidQueryException('No open event stream has this uid', 'uid')
    return ctx.response.noContent()
  }
}

/** A client-chosen id (transmit-client sends a UUID), bounded */
function identifier(value: unknown) {
  return typeof value === 'string' && value.length > 0 && value.length <= 200 ? value : null
}
