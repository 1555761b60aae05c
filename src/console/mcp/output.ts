import { redactHeaders, redactUrl, redactValue } from '../redact.ts'
import type { ConsoleEntry, ConsoleEntrySummary, ResolvedConsoleConfig } from '../types.ts'

type Bounds = ResolvedConsoleConfig['redact']

/** Content fields holding header maps, redacted by header name */
const HEADER_FIELDS = ['headers', 'requestHeaders', 'responseHeaders']
/** Content fields holding URLs, whose redacted query parameters are hidden */
const URL_FIELDS = ['url', 'source']

/**
 * The bounds of the output pass. Entries were bounded when recorded, and a
 * cut value carries its marker (`…[N more chars]`, a `…` key, one more item,
 * a level of nesting under `content`): the slack keeps them from being cut twice.
 */
function outputBounds(bounds: Bounds): Bounds {
  return {
    ...bounds,
    maxDepth: bounds.maxDepth + 2,
    maxStringLength: bounds.maxStringLength + 32,
    maxArrayLength: bounds.maxArrayLength + 1,
    maxKeys: bounds.maxKeys + 1,
  }
}

/**
 * An entry as MCP hands it out: the configured redaction applied again on
 * the way out (the keys and headers of `redact`, the URL parameters), so a
 * rule added after an entry was recorded, or a custom watcher that skipped
 * redaction, still hides the value. Adds `at`, the ISO instant.
 */
export function redactEntry(entry: ConsoleEntry, bounds: Bounds) {
  const limits = outputBounds(bounds)
  const content = redactValue(entry.content, limits) as Record<string, unknown>
  for (const field of HEADER_FIELDS) {
    const headers = entry.content[field]
    if (headers && typeof headers === 'object' && !Array.isArray(headers)) {
      content[field] = redactHeaders(headers as Record<string, string>, limits)
    }
  }
  for (const field of URL_FIELDS) {
    if (typeof content[field] === 'string') content[field] = redactUrl(content[field], limits)
  }
  return { ...summaryOf(entry, bounds), content }
}

/** A list row: the entry without content, a URL's redacted parameters hidden, plus `at` */
export function summaryOf(entry: ConsoleEntrySummary, bounds: Bounds) {
  const { id, batchId, type, status, method, durationMs, slow, tags, createdAt } = entry
  return {
    id,
    batchId,
    type,
    at: new Date(createdAt).toISOString(),
    // request and outgoing-HTTP summaries are `METHOD url`; other summaries are prose
    summary:
      type === 'request' || type === 'http' ? redactUrl(entry.summary, bounds) : entry.summary,
    status,
    method,
    durationMs,
    slow,
    tags,
  }
}
