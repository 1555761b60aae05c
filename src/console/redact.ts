import type { ResolvedConsoleConfig } from './types.ts'

/** What replaces a redacted value */
export const REDACTED = '[redacted]'

type Bounds = ResolvedConsoleConfig['redact']

function truncate(value: string, bounds: Bounds) {
  return value.length > bounds.maxStringLength
    ? `${value.slice(0, bounds.maxStringLength)}…[${value.length - bounds.maxStringLength} more chars]`
    : value
}

/**
 * A bounded copy of `value` with every key named in `redact.keys` (at any
 * depth, case-insensitive) replaced: strings, arrays, objects and depth are
 * cut at the configured bounds. Safe on cycles and exotic objects.
 */
export function redactValue(
  value: unknown,
  bounds: Bounds,
  depth = 0,
  seen?: Set<object>
): unknown {
  if (value === null || value === undefined) return value ?? null
  if (typeof value === 'string') return truncate(value, bounds)
  if (typeof value === 'number' || typeof value === 'boolean') return value
  if (typeof value === 'bigint') return value.toString()
  if (typeof value !== 'object') return `[${typeof value}]`
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (Buffer.isBuffer(value)) return `[binary ${value.length} bytes]`
  if (depth >= bounds.maxDepth) return '[depth limit]'
  // made on the first object only: most recorded values are strings or flat, and this runs per entry
  // (a Set, not a WeakSet: it lives for one call, and weak collections cost the garbage collector more)
  seen ??= new Set()
  if (seen.has(value)) return '[circular]'
  seen.add(value)
  // what JSON.stringify would store: a Lucid model's serialize() (hidden columns left out), not its internals
  const toJSON = (value as { toJSON?: unknown }).toJSON
  if (typeof toJSON === 'function' && !Array.isArray(value)) {
    let plain: unknown = value
    try {
      plain = toJSON.call(value)
    } catch {
      // a throwing toJSON: its own keys are recorded instead
    }
    if (plain !== value) return redactValue(plain, bounds, depth, seen)
  }
  if (Array.isArray(value)) {
    const items = value
      .slice(0, bounds.maxArrayLength)
      .map((item) => redactValue(item, bounds, depth + 1, seen))
    if (value.length > bounds.maxArrayLength) {
      items.push(`[${value.length - bounds.maxArrayLength} more items]`)
    }
    return items
  }
  const copy: Record<string, unknown> = {}
  const keys = Object.keys(value)
  for (const key of keys.slice(0, bounds.maxKeys)) {
    copy[key] = bounds.keys.includes(key.toLowerCase())
      ? REDACTED
      : redactValue((value as Record<string, unknown>)[key], bounds, depth + 1, seen)
  }
  if (keys.length > bounds.maxKeys) copy['…'] = `[${keys.length - bounds.maxKeys} more keys]`
  return copy
}

/** Request headers with the configured ones (and their values' length) hidden */
export function redactHeaders(
  headers: Record<string, string | string[] | undefined>,
  bounds: Bounds
): Record<string, string> {
  const copy: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined) continue
    // node gives incoming header names in lower case already
    const lower = name.toLowerCase()
    if (bounds.headers.includes(lower)) {
      copy[lower] = REDACTED
      continue
    }
    const text =
      typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : String(value)
    copy[lower] = text.length > bounds.maxStringLength ? truncate(text, bounds) : text
  }
  return copy
}

/** A URL with the values of its `redact.keys` query parameters hidden */
export function redactUrl(url: string, bounds: Bounds): string {
  const question = url.indexOf('?')
  if (question < 0) return url
  const params = new URLSearchParams(url.slice(question + 1))
  for (const key of [...params.keys()]) {
    if (bounds.keys.includes(key.toLowerCase())) params.set(key, REDACTED)
  }
  return `${url.slice(0, question)}?${params.toString()}`
}

function escapeRegExp(text: string) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

const textPatterns = new WeakMap<Bounds, RegExp | null>()

/**
 * Free text (an exception message, a log line, a stack) with the value after
 * any configured header or key name hidden: `password=…`, `"token": "…"`,
 * `Authorization: Bearer …`. Recorded structures are redacted by key when
 * recorded; this catches the same secrets where code wrote them into a sentence.
 */
export function redactText(text: string, bounds: Bounds): string {
  let pattern = textPatterns.get(bounds)
  if (pattern === undefined) {
    const names = [...new Set([...bounds.headers, ...bounds.keys])].filter(Boolean)
    pattern = names.length
      ? new RegExp(
          `(["']?\\b(?:${names.map(escapeRegExp).join('|')})\\b["']?\\s*[:=]\\s*)(?:(?:bearer|basic|token)\\s+)?("[^"]*"|'[^']*'|[^\\s,;&"'})\\]]+)`,
          'gi'
        )
      : null
    textPatterns.set(bounds, pattern)
  }
  const redacted = pattern ? text.replace(pattern, `$1${REDACTED}`) : text
  return truncate(redacted, bounds)
}
