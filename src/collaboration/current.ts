import { RuntimeException } from '@adonisjs/core/exceptions'
import type { CollaborationManager } from './manager.ts'

let manager: CollaborationManager | undefined

/**
 * Set by the provider once the app has booted (and cleared on shutdown).
 */
export function setCurrentCollaborationManager(next: CollaborationManager | undefined) {
  manager = next
}

/**
 * `collaboration.current`: the manager, or a clear error before boot.
 */
export const collaboration = {
  get current(): CollaborationManager {
    if (!manager) {
      throw new RuntimeException(
        'collaboration.current was read before the app booted. Register "adonis-atrium/providers/collaboration_provider" and read it after boot (inside a route, a command or app.booted())'
      )
    }
    return manager
  },
}
