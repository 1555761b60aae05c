import { agentOptionsOf, systemPromptMethodOf } from './decorators.ts'
import { CONFIG_FILE, positiveInteger } from './config_checks.ts'
import { AgentConfigException } from './errors.ts'
import { resolveHandoffs } from './handoff.ts'
import type { AgentClass, ResolvedAgent } from './types.ts'

const AGENT_NAME = /^[a-zA-Z0-9_-]{1,100}$/

/** Where the agent classes come from, for the messages of boot errors */
export type AgentSource =
  { kind: 'config' } | { kind: 'discovered'; files: Map<AgentClass, string> }

/** What the registry is checked against */
export interface AgentRegistryOptions {
  maxSteps: number
  /** The default output cap of an agent that declares none */
  maxOutputTokens?: number
  toolNames: Set<string>
  defaultAgent?: string
  source: AgentSource
}

/** The agent class as a boot error names it: its list entry, or the file it came from */
function placeOf(agentClass: unknown, index: number, source: AgentSource) {
  if (source.kind === 'discovered') {
    return `${source.files.get(agentClass as AgentClass)} (discovered in app/agents/)`
  }
  return `"agents[${index}]" in ${CONFIG_FILE}`
}

/**
 * The agents of the gateway from their `@agent()` classes: names unique,
 * tool allow-lists known, handoffs resolved to registered agents without
 * cycles, and the default agent chosen. Without classes one agent named
 * `default` answers.
 */
export function resolveAgentRegistry(classes: unknown[], options: AgentRegistryOptions) {
  const { maxSteps, source } = options
  const agents: ResolvedAgent[] = []
  const handoffs = new Map<string, unknown>()
  for (const [index, agentClass] of classes.entries()) {
    const agentOptions = agentOptionsOf(agentClass)
    if (!agentOptions) {
      throw new AgentConfigException(
        `Invalid ${placeOf(agentClass, index, source)}: ${typeof agentClass === 'function' ? `class ${agentClass.name}` : JSON.stringify(agentClass)} is not decorated with @agent({ name, description }) from adonis-atrium/agent`
      )
    }
    const klass = agentClass as AgentClass
    if (typeof agentOptions.name !== 'string' || !AGENT_NAME.test(agentOptions.name)) {
      throw new AgentConfigException(
        `Invalid agent name ${JSON.stringify(agentOptions.name)} on ${klass.name} (${placeOf(klass, index, source)}): use letters, digits, "_" or "-"`
      )
    }
    const twin = agents.find((known) => known.name === agentOptions.name)
    if (twin) {
      throw new AgentConfigException(
        source.kind === 'config'
          ? `Two agents are named "${agentOptions.name}" in "agents" of ${CONFIG_FILE}: agent names must be unique`
          : `Two agents are named "${agentOptions.name}" in app/agents/ (${source.files.get(twin.agentClass!)} and ${source.files.get(klass)}): agent names must be unique`
      )
    }
    if (agentOptions.tools !== undefined && !Array.isArray(agentOptions.tools)) {
      throw new AgentConfigException(
        `Invalid "tools" of agent "${agentOptions.name}": expected an array of tool names`
      )
    }
    const unknownTool = agentOptions.tools?.find((name) => !options.toolNames.has(name))
    if (unknownTool) {
      throw new AgentConfigException(
        `Agent "${agentOptions.name}" lists tool "${unknownTool}", which is not in "tools" of ${CONFIG_FILE}. Add the tool or remove it from the agent's tools`
      )
    }
    handoffs.set(agentOptions.name, agentOptions.handoff)
    const agentOf = `agent "${agentOptions.name}"`
    agents.push({
      name: agentOptions.name,
      description: agentOptions.description ?? '',
      systemPrompt: agentOptions.systemPrompt,
      model: agentOptions.model,
      maxSteps: positiveInteger('maxSteps', agentOptions.maxSteps, maxSteps, { of: agentOf }),
      maxOutputTokens: positiveInteger(
        'maxOutputTokens',
        agentOptions.maxOutputTokens,
        options.maxOutputTokens,
        { of: agentOf }
      ),
      tools: agentOptions.tools,
      handoff: [],
      agentClass: klass,
      systemPromptMethod: systemPromptMethodOf(klass),
    })
  }
  if (!agents.length) {
    // Without agent classes the gateway still answers, as the spec's 'default' agent
    agents.push({
      name: 'default',
      description: 'Default agent',
      maxSteps,
      maxOutputTokens: options.maxOutputTokens,
      handoff: [],
    })
  }
  resolveHandoffs(agents, handoffs)

  let defaultAgent = options.defaultAgent
  if (defaultAgent !== undefined && !agents.some((known) => known.name === defaultAgent)) {
    throw new AgentConfigException(
      `"defaultAgent" in ${CONFIG_FILE} is "${defaultAgent}", which is not one of the agents: ${agents.map((known) => known.name).join(', ')}`
    )
  }
  defaultAgent ??= agents.length === 1 ? agents[0].name : 'default'
  return { agents, defaultAgent }
}
