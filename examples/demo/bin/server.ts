/**
 * Starts the demo: serves on PORT (3333 by default). The demo's provider
 * (providers/demo_provider.ts) runs the migrations while the app boots.
 */
import { mkdir } from 'node:fs/promises'
import { Ignitor, prettyPrintError } from '@adonisjs/core'

const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../')) {
    return import(new URL(filePath, APP_ROOT).href)
  }
  return import(filePath)
}

new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => {
      await import('../start/env.ts')
      // The SQLite file lives in tmp/: providers may query it while booting
      await mkdir(app.tmpPath(), { recursive: true })
    })
    app.listen('SIGTERM', () => app.terminate())
    app.listen('SIGINT', () => app.terminate())
  })
  .httpServer()
  .start()
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
