/**
 * Synchronous cost on the host's path of one child entry: a Lucid query (the
 * knex `query` + `query-response` listeners), a log line, a feature event, an
 * app emitter event (recorded, and one of the framework's that the events
 * watcher skips by name), each timed call by call inside a request batch, with recording on and with
 * `enabled: false`. Serialisation and storage happen later, off this path.
 */
import { EventEmitter } from 'node:events'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import { ConsoleRecorder } from '../../src/console/recorder.ts'
import { MemoryConsoleStore } from '../../src/console/stores/memory.ts'
import { batchStorage } from '../../src/console/batch.ts'
import { QueryWatcher } from '../../src/console/watchers/query_watcher.ts'
import { LogWatcher } from '../../src/console/watchers/log_watcher.ts'
import { FeatureWatcher } from '../../src/console/watchers/feature_watcher.ts'
import { EventWatcher } from '../../src/console/watchers/event_watcher.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const CALLS = Number(process.env.BENCH_CALLS ?? 200_000)

function setup(enabled: boolean) {
  const config = resolveConsoleConfig({ enabled })
  const recorder = new ConsoleRecorder(config, new MemoryConsoleStore())
  const knex = new EventEmitter()
  const db: any = {
    manager: {
      connections: new Map([['app', {}]]),
      get: () => ({ connection: { client: knex, readClient: knex } }),
      connect() {},
    },
  }
  const queries = new QueryWatcher(config, recorder, {})
  queries.install(db)
  const logs = new LogWatcher(config, recorder, { level: 'info' })
  const features = new FeatureWatcher(config, recorder)
  // with `enabled: false` the console never wraps the emitter: an emit calls Adonis' own method
  const events = new EventWatcher(config, recorder, {})
  let uid = 0
  return {
    recorder,
    query() {
      const query = {
        sql: 'select `id`, `name` from `bench_items` where `id` = ? limit ?',
        bindings: [7, 1],
        __knexQueryUid: `q${uid++}`,
      }
      knex.emit('query', query)
      knex.emit('query-response', [], query)
    },
    log: () => (enabled ? logs.record('info', ['work done', undefined]) : undefined),
    feature: () =>
      enabled
        ? features.record({
            feature: 'payments',
            event: 'webhook.processed',
            payload: { eventId: 'evt_1', provider: 'stripe', durationMs: 3 },
          })
        : undefined,
    event: () =>
      enabled
        ? events.record('order:placed', { orderId: 7, total: 4200, currency: 'EUR' })
        : undefined,
    skippedEvent: () =>
      enabled ? events.record('container_binding:resolved', { binding: 'router' }) : undefined,
  }
}

function measure(run: () => void, recorder: ConsoleRecorder) {
  const samples = new Float64Array(CALLS)
  let batch = recorder.openBatch()
  for (let index = 0; index < CALLS; index++) {
    // a request holds a few dozen entries, not thousands
    if (index % 50 === 0) batch = recorder.openBatch()
    batchStorage.run(batch, () => {
      const started = process.hrtime.bigint()
      run()
      samples[index] = Number(process.hrtime.bigint() - started) / 1000
    })
  }
  return [...samples.slice(CALLS / 10)]
}

const rows: Record<string, string>[] = []
for (const kind of ['query', 'log', 'feature', 'event', 'skippedEvent'] as const) {
  const on = setup(true)
  const off = setup(false)
  measure(on[kind], on.recorder)
  measure(off[kind], off.recorder)
  const onSamples = measure(on[kind], on.recorder)
  const offSamples = measure(off[kind], off.recorder)
  rows.push({
    'entry': kind === 'skippedEvent' ? 'event (skipped name)' : kind,
    'p50 on': figure(percentile(onSamples, 50), ' µs'),
    'p99 on': figure(percentile(onSamples, 99), ' µs'),
    'p50 enabled: false': figure(percentile(offSamples, 50), ' µs'),
    'p99 enabled: false': figure(percentile(offSamples, 99), ' µs'),
  })
}
printTable(
  `Console host-path cost per child entry, ${CALLS} timed calls each (first 10% discarded)`,
  rows
)
