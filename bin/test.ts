import { assert } from '@japa/assert'
import { apiClient } from '@japa/api-client'
import { fileSystem } from '@japa/file-system'
import { processCLIArgs, configure, run } from '@japa/runner'
import { glob } from 'node:fs/promises'
import { matchesGlob } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * Spec files that touch no database (no Lucid, no migrations): the `nodb`
 * suite. `.ci/run` runs it once and the `db` suite on each database;
 * `npm test` runs both. A file moves here only if it opens no connection.
 */
const DATABASE_FREE = [
  'tests/docs/**/*.spec.ts',
  'tests/foundation/configure.spec.ts',
  'tests/foundation/install.spec.ts',
  'tests/collaboration/browser.spec.ts',
  'tests/collaboration/hosted_worker.spec.ts',
  'tests/collaboration/hosted_partykit.spec.ts',
  'tests/agent/quota_day.spec.ts',
  'tests/pagination/cursor_edges.spec.ts',
  'tests/pagination/input_rules.spec.ts',
  // an in-memory SQLite of their own (tests/pagination/memory_database.ts), not the run's database
  'tests/pagination/keyset_predicates.spec.ts',
  'tests/pagination/keyset_values.spec.ts',
  'tests/pagination/keyset_pages.spec.ts',
  'tests/pagination/runner_rules.spec.ts',
  'tests/payments/driver_verification.spec.ts',
  'tests/payments/payment_transitions.spec.ts',
  'tests/payments/dispute_subscription_transitions.spec.ts',
  'tests/collaboration/token_edges.spec.ts',
  'tests/collaboration/yjs_content.spec.ts',
  'tests/collaboration/yjs_content_text.spec.ts',
  'tests/collaboration/yjs_awareness_relay.spec.ts',
  // the Yjs engine behind a bare HTTP server with in-memory storage (tests/collaboration/yjs_harness.ts)
  'tests/collaboration/yjs_storage_edges.spec.ts',
  'tests/collaboration/yjs_engine_sockets.spec.ts',
  'tests/collaboration/yjs_engine_rooms.spec.ts',
  'tests/collaboration/yjs_room_edges.spec.ts',
  'tests/collaboration/client*.spec.ts',
  'tests/demo/**/*.spec.ts',
  'tests/payments/sdk_gateways_mapping.spec.ts',
  'tests/payments/hmac_gateways_mapping.spec.ts',
  'tests/payments/mapping*.spec.ts',
  'tests/payments/*_events.spec.ts',
  'tests/payments/mercadopago_verification.spec.ts',
  'tests/payments/paypal.spec.ts',
  'tests/payments/configure.spec.ts',
  'tests/payments/gateway_api.spec.ts',
  // an in-memory SQLite of its own (tests/pagination/memory_database.ts)
  'tests/payments/ledger_memory.spec.ts',
  'tests/console/histogram.spec.ts',
  'tests/console/record_path.spec.ts',
  // its host queries run on an in-memory SQLite of its own, not the run's database
  'tests/console/dashboard_browser.spec.ts',
  'tests/console/dashboard_tail_replay_browser.spec.ts',
  'tests/console/extensions_browser.spec.ts',
  // the memory store and the loopback fake model: no database
  'tests/console/ai_diagnosis_browser.spec.ts',
  // the memory store and an in-test queue manager: no database at all
  'tests/console/dashboard_queues_browser.spec.ts',
  // streamRunLog behind a bare HTTP server: no app, no database
  'tests/agent/sse_writes.spec.ts',
]
const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Every other spec file: the `db` suite */
async function databaseSpecs() {
  const files = await Array.fromAsync(glob('tests/**/*.spec.ts', { cwd: ROOT }))
  return files
    .filter((file) => !DATABASE_FREE.some((pattern) => matchesGlob(file, pattern)))
    .sort()
    .map((file) => pathToFileURL(`${ROOT}${file}`))
}

/**
 * Each run gets its own databases and tmp/ folder (see tests/helpers.ts);
 * set before the helpers are imported so spawned processes inherit it.
 */
process.env.ATRIUM_TEST_RUN ??= String(process.pid)
const { assertServicesReachable, createRunDatabase, dialect } = await import('../tests/helpers.ts')

/**
 * Every suite needs the selected database and Redis: a missing service stops
 * the run here, named, instead of skipping the tests that need it.
 */
await assertServicesReachable()
const dropRunDatabase = await createRunDatabase()

processCLIArgs(process.argv.slice(2))
configure({
  suites: [
    { name: 'nodb', files: DATABASE_FREE },
    { name: 'db', files: databaseSpecs },
  ],
  plugins: [assert(), fileSystem({ autoClean: true }), apiClient()],
  timeout: 30_000,
  // off, so a socket, server or timer a test leaves open shows (see below)
  forceExit: false,
  setup: [
    () =>
      console.log(`Running Atrium tests with DB=${dialect()} (run ${process.env.ATRIUM_TEST_RUN})`),
  ],
  teardown: [() => dropRunDatabase()],
})

/**
 * One line per handle still keeping the process alive: its kind and, for
 * sockets and servers, the addresses that name the service (6379 is Redis,
 * 5432 PostgreSQL, 3306 MariaDB).
 */
function describeHandle(handle: any) {
  const kind = handle?.constructor?.name ?? typeof handle
  if (typeof handle?.remotePort === 'number') {
    return `${kind} ${handle.localAddress}:${handle.localPort} -> ${handle.remoteAddress}:${handle.remotePort}`
  }
  if (typeof handle?.address === 'function' && handle.address()) {
    return `${kind} listening on ${JSON.stringify(handle.address())}`
  }
  return kind
}

await run()

/**
 * Every test closes what it opens, so the process ends by itself once the
 * run is over. When something still holds it after LEAK_GRACE_MS, name it
 * and fail instead of hanging CI.
 */
const LEAK_GRACE_MS = 10_000
setTimeout(() => {
  const stdio = new Set<unknown>([process.stdin, process.stdout, process.stderr])
  const handles = ((process as any)._getActiveHandles() as unknown[]).filter((h) => !stdio.has(h))
  console.error(
    `The test process is still alive ${LEAK_GRACE_MS / 1000}s after the run: something a test ` +
      `opened was not closed.\n  Handles: ${handles.map(describeHandle).join('\n           ') || 'none'}\n` +
      `  Resources: ${process.getActiveResourcesInfo().join(', ')}`
  )
  process.exit(1)
}, LEAK_GRACE_MS).unref()
