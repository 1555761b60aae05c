import app from '@adonisjs/core/services/app'
import type { ConsoleManager } from '../src/console/manager.ts'

let consoleManager: ConsoleManager

/**
 * The booted console manager (`atrium.console`): its store, recorder and gates.
 */
await app.booted(async () => {
  consoleManager = await app.container.make('atrium.console')
})

export { consoleManager as default }
