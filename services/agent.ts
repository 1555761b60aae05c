import app from '@adonisjs/core/services/app'
import type { AgentManager } from '../src/agent/manager.ts'

let agent: AgentManager

/**
 * The booted agent gateway (`atrium.agent`).
 */
await app.booted(async () => {
  agent = await app.container.make('atrium.agent')
})

export { agent as default }
