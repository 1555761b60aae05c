import { STATUS_CODES } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Duplex } from 'node:stream'
import type { WebSocket } from 'ws'
import debug from '../debug.ts'
import type { CollaborationLimits } from '../limits.ts'
import { CLOSE_CODES } from './close_codes.ts'

/** How long a socket closed by the server may take to answer the close frame */
const CLOSE_GRACE_MS = 1000

function destroyOnError(this: Duplex) {
  this.destroy()
}

/**
 * Answers an upgrade over HTTP (the socket never becomes a WebSocket) with
 * the Atrium error body, then destroys the socket.
 */
export function refuseUpgrade(socket: Duplex, status: number, code: string, message: string) {
  // attached first: a client that reset the connection must not crash the process
  socket.on('error', destroyOnError)
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const body = JSON.stringify({ errors: [{ code, message }] })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy()
  )
  // a client that never reads must not keep the socket either
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref()
}

/**
 * A token bucket: `burst` tokens, refilled at `perSecond`.
 */
export class TokenBucket {
  #tokens: number
  #at = performance.now()

  constructor(
    readonly perSecond: number,
    readonly burst: number
  ) {
    this.#tokens = burst
  }

  /** Takes one token; false when the bucket is empty */
  take(): boolean {
    const now = performance.now()
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond)
    this.#at = now
    if (this.#tokens < 1) {
      return false
    }
    this.#tokens--
    return true
  }
}

/** Users whose budgets are kept at once; past it the least recently seen go */
const MAX_TRACKED_USERS = 10_000

/**
 * Per-user state that outlives a connection: one message budget shared by
 * every connection the user opens (a client closed with 4429 that reconnects
 * finds its bucket as it left it), and the cool-down after a limit was broken.
 * Both maps are bounded (least recently seen first out).
 */
export class UserBudgets {
  #buckets = new Map<string, TokenBucket>()
  /** Users closed for breaking a limit, and until when their upgrades are refused */
  #cooldowns = new Map<string, number>()

  constructor(
    readonly limits: Pick<
      CollaborationLimits,
      'messagesPerSecond' | 'messageBurst' | 'abuseCooldownMs'
    >
  ) {}

  /** Refuses the user's upgrades for `abuseCooldownMs` */
  penalize(userId: string) {
    this.#cooldowns.delete(userId)
    if (this.#cooldowns.size >= MAX_TRACKED_USERS) {
      this.#cooldowns.delete(this.#cooldowns.keys().next().value!)
    }
    this.#cooldowns.set(userId, performance.now() + this.limits.abuseCooldownMs)
  }

  /** Milliseconds left of the user's cool-down, 0 when none */
  cooldownLeft(userId: string): number {
    const until = this.#cooldowns.get(userId)
    if (until === undefined) return 0
    const left = until - performance.now()
    if (left <= 0) {
      this.#cooldowns.delete(userId)
      return 0
    }
    return left
  }

  /** The user's message budget, created full on first use */
  for(userId: string): TokenBucket {
    let bucket = this.#buckets.get(userId)
    if (bucket) {
      // re-inserted, so iteration order is least recently seen first
      this.#buckets.delete(userId)
    } else {
      bucket = new TokenBucket(this.limits.messagesPerSecond, this.limits.messageBurst)
      if (this.#buckets.size >= MAX_TRACKED_USERS) {
        this.#buckets.delete(this.#buckets.keys().next().value!)
      }
    }
    this.#buckets.set(userId, bucket)
    return bucket
  }
}

function onGuardedError(this: WebSocket, error: Error) {
  // a protocol violation (unmasked frame, oversized payload) or a reset: ws has
  // already started closing with the right code; nothing else is needed
  debug('socket error: %s', error.message)
  const guard = (this as GuardedSocket)[GUARD]
  guard.closed = true
  setTimeout(() => this.terminate(), CLOSE_GRACE_MS).unref()
}

/**
 * A binary message framed once for every receiver: server frames are not
 * masked, so the same bytes (RFC 6455 header and payload) go to each socket.
 */
export interface SharedFrame {
  payload: Uint8Array
  wire: Buffer
}

export function sharedFrame(payload: Uint8Array): SharedFrame {
  const length = payload.byteLength
  const headerBytes = length < 126 ? 2 : length < 65_536 ? 4 : 10
  const wire = Buffer.allocUnsafe(headerBytes + length)
  // FIN and the binary opcode; no mask bit from a server
  wire[0] = 0x82
  if (length < 126) {
    wire[1] = length
  } else if (length < 65_536) {
    wire[1] = 126
    wire.writeUInt16BE(length, 2)
  } else {
    wire[1] = 127
    wire.writeBigUInt64BE(BigInt(length), 2)
  }
  wire.set(payload, headerBytes)
  return { payload, wire }
}

