/**
 * What a value must be to reach SQL as a field's type. PostgreSQL refuses a
 * bound value that does not fit its column (`"abc"` for an integer, a 2^70
 * for a BIGINT, a NUL byte in text, `2025-13-45` for a timestamp) with an
 * error, where MySQL and SQLite compare loosely: every value a request or a
 * cursor brings is checked here first, so each database answers the same 400.
 */
import { KeysetDate } from './cursor.ts'
import { InvalidPaginationQueryException } from './errors.ts'
import type { FieldType } from './types.ts'

/** Longest string a filter, search or cursor value may be */
export const MAX_VALUE_LENGTH = 1024

/** Most values an `in`, `notIn` or `between` list may hold */
export const MAX_LIST_ITEMS = 500

const RANGES: Partial<Record<FieldType, [bigint, bigint]>> = {
  integer: [-(2n ** 31n), 2n ** 31n - 1n],
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * A database's text of a date or timestamp, as the keyset query reads it
 * (`2025-01-31`, `2025-01-31 10:00:00.123456`, with an optional offset).
 */
const DATABASE_DATE =
  /^(\d{4})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d):(\d\d)(?:\.\d{1,9})?)?(?:Z|[+-]\d\d(?::?\d\d)?)?$/

/**
 * A value's type as a field expects it: what the message says it expected.
 */
export function expectation(type: FieldType | undefined): string {
  switch (type) {
    case 'integer':
    case 'bigint':
      return 'an integer'
    case 'number':
      return 'a number'
    case 'boolean':
      return 'a boolean'
    case 'date':
    case 'datetime':
      return 'an ISO 8601 date'
    case 'uuid':
      return 'a UUID'
    default:
      return 'a string'
  }
}

/**
 * Why a string cannot be bound as text, or null when it can.
 */
export function textProblem(value: string): string | null {
  if (value.length > MAX_VALUE_LENGTH) return `at most ${MAX_VALUE_LENGTH} characters`
  if (value.includes('\u0000')) return 'no NUL character'
  return null
}

/**
 * An integer within the type's range, as a number when exact, else as its
 * digits (a BIGINT past 2^53); null when the value is none.
 */
export function toInteger(value: unknown, type: 'integer' | 'bigint'): number | string | null {
  let digits: string
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return null
    digits = String(value)
  } else if (typeof value === 'string' && /^[+-]?\d{1,20}$/.test(value.trim())) {
    digits = value.trim().replace(/^\+/, '')
  } else {
    return null
  }
  const big = BigInt(digits)
  const [min, max] = RANGES[type]!
  if (big < min || big > max) return null
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(big)
    : big.toString()
}

/**
 * A date every database stores (years 1 to 9999), or null.
 */
export function toValidDate(value: unknown): Date | null {
  let date: Date | null = null
  if (value instanceof Date) date = value
  else if (value && typeof value === 'object' && 'toJSDate' in value) {
    const toJSDate = (value as { toJSDate: unknown }).toJSDate
    if (typeof toJSDate === 'function') date = toJSDate.call(value) as Date
  } else if (typeof value === 'string' && /^\d{4}-\d\d-\d\d/.test(value)) {
    if (value.length > 64) return null
    date = new Date(/^\d{4}-\d\d-\d\d \d/.test(value) ? value.replace(' ', 'T') : value)
  }
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) return null
  const year = date.getUTCFullYear()
  return year >= 1 && year <= 9999 ? date : null
}

/**
 * Whether a database's text of a date is one the database reads back:
 * well formed, a real calendar day and time.
 */
export function isDatabaseDateText(text: string): boolean {
  const match = DATABASE_DATE.exec(text)
  if (!match) return false
  const [year, month, day, hours, minutes, seconds] = match.slice(1).map((part) => Number(part))
  if (year < 1 || month < 1 || month > 12 || day < 1) return false
  if (day > new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate()) return false
  if (match[4] === undefined) return true
  return hours < 24 && minutes < 60 && seconds < 60
}

function fail(message: string, parameter: string): never {
  throw new InvalidPaginationQueryException(message, parameter)
}

function describe(value: unknown) {
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value
    return JSON.stringify(shown)
  }
  return (JSON.stringify(value) ?? String(value)).slice(0, 60)
}

/**
 * Coerces one request value to a field's type, or fails with a 400 naming
 * the parameter and what it expected.
 */
export function coerceValue(value: unknown, type: FieldType | undefined, parameter: string) {
  const bad = (expected: string): never =>
    fail(
      `Invalid value for ${parameter}: expected ${expected}, received ${describe(value)}`,
      parameter
    )
  switch (type) {
    case undefined:
    case 'string': {
      const text =
        typeof value === 'string'
          ? value
          : typeof value === 'number' || typeof value === 'boolean'
            ? String(value)
            : bad('a string')
      const problem = textProblem(text)
      return problem ? bad(`a string of ${problem}`) : text
    }
    case 'uuid':
      return typeof value === 'string' && UUID.test(value) ? value : bad('a UUID')
    case 'integer':
    case 'bigint': {
      const integer = toInteger(value, type)
      if (integer !== null) return integer
      return bad(
        type === 'integer'
          ? 'an integer from -2147483648 to 2147483647'
          : 'an integer from -9223372036854775808 to 9223372036854775807'
      )
    }
    case 'number': {
      const number =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && value.trim() !== '' && value.length <= 64
            ? Number(value)
            : Number.NaN
      return Number.isFinite(number) ? number : bad('a number')
    }
    case 'boolean':
      if (value === true || value === 'true' || value === '1' || value === 1) return true
      if (value === false || value === 'false' || value === '0' || value === 0) return false
      return bad('a boolean')
    case 'date':
    case 'datetime':
      return toValidDate(value) ?? bad('an ISO 8601 date')
  }
}

/**
 * A cursor's value checked against its keyset column (a forged cursor can
 * carry anything): the value to bind, or `undefined` when it does not fit.
 */
export function cursorValue(value: unknown, type: FieldType | undefined): unknown {
  switch (type) {
    case 'date':
    case 'datetime':
      if (!(value instanceof KeysetDate) || !toValidDate(value)) return undefined
      return value.precise === undefined || isDatabaseDateText(value.precise) ? value : undefined
    case 'integer':
    case 'bigint':
      return toInteger(value, type) ?? undefined
    case 'number':
      if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
      // Drivers return DECIMAL columns as text
      return typeof value === 'string' && /^-?\d{1,64}(\.\d{1,64})?$/.test(value)
        ? value
        : undefined
    case 'boolean':
      if (typeof value === 'boolean') return value
      return value === 0 || value === 1 ? value === 1 : undefined
    case 'uuid':
      return typeof value === 'string' && UUID.test(value) ? value : undefined
    default:
      // Its length is bounded by the cursor's; a row's own text may be long
      return typeof value === 'string' && !value.includes('\u0000') ? value : undefined
  }
}
