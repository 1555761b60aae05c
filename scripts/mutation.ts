/**
 * `npm run mutation [-- <group> ...]`: runs StrykerJS once per module group
 * with the group's targeted spec files (on SQLite unless the group names
 * other databases), then prints the mutation score per group and every
 * surviving mutant. See docs/testing.md.
 */
import { relative } from 'node:path'
import { Stryker } from '@stryker-mutator/core'
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core'

interface Group {
  mutate: string[]
  /**
   * Database-free spec files, run first with scripts/mutation_nodb_runner.ts
   * (no app, no database): a mutant they kill never pays for `tests`
   */
  nodbTests?: string[]
  /** Spec files run through bin/test.ts, on SQLite unless `databases` says otherwise */
  tests?: string[]
  /**
   * The databases `tests` run on, one after the other (a mutant is killed
   * when any run fails): code only another database runs needs it there
   */
  databases?: Array<'sqlite' | 'pg' | 'mysql'>
  /**
   * Stryker's `timeoutMS` for the group (a run taking longer than this plus
   * twice the first run's time counts as killed): short for specs whose
   * awaits hang when a mutant drops a resolve, so such a mutant costs seconds
   */
  timeoutMS?: number
}

/**
 * The database-free specs every driver mapping group runs after its own. The
 * database specs these groups ran before (gateways, independent_signatures,
 * hostile/payments_forgery) killed none of the mutants the fast specs leave
 * (measured; see docs/testing.md), so the groups have no `tests`.
 */
const DRIVER_NODB_SPECS = [
  'tests/payments/mapping.spec.ts',
  'tests/payments/driver_verification.spec.ts',
]
/** The Yjs engine driven directly: a bare HTTP server, real ws clients, in-memory storage */
const YJS_NODB_SPECS = [
  'tests/collaboration/yjs_storage_edges.spec.ts',
  'tests/collaboration/yjs_engine_sockets.spec.ts',
  'tests/collaboration/yjs_engine_rooms.spec.ts',
  'tests/collaboration/yjs_room_edges.spec.ts',
]
/** A run of them takes about 2 s; a mutant that hangs one of their awaits is cut off here */
const YJS_TIMEOUT_MS = 8000
/**
 * Modules where a silent bug costs money or data, each with the specs that
 * exercise it. A `file:from-to` entry mutates only those lines (the
 * drivers' signature checks). docs/testing.md lists which groups were run.
 */
