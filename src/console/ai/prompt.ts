import { redactText, redactUrl, redactValue } from '../redact.ts'
import type { ConsoleEntry, ResolvedConsoleConfig } from '../types.ts'

type Bounds = ResolvedConsoleConfig['redact']

/** Stack lines sent at most: the frames that matter are at the top */
export const MAX_STACK_LINES = 40
/** Batch entries summarised at most, the ones nearest the exception first */
export const MAX_BATCH_LINES = 60
/** Characters of one summarised line (a query, a log message) */
export const MAX_LINE_CHARS = 300
/** Characters of the whole prompt, so one exception never costs more than this */
export const MAX_PROMPT_CHARS = 24_000

function cut(text: string, max: number) {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** One line of free text, redacted and cut */
function line(value: unknown, bounds: Bounds, max = MAX_LINE_CHARS) {
  return cut(redactText(String(value ?? '').replace(/\s+/g, ' '), bounds), max)
}

/** The exception part: class, message, code, status, path, stack and a thrown non-Error's reason */
function exceptionPart(entry: ConsoleEntry, bounds: Bounds): string[] {
  const content = entry.content as Record<string, unknown>
  const parts = [
    `Exception: ${line(content.class ?? 'Error', bounds, 200)}`,
    `Message: ${cut(redactText(String(content.message ?? ''), bounds), 2000)}`,
  ]
  if (content.code) parts.push(`Code: ${line(content.code, bounds, 100)}`)
  if (content.status !== undefined && content.status !== null)
    parts.push(`HTTP status: ${content.status}`)
  if (content.path) parts.push(`Path: ${line(redactUrl(String(content.path), bounds), bounds)}`)
  if (content.reason !== undefined) {
    parts.push(`Thrown value: ${line(JSON.stringify(redactValue(content.reason, bounds)), bounds)}`)
  }
  if (typeof content.stack === 'string' && content.stack) {
    const stack = content.stack
      .split('\n')
      .slice(0, MAX_STACK_LINES)
      .map((frame) => line(frame, bounds))
    parts.push('Stack:', ...stack)
  }
  return parts
}

/**
 * One entry of the batch in one line. Headers, bodies, bindings and
 * contexts are never sent: the request line, the SQL text and the log
 * message tell the story without the values.
 */
function batchLine(entry: ConsoleEntry, bounds: Bounds): string | null {
  const content = entry.content as Record<string, any>
  switch (entry.type) {
    case 'request':
      return `request ${line(content.method, bounds, 10)} ${line(redactUrl(String(content.path ?? ''), bounds), bounds)} -> ${content.status ?? '?'} in ${content.durationMs ?? '?'} ms`
    case 'query':
      return `query (${content.timeMs ?? '?'} ms${content.error ? `, failed: ${line(content.error, bounds, 200)}` : ''}): ${line(content.sql, bounds)}`
    case 'log':
      return `log ${line(content.level, bounds, 10)}: ${line(content.message, bounds)}`
    case 'exception':
      return `earlier exception ${line(content.class, bounds, 100)}: ${line(content.message, bounds)}`
    case 'http':
      return `outgoing http ${line(content.method, bounds, 10)} ${line(redactUrl(String(content.url ?? ''), bounds), bounds)} -> ${content.status ?? content.error ?? '?'}`
    case 'job':
      return `job ${line(content.name, bounds, 100)} ${line(content.status ?? '', bounds, 20)}`
    case 'schedule':
      return `scheduled task ${line(content.name, bounds, 100)} ${line(content.status ?? '', bounds, 20)}`
    default:
      return `${entry.type}: ${line(entry.summary, bounds)}`
  }
}

/**
 * What a diagnosis sends the model, redacted with the console's redaction
 * and bounded: the exception, then (with `includeBatch`) its batch's other
 * entries in one line each, the nearest to the exception kept when the
 * batch is longer than `MAX_BATCH_LINES`.
 */
export function diagnosisPrompt(
  entry: ConsoleEntry,
  batch: ConsoleEntry[],
  bounds: Bounds
): string {
  const parts = exceptionPart(entry, bounds)
  const others = batch.filter((other) => other.id !== entry.id)
  if (others.length) {
    const before = others.filter((other) => other.id < entry.id).slice(-MAX_BATCH_LINES)
    const after = others
      .filter((other) => other.id > entry.id)
      .slice(0, Math.max(0, MAX_BATCH_LINES - before.length))
    const lines = [...before, ...after]
      .map((other) => batchLine(other, bounds))
      .filter((text): text is string => text !== null)
    const left = others.length - before.length - after.length
    parts.push('', 'What the same request or job recorded (oldest first):', ...lines)
    if (left > 0) parts.push(`(${left} more entries not shown)`)
  }
  const prompt = parts.join('\n')
  return prompt.length > MAX_PROMPT_CHARS
    ? `${prompt.slice(0, MAX_PROMPT_CHARS)}\n[prompt cut at ${MAX_PROMPT_CHARS} characters]`
    : prompt
}
