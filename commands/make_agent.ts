import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import string from '@adonisjs/core/helpers/string'
import { stubsRoot } from '../stubs/main.ts'

/**
 * Scaffolds `app/agents/<name>_agent.ts`: a class decorated with `@agent()`
 * and a `@systemPrompt()` method.
 */
export default class MakeAgent extends BaseCommand {
  static commandName = 'make:agent'
  static description = 'Create an agent class for the agent gateway'

  @args.string({ description: 'Name of the agent, e.g. support' })
  declare name: string

  @flags.boolean({ description: 'Overwrite an existing file' })
  declare force?: boolean

  async run() {
    const entity = this.app.generators.createEntity(this.name.replace(/_?agent$/i, '') || this.name)
    const agentName = string.dashCase(entity.name)
    const codemods = await this.createCodemods()
    codemods.overwriteExisting = this.force === true
    await codemods.makeUsingStub(stubsRoot, 'make/agent/main.stub', { entity, agentName })
    this.logger.info(
      `${string.pascalCase(entity.name)}Agent is discovered at boot; if config/agent.ts lists "agents", add it there`
    )
  }
}
