import { entryId } from '../../src/console/ids.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'

/** A request entry of `route` recorded at `at`, as the request watcher writes one */
export function requestEntry(
  at: number,
  route: string,
  durationMs: number,
  status = 200,
  method = 'GET'
): ConsoleEntry {
  const id = entryId(at)
  return {
    id,
    batchId: id,
    type: 'request',
    summary: `${method} ${route}`,
    status,
    method,
    durationMs,
    slow: false,
    tags: [],
    createdAt: at,
    content: { method, path: route, route, status, durationMs },
  }
}

/** An exception entry whose summary is `Class: message`, as the exception watcher writes one */
export function exceptionEntry(at: number, summary: string): ConsoleEntry {
  const id = entryId(at)
  const [name, ...message] = summary.split(': ')
  return {
    id,
    batchId: id,
    type: 'exception',
    summary,
    status: 500,
    method: null,
    durationMs: null,
    slow: false,
    tags: ['5xx'],
    createdAt: at,
    content: { class: name, message: message.join(': '), status: 500 },
  }
}

/** A log entry recorded at `at` */
export function logEntry(at: number, summary: string): ConsoleEntry {
  const id = entryId(at)
  return {
    id,
    batchId: id,
    type: 'log',
    summary,
    status: null,
    method: null,
    durationMs: null,
    slow: false,
    tags: ['info'],
    createdAt: at,
    content: { message: summary },
  }
}
