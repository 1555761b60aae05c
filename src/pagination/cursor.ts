import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { CursorValues, Keyset } from './types.ts'

/**
 * Largest cursor accepted; anything longer is ignored unread.
 */
export const MAX_CURSOR_LENGTH = 2048

/**
 * A date read from a cursor. It is a real `Date` (millisecond precision) and
 * keeps the database's own text of the value in `precise`, with every
 * microsecond, so the next page starts exactly after the boundary row.
 */
export class KeysetDate extends Date {
  constructor(
    value: string | number | Date,
    readonly precise?: string
  ) {
    super(value instanceof Date ? value.getTime() : value)
  }
}

export interface CursorOptions {
  /** Sort fingerprint (`keysetFingerprint`); a cursor made for another sort is rejected */
  fingerprint?: string
  /** HMAC-SHA256 secret; a cursor without a valid signature is rejected */
  secret?: string
}

/**
 * The direction in which, when the cursor was made, the cursor's row was the
 * last of its segment (the row after it held another value of a few-valued
 * leading sort column, or crossed a NULL block): the next page in that
 * direction starts past the cursor's tie and may be read as one statement. A
 * hint for speed only; every page still reads the tie.
 */
export type CursorSegmentEnd = 'after' | 'before'

export interface DecodedCursor {
  values: CursorValues
  segmentEnd?: CursorSegmentEnd
}

type Encoded = string | number | boolean | null | { d: string; p?: string }

function encodeValue(value: unknown): Encoded {
  if (value === null || value === undefined) return null
  if (value instanceof Date) {
    const precise = value instanceof KeysetDate ? value.precise : undefined
    return precise ? { d: value.toISOString(), p: precise } : { d: value.toISOString() }
  }
  if (typeof value === 'object' && 'toJSDate' in value && typeof value.toJSDate === 'function') {
    return { d: (value.toJSDate() as Date).toISOString() }
  }
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number' && Number.isFinite(value)) return value
  throw new TypeError(`Cannot put a ${typeof value} in a cursor`)
}

function decodeValue(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (value && typeof value === 'object' && typeof (value as { d?: unknown }).d === 'string') {
    const { d, p } = value as { d: string; p?: unknown }
    if (p !== undefined && typeof p !== 'string') return undefined
    // An invalid date stays one: the runner answers it with a 400 naming the cursor
    return new KeysetDate(d.length <= 64 ? d : Number.NaN, p as string | undefined)
  }
  return undefined
}

function sign(payload: string, secret: string) {
  return createHmac('sha256', secret).update(payload).digest('base64url')
}

/**
 * A short hash of the keyset's fields and directions: a cursor carries it so
 * that a cursor taken under one sort is never applied to another.
 */
export function keysetFingerprint(keyset: Keyset): string {
  const shape = keyset.map(({ field, direction }) => `${field}:${direction}`).join(',')
  return createHash('sha256').update(shape).digest('base64url').slice(0, 10)
}

/**
 * Turns boundary values into an opaque cursor: base64url JSON, dates kept as
 * dates (with the database's full precision when known), optionally signed.
 */
export function encodeCursor(
  values: CursorValues,
  options: CursorOptions & { segmentEnd?: CursorSegmentEnd } = {}
): string {
  const body: { v: Encoded[]; f?: string; e?: CursorSegmentEnd } = { v: values.map(encodeValue) }
  if (options.fingerprint) body.f = options.fingerprint
  if (options.segmentEnd) body.e = options.segmentEnd
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url')
  return options.secret ? `${payload}.${sign(payload, options.secret)}` : payload
}

/**
 * Reads a cursor's boundary values back; null when it is malformed, too long,
 * signed wrongly (or unsigned while a secret is set), or made for another sort.
 */
export function decodeCursor(cursor: unknown, options: CursorOptions = {}): CursorValues | null {
  return readCursor(cursor, options)?.values ?? null
}

/**
 * `decodeCursor` with the cursor's segment-end hint.
 */
export function readCursor(cursor: unknown, options: CursorOptions = {}): DecodedCursor | null {
  const read = inspectCursor(cursor, options)
  if (read.kind !== 'cursor') return null
  const invalidDate = read.cursor.values.some(
    (value) => value instanceof Date && Number.isNaN(value.getTime())
  )
  return invalidDate ? null : read.cursor
}

/**
 * What a cursor turned out to be: unreadable (malformed, too long, badly
 * signed: ignored), readable but made for another sort (a request error),
 * or a cursor.
 */
export type InspectedCursor =
  { kind: 'unreadable' } | { kind: 'foreign' } | { kind: 'cursor'; cursor: DecodedCursor }

/**
 * Reads a cursor and says which of the three it is (see `InspectedCursor`).
 */
export function inspectCursor(cursor: unknown, options: CursorOptions = {}): InspectedCursor {
  const unreadable = { kind: 'unreadable' } as const
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) {
    return unreadable
  }
  let payload = cursor
  if (options.secret) {
    const dot = cursor.indexOf('.')
    if (dot === -1) return unreadable
    payload = cursor.slice(0, dot)
    const given = Buffer.from(cursor.slice(dot + 1))
    const expected = Buffer.from(sign(payload, options.secret))
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return unreadable
  }
  if (!/^[A-Za-z0-9_-]+$/.test(payload)) return unreadable
  let body: unknown
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return unreadable
  }
  if (!isCursorBody(body)) return unreadable
  if (options.fingerprint !== undefined && body.f !== options.fingerprint) {
    // Without a fingerprint it is no cursor this library made for a runner
    return typeof body.f === 'string' ? { kind: 'foreign' } : unreadable
  }
  const values = body.v.map(decodeValue)
  if (values.includes(undefined)) return unreadable
  const segmentEnd = body.e
  return {
    kind: 'cursor',
    cursor: segmentEnd === 'after' || segmentEnd === 'before' ? { values, segmentEnd } : { values },
  }
}

function isCursorBody(body: unknown): body is { v: unknown[]; f?: unknown; e?: unknown } {
  return !!body && typeof body === 'object' && Array.isArray((body as { v?: unknown }).v)
}
