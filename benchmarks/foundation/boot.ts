/**
 * What adding Atrium's pagination provider costs an app's boot, beside an app
 * with Adonis' core providers alone.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { IgnitorFactory } from '@adonisjs/core/factories'
import { defineConfig } from '../../src/pagination/main.ts'
import { figure, median, printTable, sample } from '../lib/report.ts'

const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-'))
const appRoot = pathToFileURL(`${directory}/`)

async function boot(providers: (() => Promise<any>)[]) {
  const app = new IgnitorFactory()
    .withCoreProviders()
    .withCoreConfig()
    .merge({ rcFileContents: { providers }, config: { pagination: defineConfig({}) } })
    .create(appRoot)
    .createApp('web')
  await app.init()
  await app.boot()
  await app.start(() => {})
  await app.terminate()
}

const baseline = await sample(() => boot([]), { runs: 30 })
const withAtrium = await sample(
  () => boot([() => import('../../providers/pagination_provider.ts')]),
  { runs: 30 }
)

printTable('App boot, init to ready (median of 30)', [
  {
    'app': 'core providers (baseline)',
    'median ms': figure(median(baseline.durations)),
    'ratio': '1.00',
  },
  {
    'app': '+ atrium pagination provider',
    'median ms': figure(median(withAtrium.durations)),
    'ratio': figure(median(withAtrium.durations) / median(baseline.durations)),
  },
])
await rm(directory, { recursive: true, force: true })