const GROUPS: Record<string, Group> = {
  'money': {
    mutate: ['src/payments/money.ts'],
    tests: ['tests/payments/billing.spec.ts'],
  },
  'drivers-b': {
    mutate: [
      'src/payments/drivers/paddle.ts',
      'src/payments/drivers/polar.ts',
      'src/payments/drivers/dodopayments.ts',
      'src/payments/drivers/standard_webhooks.ts',
      'src/payments/drivers/paypal.ts',
      'src/payments/drivers/paypal_certificates.ts',
      'src/payments/drivers/mollie.ts',
    ],
    nodbTests: [
      'tests/payments/subscribed_events.spec.ts',
      'tests/payments/paddle_events.spec.ts',
      'tests/payments/polar_events.spec.ts',
      'tests/payments/dodopayments_events.spec.ts',
      'tests/payments/standard_webhooks_events.spec.ts',
      'tests/payments/paypal_events.spec.ts',
      'tests/payments/mollie_events.spec.ts',
      'tests/payments/paypal.spec.ts',
      'tests/payments/sdk_gateways_mapping.spec.ts',
    ],
  },
  // The HMAC-signed drivers, and the API client Mercado Pago reads the notified resource with
  'drivers-hmac': {
    mutate: [
      'src/payments/drivers/mercadopago.ts',
      'src/payments/drivers/lemonsqueezy.ts',
      'src/payments/drivers/pagarme.ts',
      'src/payments/drivers/razorpay.ts',
      'src/payments/drivers/square.ts',
      'src/payments/drivers/gateway_api.ts',
    ],
    nodbTests: [
      'tests/payments/subscribed_events.spec.ts',
      'tests/payments/lemonsqueezy_events.spec.ts',
      'tests/payments/pagarme_events.spec.ts',
      'tests/payments/razorpay_events.spec.ts',
      'tests/payments/square_events.spec.ts',
      'tests/payments/mercadopago_events.spec.ts',
      'tests/payments/mercadopago_verification.spec.ts',
      'tests/payments/hmac_gateways_mapping.spec.ts',
      'tests/payments/gateway_api.spec.ts',
    ],
  },
  'cursor': {
    mutate: ['src/pagination/cursor.ts'],
    nodbTests: ['tests/pagination/cursor_edges.spec.ts'],
    tests: ['tests/pagination/cursor.spec.ts', 'tests/pagination/errors.spec.ts'],
  },
  'tokens': {
    mutate: ['src/collaboration/tokens.ts'],
    nodbTests: ['tests/collaboration/token_edges.spec.ts'],
    tests: ['tests/collaboration/config.spec.ts', 'tests/collaboration/routes.spec.ts'],
  },
  // The secret, signing and verification lines of tokens.ts (without URLs and issuing)
  'tokens-signing': {
    mutate: ['src/collaboration/tokens.ts:28-148'],
    nodbTests: ['tests/collaboration/token_edges.spec.ts'],
    tests: ['tests/collaboration/config.spec.ts'],
  },
  // Every driver's signature check: the lines between the request and the parsed body
  'drivers-verify': {
    mutate: [
      'src/payments/drivers/helpers.ts:1-47',
      'src/payments/drivers/abacatepay.ts:41-57',
      'src/payments/drivers/asaas.ts:59-70',
      'src/payments/drivers/woovi.ts:24-31',
      'src/payments/drivers/woovi.ts:52-84',
      'src/payments/drivers/pagbank.ts:134-168',
      'src/payments/drivers/efi.ts:46-52',
      'src/payments/drivers/fake.ts:31-43',
      'src/payments/drivers/stripe.ts:65-83',
      'src/payments/drivers/adyen.ts:24-47',
      'src/payments/drivers/adyen.ts:89-110',
    ],
    nodbTests: ['tests/payments/driver_verification.spec.ts'],
  },
  // What each driver maps a verified delivery to, the whole driver files
  'drivers-stripe-adyen': {
    mutate: ['src/payments/drivers/stripe.ts', 'src/payments/drivers/adyen.ts'],
    nodbTests: [
      'tests/payments/mapping_stripe.spec.ts',
      'tests/payments/mapping_adyen.spec.ts',
      ...DRIVER_NODB_SPECS,
    ],
  },
  'drivers-abacatepay-asaas-efi': {
    mutate: [
      'src/payments/drivers/abacatepay.ts',
      'src/payments/drivers/asaas.ts',
      'src/payments/drivers/efi.ts',
    ],
    nodbTests: [
      'tests/payments/mapping_abacatepay_asaas.spec.ts',
      'tests/payments/mapping_efi.spec.ts',
      ...DRIVER_NODB_SPECS,
    ],
  },
  'drivers-woovi-pagbank': {
    mutate: ['src/payments/drivers/woovi.ts', 'src/payments/drivers/pagbank.ts'],
    nodbTests: [
      'tests/payments/mapping_woovi.spec.ts',
      'tests/payments/mapping_pagbank.spec.ts',
      ...DRIVER_NODB_SPECS,
    ],
  },
  'drivers-infinitepay-fake': {
    mutate: ['src/payments/drivers/infinitepay.ts', 'src/payments/drivers/fake.ts'],
    nodbTests: ['tests/payments/mapping_infinitepay_fake.spec.ts', ...DRIVER_NODB_SPECS],
  },
  // The ledger's claim and reclaim: exactly-once delivery to handlers
  'ledger-claim': {
    mutate: ['src/payments/store.ts:79-148'],
    tests: [
      'tests/payments/ledger_claim.spec.ts',
      'tests/payments/concurrency.spec.ts',
      'tests/payments/processing.spec.ts',
      'tests/payments/batching.spec.ts',
    ],
  },
  'ledger': {
    mutate: [
      'src/payments/store.ts',
      'src/payments/ledger/**/*.ts',
      '!src/payments/ledger/claim_writers/postgres.ts',
    ],
    // the store and every writer on an in-memory SQLite: a mutant they kill costs about 3 s
    nodbTests: ['tests/payments/ledger_memory.spec.ts'],
    tests: [
      'tests/payments/ledger_claim.spec.ts',
      'tests/payments/concurrency.spec.ts',
      'tests/payments/processing.spec.ts',
      'tests/payments/batching.spec.ts',
      'tests/payments/boot.spec.ts',
      'tests/payments/commands.spec.ts',
    ],
  },
  // PostgreSQL's own claim writer (unnamed statements, then prepared), on PostgreSQL
  'ledger-postgres': {
    mutate: ['src/payments/ledger/claim_writers/postgres.ts'],
    databases: ['pg'],
    tests: [
      'tests/payments/ledger_plans.spec.ts',
      'tests/payments/ledger_claim.spec.ts',
      'tests/payments/concurrency.spec.ts',
      'tests/payments/batching.spec.ts',
      // the first sighting's payment columns, written by the claim statement
      'tests/payments/billing.spec.ts',
      'tests/payments/ordering.spec.ts',
    ],
  },
  'billing': {
    mutate: ['src/payments/billing/*.ts'],
    nodbTests: [
      'tests/payments/payment_transitions.spec.ts',
      'tests/payments/dispute_subscription_transitions.spec.ts',
    ],
    tests: [
      'tests/payments/billing.spec.ts',
      'tests/payments/ordering.spec.ts',
      'tests/payments/processing.spec.ts',
      'tests/payments/concurrency.spec.ts',
    ],
  },
  // What the billing tables become for each canonical event: the persistence of sync.ts.
  // Its insert and lock statements differ per database (returning, changes(), insertId,
  // row locks), so the specs run on the three
  'billing-sync': {
    mutate: ['src/payments/billing/sync.ts'],
    databases: ['sqlite', 'pg', 'mysql'],
    tests: [
      'tests/payments/billing_sync.spec.ts',
      'tests/payments/billing.spec.ts',
      'tests/payments/ordering.spec.ts',
    ],
  },
  // The payment state machine's transition (nextPayment): what an event does to an existing row
  'billing-payment': {
    mutate: ['src/payments/billing/payment.ts:86-152'],
    nodbTests: ['tests/payments/payment_transitions.spec.ts'],
    tests: ['tests/payments/billing.spec.ts', 'tests/payments/ordering.spec.ts'],
  },
  // The rest of the billing state machines, pure functions (sync.ts's persistence is `billing`)
  'billing-rules': {
    mutate: [
      'src/payments/billing/payment.ts:1-85',
      'src/payments/billing/dispute.ts',
      'src/payments/billing/subscription.ts',
      'src/payments/billing/event_time.ts',
    ],
    nodbTests: [
      'tests/payments/payment_transitions.spec.ts',
      'tests/payments/dispute_subscription_transitions.spec.ts',
    ],
    tests: ['tests/payments/billing.spec.ts', 'tests/payments/ordering.spec.ts'],
  },
  // The Yjs engine, split per file: the database-free specs drive it over a bare HTTP server with
  // real ws clients (about 2 s a run); the app specs after them cost seconds per mutant
  'engine-storage': {
    mutate: [
      'src/collaboration/engines/yjs/room_storage.ts',
      'src/collaboration/engines/yjs/adaptive_window.ts',
    ],
    nodbTests: YJS_NODB_SPECS,
    timeoutMS: YJS_TIMEOUT_MS,
  },
  'engine-room': {
    mutate: [
      'src/collaboration/engines/yjs/room.ts',
      'src/collaboration/engines/yjs/room_connection.ts',
    ],
    nodbTests: YJS_NODB_SPECS,
    timeoutMS: YJS_TIMEOUT_MS,
  },
  'engine-core': {
    mutate: ['src/collaboration/engines/yjs/engine.ts'],
    nodbTests: YJS_NODB_SPECS,
    timeoutMS: YJS_TIMEOUT_MS,
  },
  'engine-awareness': {
    mutate: ['src/collaboration/engines/yjs/awareness.ts'],
    nodbTests: ['tests/collaboration/yjs_awareness_relay.spec.ts', ...YJS_NODB_SPECS],
    timeoutMS: YJS_TIMEOUT_MS,
  },
  'engine-content': {
    mutate: ['src/collaboration/engines/yjs/content.ts'],
    nodbTests: [
      'tests/collaboration/yjs_content_text.spec.ts',
      'tests/collaboration/yjs_content.spec.ts',
      ...YJS_NODB_SPECS,
    ],
    timeoutMS: YJS_TIMEOUT_MS,
  },
  // The whole engine with the app specs (hours: each mutant boots an app with real sockets)
  'engine': {
    mutate: ['src/collaboration/engines/yjs/*.ts'],
    nodbTests: YJS_NODB_SPECS,
    tests: [
      'tests/collaboration/server.spec.ts',
      'tests/collaboration/durability.spec.ts',
      'tests/hostile/collaboration_storage.spec.ts',
      'tests/hostile/collaboration_socket.spec.ts',
      'tests/hostile/collaboration_awareness.spec.ts',
    ],
  },
  'pagination-input': {
    mutate: ['src/pagination/input.ts'],
    nodbTests: ['tests/pagination/input_rules.spec.ts'],
    tests: [
      'tests/pagination/filter_runner.spec.ts',
      'tests/pagination/errors.spec.ts',
      'tests/hostile/pagination_fuzz.spec.ts',
    ],
  },
  // The page runner alone (the keyset group's second half), to list its survivors in one sitting
  'keyset-page': {
    mutate: ['src/pagination/keyset_page.ts', 'src/pagination/filter_runner.ts'],
    nodbTests: [
      'tests/pagination/keyset_predicates.spec.ts',
      'tests/pagination/keyset_pages.spec.ts',
      'tests/pagination/runner_rules.spec.ts',
    ],
  },
  // What the fast specs leave of the page runner's segment reads, against the database specs
  'keyset-page-db': {
    mutate: ['src/pagination/keyset_page.ts:72-160', 'src/pagination/filter_runner.ts:360-385'],
    nodbTests: [
      'tests/pagination/keyset_predicates.spec.ts',
      'tests/pagination/keyset_pages.spec.ts',
      'tests/pagination/runner_rules.spec.ts',
    ],
    tests: [
      'tests/pagination/keyset_walk.spec.ts',
      'tests/pagination/segments.spec.ts',
      'tests/pagination/seams.spec.ts',
      'tests/pagination/combined_segments.spec.ts',
    ],
  },
  // The runner's rules and cursor check (the rest of keyset-page) against the database specs
  'keyset-runner-db': {
    mutate: ['src/pagination/filter_runner.ts:60-245', 'src/pagination/keyset_page.ts:25-51'],
    nodbTests: [
      'tests/pagination/keyset_predicates.spec.ts',
      'tests/pagination/keyset_pages.spec.ts',
      'tests/pagination/runner_rules.spec.ts',
    ],
    tests: ['tests/pagination/filter_runner.spec.ts', 'tests/pagination/errors.spec.ts'],
  },
  // keyset.ts alone (the keyset group's first half): predicates, probes and cursor values
  'keyset-sql': {
    mutate: ['src/pagination/keyset.ts'],
    nodbTests: [
      'tests/pagination/keyset_values.spec.ts',
      'tests/pagination/keyset_predicates.spec.ts',
      'tests/pagination/keyset_pages.spec.ts',
      'tests/pagination/runner_rules.spec.ts',
    ],
  },
  'keyset': {
    mutate: [
      'src/pagination/keyset.ts',
      'src/pagination/keyset_page.ts',
      'src/pagination/filter_runner.ts',
    ],
    // In-memory SQLite through a bare Lucid Database: no app boot, no files
    nodbTests: [
      'tests/pagination/keyset_values.spec.ts',
      'tests/pagination/keyset_predicates.spec.ts',
      'tests/pagination/keyset_pages.spec.ts',
      'tests/pagination/runner_rules.spec.ts',
    ],
  },
}

