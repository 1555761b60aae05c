import type { ApplicationService } from '@adonisjs/core/types'

/** Warnings the app logger received, while this provider is registered */
export const loggedWarnings: string[] = []

/**
 * Registered before the payments provider in a test app: records what the
 * app's logger warns (and still logs it).
 */
export default class LoggerSpyProvider {
  constructor(protected app: ApplicationService) {}

  async boot() {
    const logger = await this.app.container.make('logger')
    const warn = logger.warn.bind(logger)
    logger.warn = ((message: string, ...rest: any[]) => {
      loggedWarnings.push(message)
      return warn(message, ...rest)
    }) as typeof logger.warn
  }
}
