import { join, relative, sep } from 'node:path'
import { mkdtemp } from 'node:fs/promises'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { TMP_ROOT } from '../helpers.ts'
import { scaffoldHostedWorker } from '../../src/collaboration/hosted_worker.ts'

/*
 * What the hosted-engine specs share: the PartyServer room worker that
 * `collaboration:init --engine=partyserver` scaffolds, bundled as wrangler
 * would and run in workerd through Miniflare, in front of a real Adonis app
 * that stores the documents.
 */

export const JWT_SECRET = 'hosted-jwt-secret'
export const WORKER_SECRET = 'hosted-worker-secret'
const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url))

/** Scaffolds the worker project and bundles it (once per group) */
export async function bundleScaffoldedWorker() {
  const dir = await mkdtemp(join(TMP_ROOT, 'partyserver-'))
  const { written } = await scaffoldHostedWorker('partyserver', dir)
  const files = written.map((file) => relative(dir, file).split(sep).join('/'))
  const result = await build({
    entryPoints: [join(dir, 'src/server.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['cloudflare:*'],
    nodePaths: [NODE_MODULES],
    write: false,
    logLevel: 'silent',
  })
  return { script: result.outputFiles[0].text, files }
}

/**
 * A port free right now, for a worker whose address the app's config must
 * name before the worker starts (the worker needs the app's URL too).
 */
export function freePort() {
  return new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * Runs the worker on `port` (any free one by default) for the app at
 * `appUrl`; the caller disposes `mf`. `base` is the rooms' WebSocket URL.
 */
export async function startWorker(
  script: string,
  appUrl: string,
  options: { workerSecret?: string; port?: number } = {}
) {
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2026-04-01',
    compatibilityFlags: ['nodejs_compat'],
    durableObjects: { Main: { className: 'AtriumDocument', useSQLite: true } },
    bindings: {
      APP_URL: appUrl,
      COLLAB_STATE_PATH: '/collaboration/state',
      COLLAB_JWT_SECRET: JWT_SECRET,
      COLLAB_WORKER_SECRET: options.workerSecret ?? WORKER_SECRET,
    },
    host: '127.0.0.1',
    port: options.port ?? 0,
  })
  const url = await mf.ready
  return { mf, base: `ws://${url.host}/parties/main` }
}
