import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'

/** The app's exception handler, as app/exceptions/handler.ts declares it */
class AppExceptionHandler extends ExceptionHandler {}

/**
 * Registers the exception handler on this app's own server, as
 * start/kernel.ts does (the server service module would be the first
 * app's when several apps boot in one process).
 */
export default class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}

  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({ default: AppExceptionHandler }))
  }
}
