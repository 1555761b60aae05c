import app from '@adonisjs/core/services/app'
import type { CollaborationManager } from '../src/collaboration/manager.ts'

let collaboration: CollaborationManager

/**
 * The booted collaboration manager (`atrium.collaboration`): documents,
 * versions, comments, presence and `issueToken` for app code.
 */
await app.booted(async () => {
  collaboration = await app.container.make('atrium.collaboration')
})

export { collaboration as default }
