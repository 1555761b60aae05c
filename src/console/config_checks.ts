import stringHelpers from '@adonisjs/core/helpers/string'
import { E_CONSOLE_CONFIG } from './errors.ts'
import type { Duration, EntryType } from './types.ts'
import { ENTRY_TYPES } from './types.ts'

/** The file every console config error names */
export const FILE = 'config/console.ts'

/** Throws the console's config error */
export function fail(message: string): never {
  throw new E_CONSOLE_CONFIG(message)
}

/**
 * Milliseconds of a duration (`'8h'`, `'30m'`, `'24h'`, or ms), or a config
 * error naming the key.
 */
export function durationMs(value: Duration, key: string): number {
  let ms: number
  try {
    ms = stringHelpers.milliseconds.parse(value)
  } catch {
    ms = Number.NaN
  }
  if (!Number.isFinite(ms) || ms <= 0) {
    fail(`Invalid "${key}" in ${FILE}: use a duration such as '8h', '30m' or milliseconds`)
  }
  return ms
}

/** A whole number of 0 or more, or a config error naming the key */
export function positiveInteger(value: unknown, key: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    fail(`Invalid "${key}" in ${FILE}: use a whole number of 0 or more`)
  }
  return value as number
}

/** A fraction between 0 and 1, or a config error naming the key */
export function fraction(value: unknown, key: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    fail(`Invalid "${key}" in ${FILE}: use a fraction between 0 and 1`)
  }
  return value
}

/** An entry type named in the config, or a config error naming the key */
export function entryType(name: string, key: string): EntryType {
  if (!(ENTRY_TYPES as readonly string[]).includes(name)) {
    fail(`Unknown entry type "${name}" in "${key}" of ${FILE}: use ${ENTRY_TYPES.join(', ')}`)
  }
  return name as EntryType
}
