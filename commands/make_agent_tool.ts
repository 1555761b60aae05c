import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import string from '@adonisjs/core/helpers/string'
import { stubsRoot } from '../stubs/main.ts'

/** What a model accepts as a tool name */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * Scaffolds `app/agents/tools/<name>.ts`: a functional tool made with
 * `defineTool()`, or with `--class` a tool class resolved through the
 * container. Asks nothing: every choice is a flag.
 */
export default class MakeAgentTool extends BaseCommand {
  static commandName = 'make:agent-tool'
  static description = 'Create a tool for the agent gateway'

  @args.string({ description: 'Name of the tool, e.g. refund_order' })
  declare name: string

  @flags.boolean({
    description: 'A class with a static spec and handle(), made through the container',
  })
  declare class?: boolean

  @flags.boolean({ description: 'Each call waits for a person to approve it' })
  declare approval?: boolean

  @flags.boolean({ description: 'Overwrite an existing file' })
  declare force?: boolean

  async run() {
    const entity = this.app.generators.createEntity(this.name.replace(/_?tool$/i, '') || this.name)
    const toolName = string.snakeCase(entity.name)
    if (!TOOL_NAME.test(toolName)) {
      this.logger.error(
        `"${this.name}" does not make a valid tool name: use letters, digits, "_" or "-" (at most 64)`
      )
      this.exitCode = 1
      return
    }
    const codemods = await this.createCodemods()
    codemods.overwriteExisting = this.force === true
    await codemods.makeUsingStub(stubsRoot, 'make/agent_tool/main.stub', {
      entity,
      toolName,
      asClass: this.class === true,
      requiresApproval: this.approval === true,
    })
    const exported = this.class
      ? `${string.pascalCase(entity.name)}Tool`
      : string.camelCase(entity.name)
    this.logger.info(`List ${exported} in "tools" of config/agent.ts`)
  }
}
