import { batchStorage } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/** An event name as `include`/`exclude` take it: exact, `prefix:*`, or a RegExp */
export type EventNamePattern = string | RegExp

/**
 * Events other watchers record, or the framework emits for its own plumbing
 * (every container resolution, every request, every session commit): skipped
 * unless `include` names them.
 */
export const DEFAULT_EXCLUDED_EVENTS: readonly string[] = [
  'container_binding:resolved',
  'http:*',
  'db:*',
  'mail:*',
  'queued:mail:*',
  'cache:*',
  'redis:*',
  'session:*',
  'session_auth:*',
  'access_tokens_auth:*',
  'basic_auth:*',
  'transmit:*',
  'atrium:*',
]

/** Names whose decision is kept; an app emitting more distinct names is matched each time */
const MAX_REMEMBERED = 1000

export interface EventWatcherOptions {
  include?: EventNamePattern[]
  exclude?: EventNamePattern[]
  payloads?: boolean
  maxPayloadBytes?: number
}

/** The app emitter, as far as this watcher needs it */
export interface EmitterLike {
  emit(event: unknown, data?: unknown): Promise<void>
  emitSerial(event: unknown, data?: unknown): Promise<void>
}

function matches(name: string, patterns: readonly EventNamePattern[]) {
  for (const pattern of patterns) {
    if (typeof pattern === 'string') {
      if (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern) {
        return true
      }
    } else {
      pattern.lastIndex = 0
      if (pattern.test(name)) return true
    }
  }
  return false
}

/** An event's name: the string, a symbol's description, or a class-based event's class name */
export function eventName(event: unknown): string {
  if (typeof event === 'string') return event
  if (typeof event === 'function') return event.name || '[anonymous class]'
  if (typeof event === 'symbol') return event.description ?? '[symbol]'
  return String(event)
}

/**
 * Records the app emitter's events as `event` entries: the app's own (string
 * names and class-based events, named by their class), not the framework's
 * plumbing nor what other watchers already record (see
 * `DEFAULT_EXCLUDED_EVENTS`). An event emitted during a request joins its
 * batch. The payload is redacted like a body and its JSON capped at
 * `maxPayloadBytes`; a longer one keeps its first bytes as text, marked
 * truncated.
 */
export class EventWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #include?: EventNamePattern[]
  #exclude: EventNamePattern[]
  #payloads: boolean
  #maxPayloadBytes: number
  /** Decision per event (a name, a class or a symbol): one lookup on the emitter's path */
  #decisions = new Map<unknown, boolean>()
  #emitter?: EmitterLike
  #originals?: Pick<EmitterLike, 'emit' | 'emitSerial'>

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: EventWatcherOptions
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#include = options.include
    this.#exclude = options.exclude ?? []
    this.#payloads = options.payloads !== false
    this.#maxPayloadBytes = options.maxPayloadBytes ?? 8192
  }

  /**
   * Wraps this app's emitter's `emit` and `emitSerial` (the instance, not
   * the class: another app in the process keeps its own). Not `onAny`: an
   * any-listener makes `emitter.hasListeners()` true for every event, and the
   * HTTP server would then time each request for `http:request_completed`.
   * The wrapper runs in the emitter's caller's async context, so an event
   * emitted during a request joins its batch.
   */
  install(emitter: EmitterLike) {
    if (this.#emitter) return
    const originals = { emit: emitter.emit, emitSerial: emitter.emitSerial }
    const watcher = this
    emitter.emit = function (this: EmitterLike, event: unknown, data?: unknown) {
      watcher.record(event, data)
      return originals.emit.call(this, event, data)
    }
    emitter.emitSerial = function (this: EmitterLike, event: unknown, data?: unknown) {
      watcher.record(event, data)
      return originals.emitSerial.call(this, event, data)
    }
    this.#emitter = emitter
    this.#originals = originals
  }

  /** Gives the emitter its own methods back */
  uninstall() {
    if (!this.#emitter || !this.#originals) return
    this.#emitter.emit = this.#originals.emit
    this.#emitter.emitSerial = this.#originals.emitSerial
    this.#emitter = undefined
    this.#originals = undefined
  }

  /** Whether an event is recorded: `exclude` always wins, `include` replaces the defaults */
  recorded(name: string) {
    if (matches(name, this.#exclude)) return false
    if (this.#include) return matches(name, this.#include)
    return !matches(name, DEFAULT_EXCLUDED_EVENTS)
  }

  #decide(event: unknown) {
    const known = this.#decisions.get(event)
    if (known !== undefined) return known
    const decision = this.recorded(eventName(event))
    if (this.#decisions.size < MAX_REMEMBERED) this.#decisions.set(event, decision)
    return decision
  }

  /** Records one emitted event; never throws */
  record(event: unknown, data: unknown) {
    try {
      if (!this.#decide(event)) return
      // the recorder would drop it: spare the redaction
      if (batchStorage.getStore()?.ignored || this.#recorder.paused) return
      const name = eventName(event)
      const content: Record<string, unknown> = {
        name,
        classBased: typeof event === 'function',
      }
      const tags: string[] = []
      if (this.#payloads) {
        const payload = redactValue(data, this.#config.redact)
        const json = JSON.stringify(payload) ?? 'null'
        const bytes = Buffer.byteLength(json)
        content.payloadBytes = bytes
        if (bytes > this.#maxPayloadBytes) {
          // the first bytes as text: the stored entry stays bounded whatever the app emits
          content.payload = Buffer.from(json)
            .subarray(0, this.#maxPayloadBytes)
            .toString('utf8')
            .replace(/\uFFFD$/, '')
          content.truncated = true
          tags.push('truncated')
        } else {
          content.payload = payload
        }
      }
      this.#recorder.record({
        type: 'event',
        summary: name.slice(0, 255),
        status: null,
        method: null,
        durationMs: null,
        slow: false,
        tags,
        content,
      })
    } catch {
      // recording never fails an emit
    }
  }
}
