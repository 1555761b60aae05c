import type { AgentClass, AgentOptions } from './types.ts'

const AGENT = Symbol.for('atrium.agent.options')
const SYSTEM_PROMPT = Symbol.for('atrium.agent.systemPrompt')
const CONTRIBUTOR = Symbol.for('atrium.agent.systemPromptContributor')

/**
 * Declares an agent class, found at boot in `app/agents/` or listed in
 * `agents` of config/agent.ts.
 *
 * ```ts
 * @agent({ name: 'support', description: 'Answers billing questions', tools: ['lookup_invoice'] })
 * export default class SupportAgent {}
 * ```
 */
export function agent(options: AgentOptions) {
  return function <T extends AgentClass>(target: T) {
    Object.defineProperty(target, AGENT, { value: { ...options }, enumerable: false })
    return target
  }
}

/**
 * Marks the method that builds the agent's system prompt; it takes
 * precedence over `systemPrompt` of `@agent()`. The class is made through
 * the container, so the method can use injected services.
 */
export function systemPrompt() {
  return function (target: object, propertyKey: string | symbol) {
    Object.defineProperty(target.constructor, SYSTEM_PROMPT, {
      value: propertyKey,
      enumerable: false,
      configurable: true,
    })
  }
}

/**
 * Marks the method of a class listed in `systemPromptContributors` that
 * returns a section appended after every agent's system prompt (null or an
 * empty string adds nothing). The class is made through the container.
 */
export function systemPromptContributor() {
  return function (target: object, propertyKey: string | symbol) {
    Object.defineProperty(target.constructor, CONTRIBUTOR, {
      value: propertyKey,
      enumerable: false,
      configurable: true,
    })
  }
}

/** The `@systemPromptContributor()` method name of a class */
export function contributorMethodOf(value: unknown): string | symbol | undefined {
  return typeof value === 'function' ? (value as any)[CONTRIBUTOR] : undefined
}

/** The `@agent()` options of a class, or undefined for any other value */
export function agentOptionsOf(value: unknown): AgentOptions | undefined {
  return typeof value === 'function' ? (value as any)[AGENT] : undefined
}

/** The `@systemPrompt()` method name of an agent class */
export function systemPromptMethodOf(value: AgentClass): string | symbol | undefined {
  return (value as any)[SYSTEM_PROMPT]
}
