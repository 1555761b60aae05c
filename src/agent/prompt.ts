import type { ApplicationService } from '@adonisjs/core/types'
import { contributorMethodOf } from './decorators.ts'
import { AgentConfigException } from './errors.ts'
import type { ModelMessage } from './model/port.ts'
import type { MessageAttachment, MessageRow } from './store/contract.ts'
import type {
  AgentActor,
  ResolvedAgent,
  ResolvedAgentConfig,
  SystemPromptContext,
  SystemPromptContributor,
} from './types.ts'

/** A contributor's answer as a section: text, or nothing */
function section(value: unknown): string {
  if (value === null || value === undefined) return ''
  return (typeof value === 'string' ? value : String(value)).trim()
}

/**
 * `systemPromptContributors` of config/agent.ts: functions as they are,
 * classes through the container and their `@systemPromptContributor()`
 * method. A class without one stops the boot naming it.
 */
export function resolveContributors(
  contributors: SystemPromptContributor[] | undefined,
  file: string
): ResolvedAgentConfig['contributors'] {
  if (contributors === undefined) return []
  if (!Array.isArray(contributors)) {
    throw new AgentConfigException(
      `Invalid "systemPromptContributors" in ${file}: expected an array of functions or classes`
    )
  }
  return contributors.map((contributor, index) => {
    if (typeof contributor !== 'function') {
      throw new AgentConfigException(
        `Invalid "systemPromptContributors[${index}]" in ${file}: expected a function or a class with a @systemPromptContributor() method`
      )
    }
    const method = contributorMethodOf(contributor)
    const isClass = /^class[\s{]/.test(Function.prototype.toString.call(contributor))
    if (isClass && method === undefined) {
      throw new AgentConfigException(
        `Invalid "systemPromptContributors[${index}]" in ${file}: class ${contributor.name} has no method decorated with @systemPromptContributor() from adonis-atrium/agent`
      )
    }
    if (method === undefined) {
      const fn = contributor as (context: SystemPromptContext) => unknown
      return async (context: SystemPromptContext) => section(await fn(context))
    }
    return async (context: SystemPromptContext, app: ApplicationService) => {
      const instance: any = await app.container.make(contributor as new () => object)
      return section(await instance[method](context))
    }
  })
}

/**
 * The system prompt of a turn: the agent's own (its `@systemPrompt()`
 * method wins over the flat string), then each contributor's section in
 * config order, separated by blank lines.
 */
export async function buildSystemPrompt(
  app: ApplicationService,
  config: Pick<ResolvedAgentConfig, 'contributors'>,
  agent: ResolvedAgent,
  context: { actor: AgentActor; threadId: string; pageContext?: Record<string, unknown> }
) {
  let base = agent.systemPrompt ?? ''
  if (agent.agentClass && agent.systemPromptMethod !== undefined) {
    const instance: any = await app.container.make(agent.agentClass)
    const prompt = await instance[agent.systemPromptMethod]({
      actor: context.actor,
      threadId: context.threadId,
    })
    base = typeof prompt === 'string' ? prompt : String(prompt ?? '')
  }
  const sections = [base]
  for (const contribute of config.contributors) {
    sections.push(await contribute({ ...context, agentName: agent.name }, app))
  }
  return sections.filter(Boolean).join('\n\n')
}

/**
 * The model's view of the turn's question with the page the user is on:
 * the JSON is appended to the last user message, sent to the model and
 * never stored. It stays in the user's turn, not the system prompt,
 * because it is client data and must not gain the app's authority.
 */
export function withPageContext(
  messages: ModelMessage[],
  pageContext: Record<string, unknown> | undefined
): ModelMessage[] {
  if (!pageContext) return messages
  let last = -1
  for (const [index, message] of messages.entries()) {
    if (message.role === 'user') last = index
  }
  if (last === -1) return messages
  const question = messages[last] as Extract<ModelMessage, { role: 'user' }>
  const copy = [...messages]
  copy[last] = {
    ...question,
    text: `${question.text}\n\n<page_context>\n${JSON.stringify(pageContext)}\n</page_context>`,
  }
  return copy
}

/** A user message as the model sees it; the bytes are read from the staging just before the call */
export function userMessageOf(
  content: string,
  attachments: MessageAttachment[] | null | undefined
): ModelMessage {
  if (!attachments) return { role: 'user', text: content }
  return {
    role: 'user',
    text: content,
    attachments: attachments.map((attachment) => ({
      id: attachment.id,
      name: attachment.name,
      contentType: attachment.contentType,
      data: null,
    })),
  }
}

/**
 * Rebuilds the model's view of a thread. An assistant turn whose tool calls
 * never got results (a run cancelled mid-tool) gets a synthetic refusal, as
 * providers reject a tool call without its result.
 */
export function historyOf(rows: MessageRow[]): ModelMessage[] {
  const messages: ModelMessage[] = []
  for (const [index, row] of rows.entries()) {
    if (row.role === 'user') {
      messages.push(userMessageOf(row.content, row.attachments))
    } else if (row.role === 'assistant') {
      const toolCalls = row.toolCalls ?? []
      messages.push({ role: 'assistant', text: row.content, toolCalls })
      const next = rows[index + 1]
      if (toolCalls.length && next?.role !== 'tool') {
        messages.push({
          role: 'tool',
          results: toolCalls.map((call) => ({
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            output: { error: 'not_run', message: 'This tool call did not run' },
          })),
        })
      }
    } else {
      messages.push({ role: 'tool', results: row.toolResults ?? [] })
    }
  }
  return messages
}
