import type { ApplicationService } from '@adonisjs/core/types'
import { AgentConfigException } from './errors.ts'
import { checkJsonSchema } from './json_schema.ts'
import type { JsonSchema } from './model/port.ts'
import type {
  AgentToolClass,
  AgentToolContext,
  AgentToolDefinition,
  InputValidator,
  ResolvedTool,
} from './types.ts'

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Thrown by `validateToolInput`: the message is safe to send to the model */
export class ToolInputError extends Error {}

/**
 * Declares a functional tool with its input type inferred by the caller.
 */
export function defineTool<Input = any, Output = unknown>(tool: {
  spec: AgentToolDefinition['spec']
  handler(input: Input, context: AgentToolContext): Output | Promise<Output>
}) {
  return tool
}

function isValidator(value: unknown): value is InputValidator {
  return typeof (value as InputValidator | undefined)?.validate === 'function'
}

/**
 * Normalizes one functional or class tool from config/agent.ts, failing the
 * boot with the option named when its spec cannot be used.
 */
export function resolveTool(definition: AgentToolDefinition, index: number): ResolvedTool {
  const where = `"tools[${index}]" in config/agent.ts`
  const spec = definition?.spec
  if (!spec || typeof spec.name !== 'string' || !TOOL_NAME.test(spec.name)) {
    throw new AgentConfigException(
      `Invalid ${where}: a tool needs spec.name made of letters, digits, "_" or "-" (at most 64), and a handler or a handle() method`
    )
  }
  if (typeof spec.description !== 'string' || !spec.description) {
    throw new AgentConfigException(
      `Missing "spec.description" of tool "${spec.name}" (${where}): the model reads it to decide when to call the tool`
    )
  }
  if (spec.roles !== undefined && !Array.isArray(spec.roles)) {
    throw new AgentConfigException(
      `Invalid "spec.roles" of tool "${spec.name}" (${where}): expected an array of role names`
    )
  }
  if (spec.requiresApproval !== undefined && typeof spec.requiresApproval !== 'boolean') {
    throw new AgentConfigException(
      `Invalid "spec.requiresApproval" of tool "${spec.name}" (${where}): expected a boolean`
    )
  }
  let inputSchema: JsonSchema = { type: 'object', properties: {} }
  let validator: InputValidator | undefined
  if (isValidator(spec.inputSchema)) {
    validator = spec.inputSchema
    if (typeof validator.toJSONSchema !== 'function') {
      throw new AgentConfigException(
        `Invalid "spec.inputSchema" of tool "${spec.name}" (${where}): a validator must also have toJSONSchema() (vine.compile() gives both)`
      )
    }
    inputSchema = validator.toJSONSchema() as JsonSchema
  } else if (spec.inputSchema !== undefined) {
    if (typeof spec.inputSchema !== 'object' || spec.inputSchema === null) {
      throw new AgentConfigException(
        `Invalid "spec.inputSchema" of tool "${spec.name}" (${where}): expected a JSON Schema object or a VineJS validator`
      )
    }
    inputSchema = spec.inputSchema as JsonSchema
  }

  const isClass = typeof definition === 'function'
  if (!isClass && typeof (definition as { handler?: unknown }).handler !== 'function') {
    throw new AgentConfigException(`Missing "handler" of tool "${spec.name}" (${where})`)
  }
  if (isClass && typeof (definition as AgentToolClass).prototype?.handle !== 'function') {
    throw new AgentConfigException(`Tool class "${spec.name}" (${where}) has no handle() method`)
  }

  return {
    spec: { ...spec, inputSchema },
    validator,
    async run(input, context, app: ApplicationService) {
      if (isClass) {
        const instance = await app.container.make(definition as AgentToolClass)
        return instance.handle(input, context)
      }
      return (definition as { handler: Function }).handler(input, context)
    },
  }
}

/**
 * Re-validates a tool input at execution: the model's arguments are
 * untrusted whatever the SDK checked. Returns the (possibly coerced) input.
 */
export async function validateToolInput(tool: ResolvedTool, input: unknown): Promise<unknown> {
  if (tool.validator) {
    try {
      return await tool.validator.validate(input)
    } catch (error) {
      const messages = (error as { messages?: Array<{ message: string }> }).messages
      throw new ToolInputError(messages?.[0]?.message ?? 'The tool input is invalid')
    }
  }
  const problem = checkJsonSchema(tool.spec.inputSchema, input)
  if (problem) {
    throw new ToolInputError(problem)
  }
  return input
}
