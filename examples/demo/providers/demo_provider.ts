import type { ApplicationService } from '@adonisjs/core/types'

/**
 * The demo's own start-up: brings its SQLite file up to date while the app
 * boots, before the Atrium providers that follow it in adonisrc.ts check
 * their tables (the agent gateway checks in its boot()), and stops the
 * scripted model server of the /agent page on shutdown.
 */
export default class DemoProvider {
  constructor(protected app: ApplicationService) {}

  async boot() {
    if (this.app.getEnvironment() !== 'web') return
    const { migrate } = await import('../start/migrate.ts')
    await migrate(this.app)
  }

  async shutdown() {
    const { scriptedModel } = await import('../features/agent_scripted_model.ts')
    await scriptedModel.close()
  }
}
