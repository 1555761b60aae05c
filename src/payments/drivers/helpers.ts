import { createHmac, timingSafeEqual } from 'node:crypto'
import { reject } from '../errors.ts'
import type { WebhookRequest } from '../types.ts'

/**
 * The single value of a header, or undefined when absent or sent twice.
 */
export function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()]
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

export function queryValue(request: WebhookRequest, name: string): string | undefined {
  const value = request.query[name]
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/**
 * Compares two secrets in constant time; different lengths compare false
 * after hashing-free padding so the length alone leaks nothing useful.
 */
export function safeCompare(expected: string | Buffer, received: string | Buffer) {
  const a = typeof expected === 'string' ? Buffer.from(expected) : expected
  const b = typeof received === 'string' ? Buffer.from(received) : received
  if (a.length !== b.length) {
    timingSafeEqual(a, a)
    return false
  }
  return timingSafeEqual(a, b)
}

/**
 * Parses the verified raw bytes as a JSON object; anything else is rejected.
 */
export function jsonObject(rawBody: Buffer): Record<string, any> {
  let parsed: unknown
  try {
    parsed = JSON.parse(rawBody.toString('utf8'))
  } catch {
    reject('body is not valid JSON')
  }
  if (!isObject(parsed)) {
    reject('body is not a JSON object')
  }
  return parsed
}

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A required non-empty string (numbers are accepted and stringified).
 */
export function requiredString(value: unknown, what: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) {
    return String(value)
  }
  if (typeof value !== 'string' || value.length === 0) {
    reject(`${what} is missing`)
  }
  return value
}

export function optionalString(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    return String(value)
  }
  return typeof value === 'string' && value.length > 0 ? value : null
}

/**
 * Unix seconds to an ISO string.
 */
export function fromUnix(value: unknown): string | null {
  return typeof value === 'number' && Number.isFinite(value)
    ? new Date(value * 1000).toISOString()
    : null
}

/**
 * A date string the gateway sent, normalized to ISO when it parses.
 */
export function isoDate(value: unknown): string | null {
  if (typeof value !== 'string' || !value) {
    return null
  }
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

/**
 * The HMAC of the raw bytes, compared in constant time with the signature
 * the gateway sent (in the same encoding).
 */
export function hmacMatches(
  algorithm: 'sha1' | 'sha256',
  key: string | Buffer,
  payload: string | Buffer,
  signature: string,
  encoding: 'hex' | 'base64'
) {
  const expected = createHmac(algorithm, key).update(payload).digest(encoding)
  return safeCompare(expected, encoding === 'hex' ? signature.toLowerCase() : signature)
}
