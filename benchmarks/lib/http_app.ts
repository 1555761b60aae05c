/**
 * Boots a real Adonis app with an HTTP server on 127.0.0.1 for benchmarks
 * (the test helper needs a running Japa test; this one does not).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { IgnitorFactory } from '@adonisjs/core/factories'
import type { Router } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'

export async function bootHttpApp(options: {
  appRoot: URL
  providers?: (() => Promise<any>)[]
  config?: Record<string, unknown>
  routes?: (router: Router) => void
}): Promise<{ app: ApplicationService; url: string; close(): Promise<void> }> {
  const app = new IgnitorFactory()
    .withCoreProviders()
    .withCoreConfig()
    .merge({ rcFileContents: { providers: options.providers ?? [] }, config: options.config ?? {} })
    .create(options.appRoot)
    .createApp('web')
  await app.init()
  await app.boot()
  let nodeServer!: Server
  let url = ''
  await app.start(async () => {
    options.routes?.(await app.container.make('router'))
    const server = await app.container.make('server')
    await server.boot()
    nodeServer = createServer(server.handle.bind(server))
    server.setNodeServer(nodeServer)
    await new Promise<void>((resolve) => nodeServer.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`
  })
  return {
    app,
    url,
    async close() {
      nodeServer.closeAllConnections()
      await new Promise<void>((resolve) => nodeServer.close(() => resolve()))
      await app.terminate()
    },
  }
}

export interface LoadResult {
  elapsed: number
  latencies: number[]
  statuses: Record<string, number>
  /** The load generator's own CPU time over the measured window, in µs */
  cpuMicros?: number
}

/**
 * Runs benchmarks/lib/load.ts in a child process and returns its figures.
 */
export function runLoad(plan: Record<string, unknown>): Promise<LoadResult> {
  const script = fileURLToPath(new URL('./load.ts', import.meta.url))
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import=@poppinss/ts-exec', script, JSON.stringify(plan)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      }
    )
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`))
      resolve(JSON.parse(output.trim().split('\n').pop()!))
    })
  })
}
