import { defineConfig } from '@adonisjs/core/app'

/**
 * The demo is an ordinary AdonisJS 7 app that uses Atrium from this
 * repository's build, the way an app that ran `node ace add adonis-atrium` does.
 */
export default defineConfig({
  commands: [
    () => import('@adonisjs/core/commands'),
    () => import('@adonisjs/lucid/commands'),
    () => import('adonis-atrium/commands'),
  ],
  providers: [
    () => import('@adonisjs/core/providers/app_provider'),
    () => import('@adonisjs/core/providers/hash_provider'),
    () => import('@adonisjs/core/providers/vinejs_provider'),
    () => import('@adonisjs/lucid/database_provider'),
    () => import('./providers/demo_provider.ts'),
    () => import('adonis-atrium/providers/pagination_provider'),
    () => import('adonis-atrium/providers/payments_provider'),
    () => import('adonis-atrium/providers/collaboration_provider'),
    () => import('adonis-atrium/providers/console_provider'),
    () => import('adonis-atrium/providers/agent_provider'),
  ],
  preloads: [() => import('./start/routes.ts'), () => import('./start/kernel.ts')],
})
