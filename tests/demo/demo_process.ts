import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The demo app (examples/demo) as its browser specs run it: a page built
 * by Vite and the app itself in a process of its own.
 */

export const DEMO = fileURLToPath(new URL('../../examples/demo/', import.meta.url))

/**
 * Builds a page of the demo as `npm run build:demo` does, with the Vite
 * config named, in a process of its own so that this one's NODE_ENV cannot
 * make it a development build. The pages import the package's build, which
 * `npm run build` writes.
 */
export async function buildDemoPage(viteConfig: string) {
  if (!existsSync(fileURLToPath(new URL('../../build/index.js', import.meta.url)))) {
    throw new Error('The demo uses the package build: run "npm run build" first')
  }
  const vite = join(
    dirname(createRequire(import.meta.url).resolve('vite/package.json')),
    'bin/vite.js'
  )
  const child = spawn(process.execPath, [vite, 'build', '--config', join(DEMO, viteConfig)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  })
  let errors = ''
  child.stderr!.on('data', (chunk) => (errors += chunk))
  const code = await new Promise((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`vite build exited with ${code}:\n${errors}`)
}

async function freePort() {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Starts the demo on a free port with a fresh database (and `env` added to
 * this process's); resolves once it listens.
 */
export async function startDemo(databaseFile: string, env: Record<string, string> = {}) {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ['--import=@poppinss/ts-exec', join(DEMO, 'bin/server.ts')],
    {
      cwd: DEMO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'info',
        DEMO_SQLITE_FILE: databaseFile,
        ...env,
      },
    }
  )
  let output = ''
  let started = false
  await new Promise<void>((resolve, reject) => {
    // the pipes keep being read once it started (a full pipe would stall the demo), not kept
    const collect = (chunk: Buffer) => {
      if (started) return
      output += chunk
      if (output.includes('started HTTP server')) {
        started = true
        resolve()
      }
    }
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    child.once('exit', (code) => reject(new Error(`the demo exited with ${code}:\n${output}`)))
  })
  return { child, url: `http://127.0.0.1:${port}` }
}

/** Stops the demo as Ctrl+C would; one that has not ended 10 s later is killed */
export async function stopDemo(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}
