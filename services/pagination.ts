import app from '@adonisjs/core/services/app'
import type { PaginationManager } from '../src/pagination/manager.ts'

let pagination: PaginationManager

/**
 * The booted pagination manager (`atrium.pagination`): its resolved config.
 */
await app.booted(async () => {
  pagination = await app.container.make('atrium.pagination')
})

export { pagination as default }
