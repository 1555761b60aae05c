import { join, relative, sep } from 'node:path'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { TMP_ROOT } from '../helpers.ts'
import { scaffoldHostedWorker } from '../../src/collaboration/hosted_worker.ts'

/*
 * What the hosted-engine specs share: the room workers that
 * `collaboration:init --engine=partyserver|partykit` scaffolds, run in
 * workerd (PartyServer bundled as wrangler would, through Miniflare;
 * PartyKit by its own `partykit dev`) in front of a real Adonis app that
 * stores the documents.
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

const PARTYKIT_CLI = join(NODE_MODULES, 'partykit/dist/bin.mjs')
const PARTYKIT_START_TIMEOUT_MS = 25_000
/** A variable of the app's own .env, which must not reach the room's code */
export const APP_ENV_CANARY = 'app-secret-that-must-stay-in-the-app'

/**
 * Scaffolds the PartyKit project (once per group) where `collaboration:init`
 * puts it: a folder of an app whose own .env holds a secret of the app.
 * `partykit dev` builds it on start.
 */
export async function scaffoldPartyKitProject() {
  const appRoot = await mkdtemp(join(TMP_ROOT, 'partykit-app-'))
  await writeFile(join(appRoot, '.env'), `APP_KEY=${APP_ENV_CANARY}\n`)
  const dir = join(appRoot, 'collaboration-worker')
  const { written } = await scaffoldHostedWorker('partykit', dir)
  return { dir, files: written.map((file) => relative(dir, file).split(sep).join('/')) }
}

/**
 * Runs `partykit dev` on the scaffolded project at `dir`, on `port`, for
 * the app at `appUrl`, offline: no update check, no request.cf fetch, state
 * in memory. The secrets are passed as `--var`, over the project's .env.
 * `stop` ends the CLI and its workerd (their own process group); `bundle`
 * reads the code it built.
 */
export async function startPartyKit(
  dir: string,
  appUrl: string,
  options: { port: number; workerSecret?: string }
) {
  const outDir = `build-${options.port}`
  const child = spawn(
    process.execPath,
    [
      PARTYKIT_CLI,
      'dev',
      '--port',
      String(options.port),
      '--persist',
      'false',
      '--disable-request-cf-fetch',
      '--no-hotkeys',
      // relative: the CLI joins it to its working directory
      '--unstable_outdir',
      outDir,
      '--var',
      `APP_URL=${appUrl}`,
      `COLLAB_JWT_SECRET=${JWT_SECRET}`,
      `COLLAB_WORKER_SECRET=${options.workerSecret ?? WORKER_SECRET}`,
    ],
    {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PWD: dir, NO_UPDATE_NOTIFIER: '1', NO_COLOR: '1' },
    }
  )
  const exited = new Promise((resolve) => child.once('exit', resolve))
  let output = ''
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`partykit dev did not start in time:\n${output}`)),
      PARTYKIT_START_TIMEOUT_MS
    )
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready on')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`partykit dev exited with ${code}:\n${output}`))
    })
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGTERM')
      } catch {
        // the group ended on its own meanwhile
      }
      await exited
    }
  }
  try {
    await ready
  } catch (error) {
    await stop()
    throw error
  }
  return {
    stop,
    output: () => output,
    bundle: () => readFile(join(dir, outDir, 'server.js'), 'utf8'),
    base: `ws://127.0.0.1:${options.port}/parties/main`,
    roomUrl: `http://127.0.0.1:${options.port}/parties/main`,
  }
}