const SEND_OPTIONS = { binary: true, compress: false }

const GUARD = Symbol('atrium:collab:guard')
type GuardedSocket = WebSocket & { [GUARD]: SocketGuard }

/**
 * What every accepted WebSocket gets before anything else can fail: its
 * `error` listener, its rate limits and a bounded send queue.
 */
export class SocketGuard {
  /** True once the server decided to close: later messages are ignored */
  closed = false
  #messages: TokenBucket
  #queries: TokenBucket
  #maxBuffered: number
  /** The upgraded TCP socket, written to directly with pre-framed messages */
  #raw?: Duplex

  /**
   * `messages` is the user's budget (`UserBudgets`); without one, the
   * connection gets its own.
   */
  #onPolicyClose?: () => void

  constructor(
    readonly socket: WebSocket,
    limits: CollaborationLimits,
    messages?: TokenBucket,
    onPolicyClose?: () => void,
    raw?: Duplex
  ) {
    this.#onPolicyClose = onPolicyClose
    this.#raw = raw
    ;(socket as GuardedSocket)[GUARD] = this
    socket.on('error', onGuardedError)
    this.#messages = messages ?? new TokenBucket(limits.messagesPerSecond, limits.messageBurst)
    this.#queries = new TokenBucket(
      limits.awarenessQueriesPerSecond,
      Math.max(1, limits.awarenessQueriesPerSecond * 5)
    )
    this.#maxBuffered = limits.maxBufferedBytes
  }

  /**
   * Counts one incoming message; false (and the socket closing with 4429)
   * when the connection sends faster than its limit, or is already closing.
   */
  admit(): boolean {
    if (this.closed) {
      return false
    }
    if (!this.#messages.take()) {
      this.close(CLOSE_CODES.rateLimited, 'too many messages')
      return false
    }
    return true
  }

  /** Like `admit`, for the stricter awareness-query budget */
  admitQuery(): boolean {
    if (this.closed) {
      return false
    }
    if (!this.#queries.take()) {
      this.close(CLOSE_CODES.rateLimited, 'too many awareness queries')
      return false
    }
    return true
  }

  /**
   * Sends a binary frame unless the client has stopped reading: past
   * `maxBufferedBytes` queued, the socket is closed with 4408 instead.
   */
  send(frame: Uint8Array) {
    this.sendShared(sharedFrame(frame))
  }

  /**
   * `send` for a frame built once for many receivers. With the upgraded TCP
   * socket at hand its bytes are written straight to it: the server's
   * WebSocketServer never compresses and only sends buffers, so ws writes
   * every frame of its own synchronously and never holds one half-written.
   * A write that fails errors the TCP socket, which ws closes (the room then
   * drops the connection).
   */
  sendShared(frame: SharedFrame) {
    const socket = this.socket
    if (this.closed || socket.readyState !== 1) {
      return
    }
    if (socket.bufferedAmount + frame.wire.byteLength > this.#maxBuffered) {
      this.close(CLOSE_CODES.slowConsumer, 'slow consumer: not reading its messages')
      return
    }
    const raw = this.#raw
    if (raw && raw.writable) {
      raw.write(frame.wire)
    } else {
      socket.send(frame.payload, SEND_OPTIONS)
    }
  }

  /**
   * Closes once with a code and reason (what the client sends after it is
   * read and dropped); terminates the socket when the client does not answer
   * in time (a slow consumer's close
   * frame waits behind what it never read: it gets the grace time to read it).
   */
  close(code: number, reason: string) {
    if (this.closed) {
      return
    }
    this.closed = true
    debug('closing socket: %d %s', code, reason)
    const socket = this.socket
    if (socket.readyState === 0 || socket.readyState === 1) {
      socket.close(code, reason)
    }
    if (code === CLOSE_CODES.rateLimited || code === CLOSE_CODES.tooLarge) {
      this.#onPolicyClose?.()
    }
    if (code === CLOSE_CODES.rateLimited) {
      // a flooding client is not read any more: parsing its flood would cost
      // the CPU the limit protects; it is terminated after the grace time
      socket.pause()
    }
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref()
  }
}

/** The guard of a socket, attached when it was accepted */
export function guardOf(socket: WebSocket): SocketGuard {
  return (socket as GuardedSocket)[GUARD]
}
