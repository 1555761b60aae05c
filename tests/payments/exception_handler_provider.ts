import type { ApplicationService } from '@adonisjs/core/types'

/**
 * Registers Adonis' own `ExceptionHandler` as the app's error handler, as
 * `start/kernel.ts` does in every app (`server.errorHandler(() => import('#exceptions/handler'))`):
 * self-handling exceptions render their own body through it.
 */
export default class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}

  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => {
      const { ExceptionHandler } = await import('@adonisjs/core/http')
      return { default: class AppExceptionHandler extends ExceptionHandler {} }
    })
  }
}