/** The shared options; imported by URL because the config is plain JavaScript for Stryker's own CLI */
const { default: base } = (await import(
  new URL('../stryker.config.mjs', import.meta.url).href
)) as {
  default: PartialStrykerOptions
}

const requested = process.argv.slice(2)
const unknown = requested.filter((name) => !(name in GROUPS))
if (unknown.length) {
  console.error(`Unknown group(s) ${unknown.join(', ')}; known: ${Object.keys(GROUPS).join(', ')}`)
  process.exit(1)
}
process.env.DB = 'sqlite'

const summary: string[] = []
for (const name of requested.length ? requested : Object.keys(GROUPS)) {
  const group = GROUPS[name]
  const run = (runner: string, specs?: string[]) =>
    specs?.length
      ? `"${process.execPath}" --import=@poppinss/ts-exec ${runner} ${specs.map((file) => `--files=${file}`).join(' ')}`
      : null
  // a database of its own on PostgreSQL and MariaDB, so groups run side by side
  const runId = `mutation_${name.replaceAll('-', '_')}`
  // node itself (the one npm runs) instead of npm in front: one process less per mutant
  const command = [
    run('scripts/mutation_nodb_runner.ts', group.nodbTests),
    ...(group.databases ?? ['sqlite']).map((database) =>
      group.tests?.length
        ? // --bail: a killed mutant stops at its first failing test
          `DB=${database} ATRIUM_TEST_RUN=${runId} ${run('bin/test.ts', group.tests)} --bail`
        : null
    ),
  ]
    .filter(Boolean)
    .join(' && ')
  const options: PartialStrykerOptions = {
    ...base,
    // a sandbox per group, so two groups can run side by side (each with MUTATION_CONCURRENCY=1)
    tempDirName: `tmp/stryker-${name}`,
    concurrency: Number(process.env.MUTATION_CONCURRENCY) || base.concurrency,
    mutate: group.mutate,
    ...(group.timeoutMS ? { timeoutMS: group.timeoutMS } : {}),
    commandRunner: { command },
  }
  const started = Date.now()
  const results: MutantResult[] = await new Stryker(options).runMutationTest()
  const seconds = Math.round((Date.now() - started) / 1000)
  const killed = results.filter((r) => r.status === 'Killed' || r.status === 'Timeout').length
  const survivors = results.filter((r) => r.status === 'Survived' || r.status === 'NoCoverage')
  const valid = killed + survivors.length
  const score = valid ? ((killed / valid) * 100).toFixed(1) : 'n/a'
  summary.push(`${name}: ${score}% killed (${killed}/${valid}) in ${seconds}s`)
  for (const mutant of survivors) {
    const { start, end } = mutant.location
    // The end matters: `a && b` -> `true` and `a` -> `true` start at the same column
    summary.push(
      `  survived ${relative(process.cwd(), mutant.fileName)}:${start.line}:${start.column}-${end.line}:${end.column} ${mutant.mutatorName}: ${JSON.stringify(mutant.replacement)}`
    )
  }
}
console.log(`\nMutation score per module group\n${summary.join('\n')}`)
