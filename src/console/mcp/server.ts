import type { ConsoleManager } from '../manager.ts'
import { MAX_PULSE_MINUTES, MAX_PULSE_ROUTES } from '../pulse.ts'
import { MAX_SEARCH_LENGTH } from '../search.ts'
import { ENTRY_TYPES } from '../types.ts'
import type { McpSdk } from './sdk.ts'
import {
  diagnoseException,
  getBatch,
  getStats,
  MAX_SEARCH_RESULTS,
  searchEntries,
} from './tools.ts'

const WHEN = 'an ISO 8601 date (2026-01-31T12:00:00Z) or a duration ago such as 15m, 2h or 7d'

/** A tool's answer: its result as one JSON text block */
function json(value: unknown) {
  return { content: [{ type: 'text' as const, text: JSON.stringify(value) }] }
}

/**
 * The console's MCP server: read-only tools over what the console recorded.
 * Built per request (the stateless transport keeps nothing between them);
 * registering four tools costs microseconds.
 */
export function createConsoleMcpServer(sdk: McpSdk, manager: ConsoleManager) {
  const { z } = sdk
  const server = new sdk.McpServer(
    { name: 'adonis-atrium-console', version: '1.0.0' },
    {
      instructions:
        'Read-only access to what the AdonisJS operations console recorded: requests, exceptions, queries, logs and more. Find entries with search_entries, open a request with get_batch, read traffic and exception families with get_stats, explain an exception with diagnose_exception. Secrets are redacted.',
    }
  )
  const readOnly = { readOnlyHint: true, openWorldHint: false }
  // the extensions' entry types are filtered like the built-in ones
  const types = [...ENTRY_TYPES, ...manager.config.customEntryTypes] as [string, ...string[]]

  server.registerTool(
    'search_entries',
    {
      title: 'Search recorded entries',
      description:
        'Summaries of recorded entries (newest first) in a time window, optionally of some types, matching words of their summary and a status. Each has an id and a batchId for get_batch.',
      inputSchema: {
        types: z
          .array(z.enum(types))
          .max(types.length)
          .optional()
          .describe('Entry types; every type when absent'),
        query: z
          .string()
          .max(MAX_SEARCH_LENGTH)
          .optional()
          .describe('Words every matching summary contains (letters and digits; case-insensitive)'),
        since: z.string().max(64).optional().describe(`Window start, ${WHEN}; 1h by default`),
        until: z.string().max(64).optional().describe(`Window end, ${WHEN}; now by default`),
        status: z
          .string()
          .max(3)
          .optional()
          .describe('An HTTP status such as 404, or a class such as 5xx'),
        slow: z.boolean().optional().describe('Only slow requests (true) or only others (false)'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_SEARCH_RESULTS)
          .optional()
          .describe('Most summaries returned, 20 by default'),
      },
      annotations: readOnly,
    },
    async (input) => json(await searchEntries(manager, input))
  )

  server.registerTool(
    'get_batch',
    {
      title: 'Get a batch',
      description:
        'Everything one request recorded, oldest first: the request (headers, body, status, timing), its queries, logs, exceptions and outgoing calls.',
      inputSchema: { id: z.string().max(24).describe('A batchId from search_entries') },
      annotations: readOnly,
    },
    async (input) => json(await getBatch(manager, input))
  )

  server.registerTool(
    'get_stats',
    {
      title: 'Get health stats',
      description:
        'The health view: recorder state, throughput and errors per minute, busiest and slow routes with p50/p99 latencies, exception families and stored row counts.',
      inputSchema: {
        minutes: z
          .number()
          .int()
          .min(1)
          .max(MAX_PULSE_MINUTES)
          .optional()
          .describe('Minutes covered, up to now; the configured pulse window by default'),
        routes: z
          .number()
          .int()
          .min(0)
          .max(MAX_PULSE_ROUTES)
          .optional()
          .describe('Busiest routes listed, 20 by default'),
      },
      annotations: readOnly,
    },
    async (input) => json(await getStats(manager, input))
  )

  server.registerTool(
    'diagnose_exception',
    {
      title: 'Diagnose an exception',
      description:
        'One exception with its stack, how often its family (same class, message up to numbers and ids) occurred, the request it broke with that request’s queries and logs, and logs recorded around it.',
      inputSchema: {
        id: z.string().max(24).describe('The id of an exception entry'),
        familyWindow: z
          .string()
          .max(64)
          .optional()
          .describe(`Start of the window the family is counted in, ${WHEN}; 24h by default`),
      },
      annotations: readOnly,
    },
    async (input) => json(await diagnoseException(manager, input))
  )

  return server
}
