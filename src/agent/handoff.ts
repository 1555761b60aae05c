import debug from './debug.ts'
import { agentOptionsOf } from './decorators.ts'
import { AgentConfigException } from './errors.ts'
import type { JsonSchema, ModelToolCall } from './model/port.ts'
import type { ThreadStore } from './store/contract.ts'
import { claimToolCall, endToolCall } from './tool_executor.ts'
import type { AgentActor, AgentClass, ResolvedAgent } from './types.ts'

/** How deep handoffs may nest: the agent of the turn is depth 0 */
export const MAX_DELEGATION_DEPTH = 5

/** Tool names starting with it are handoffs; `tools` of config/agent.ts may not use it */
export const HANDOFF_TOOL_PREFIX = 'handoff_to_'

/** Tool names are at most 64 characters (the providers' limit) */
const MAX_TOOL_NAME = 64

/** The tool the model calls to hand a task to `agentName` */
export function handoffToolName(agentName: string) {
  return `${HANDOFF_TOOL_PREFIX}${agentName}`
}

/** `tool` or `handoff`, from the name a tool call is recorded under */
export function toolTypeOf(toolName: string): 'tool' | 'handoff' {
  return toolName.startsWith(HANDOFF_TOOL_PREFIX) ? 'handoff' : 'tool'
}

const HANDOFF_INPUT: JsonSchema = {
  type: 'object',
  properties: {
    message: {
      type: 'string',
      minLength: 1,
      description:
        'The task for this agent, with everything it needs: it does not see the conversation',
    },
  },
  required: ['message'],
  additionalProperties: false,
}

/** A tool of config/agent.ts may not take a handoff tool's name */
export function assertNotHandoffName(toolName: string) {
  if (toolName.startsWith(HANDOFF_TOOL_PREFIX)) {
    throw new AgentConfigException(
      `Invalid tool name "${toolName}" in "tools" of config/agent.ts: names starting with "${HANDOFF_TOOL_PREFIX}" are the handoff tools of agents. Rename the tool`
    )
  }
}

/** The handoff tools of an agent, by tool name */
export function handoffTargets(agent: ResolvedAgent, agents: ResolvedAgent[]) {
  const targets = new Map<string, ResolvedAgent>()
  for (const name of agent.handoff) {
    const target = agents.find((known) => known.name === name)
    if (target) targets.set(handoffToolName(name), target)
  }
  return targets
}

/** How a handoff tool presents itself to the model: the target's name and description */
export function handoffToolSpec(target: ResolvedAgent) {
  return {
    name: handoffToolName(target.name),
    description: target.description || `Hand the task to the agent "${target.name}"`,
    inputSchema: HANDOFF_INPUT,
  }
}

/** A class of `handoff`, or a thunk returning one (for classes declared later) */
function classOf(entry: unknown, where: string): unknown {
  if (agentOptionsOf(entry)) return entry
  // Arrow functions have no prototype: a thunk, not a plain class
  if (typeof entry !== 'function' || entry.prototype !== undefined) return entry
  try {
    return entry()
  } catch (error) {
    throw new AgentConfigException(
      `Invalid ${where}: the function returning the agent class threw (${(error as Error)?.message}). Return a class declared before the config is read`,
      { cause: error }
    )
  }
}

function describe(value: unknown) {
  return typeof value === 'function'
    ? `class ${value.name || '(anonymous)'}`
    : JSON.stringify(value)
}

/**
 * Resolves the `handoff` option of every agent to agent names, at boot: each
 * entry must be an `@agent()` class of the registry, its tool name must fit,
 * and no chain of handoffs may lead back to an agent already in it.
 */
export function resolveHandoffs(agents: ResolvedAgent[], declared: Map<string, unknown>) {
  for (const agent of agents) {
    const entries = declared.get(agent.name)
    if (entries === undefined) continue
    if (!Array.isArray(entries)) {
      throw new AgentConfigException(
        `Invalid "handoff" of agent "${agent.name}": expected an array of @agent() classes`
      )
    }
    for (const [index, entry] of entries.entries()) {
      const target = classOf(entry, `"handoff[${index}]" of agent "${agent.name}"`)
      const options = agentOptionsOf(target)
      if (!options) {
        throw new AgentConfigException(
          `Invalid "handoff[${index}]" of agent "${agent.name}": ${describe(target)} is not decorated with @agent({ name, description }) from adonis-atrium/agent`
        )
      }
      const registered = agents.find((known) => known.agentClass === (target as AgentClass))
      if (!registered) {
        throw new AgentConfigException(
          `Agent "${agent.name}" hands off to "${options.name}" (${describe(target)}), which is not one of the agents. Add it to "agents" of config/agent.ts (or to app/agents/ when agents are discovered)`
        )
      }
      if (handoffToolName(registered.name).length > MAX_TOOL_NAME) {
        throw new AgentConfigException(
          `Agent "${agent.name}" hands off to "${registered.name}", whose handoff tool name "${handoffToolName(registered.name)}" is longer than ${MAX_TOOL_NAME} characters. Shorten the agent name`
        )
      }
      if (!agent.handoff.includes(registered.name)) agent.handoff.push(registered.name)
    }
  }
  rejectCycles(agents)
}

/** A handoff chain that leads back to an agent already in it stops the boot, named */
function rejectCycles(agents: ResolvedAgent[]) {
  const byName = new Map(agents.map((agent) => [agent.name, agent]))
  const done = new Set<string>()
  const path: string[] = []
  const visit = (name: string) => {
    const start = path.indexOf(name)
    if (start !== -1) {
      const cycle = [...path.slice(start), name].join(' → ')
      throw new AgentConfigException(
        `Agents hand off in a cycle: ${cycle} (the "handoff" option of @agent()). A handoff must never lead back to an agent of its own chain: remove one of these handoffs`
      )
    }
    if (done.has(name)) return
    path.push(name)
    for (const next of byName.get(name)?.handoff ?? []) visit(next)
    path.pop()
    done.add(name)
  }
  for (const agent of agents) visit(agent.name)
}

/** The structured result the model reads when a handoff did not answer */
function refusal(error: string, message: string) {
  return { error, message }
}

/** Where a handoff runs: the turn's run, thread, caller, and the depth it is called from */
export interface HandoffScope {
  store: ThreadStore
  runId: string
  threadId: string
  actor: AgentActor
  signal: AbortSignal
  /** Depth of the agent calling the handoff (0 for the agent of the turn) */
  depth: number
  maxMessageLength: number
  /** Runs the target on the task at its depth; null when the step budget ran out first */
  runAgent(target: ResolvedAgent, depth: number, task: string): Promise<string | null>
}

/**
 * Dispatches one handoff call: recorded like a tool call (under its
 * `handoff_to_` name), refused beyond `MAX_DELEGATION_DEPTH`, else the
 * target runs inside the same run and its final text is the result.
 */
export async function dispatchHandoff(
  call: ModelToolCall,
  target: ResolvedAgent,
  scope: HandoffScope
): Promise<unknown> {
  const claim = await claimToolCall(call, scope)
  if (!claim.claimed) {
    return claim.row.status === 'running'
      ? refusal('tool_call_in_progress', 'This handoff is already running')
      : claim.row.output
  }
  const started = performance.now()
  const finish = (status: 'succeeded' | 'failed', output: unknown, errorCode: string | null) =>
    endToolCall(scope, call, {
      status,
      output,
      errorCode,
      executionMs: Math.round(performance.now() - started),
    })

  const depth = scope.depth + 1
  if (depth > MAX_DELEGATION_DEPTH) {
    debug('run %s: handoff to %s refused at depth %d', scope.runId, target.name, depth)
    return finish(
      'failed',
      refusal(
        'max_delegation_depth',
        `Handoffs nest at most ${MAX_DELEGATION_DEPTH} deep: answer without the agent "${target.name}"`
      ),
      'max_delegation_depth'
    )
  }
  const task = (call.input as { message?: unknown } | null)?.message
  if (typeof task !== 'string' || !task.trim() || task.length > scope.maxMessageLength) {
    return finish(
      'failed',
      refusal(
        'invalid_input',
        `input.message must be a non-empty string of at most ${scope.maxMessageLength} characters`
      ),
      'invalid_input'
    )
  }

  let answer: string | null
  try {
    debug('run %s: handoff to %s at depth %d', scope.runId, target.name, depth)
    answer = await scope.runAgent(target, depth, task)
  } catch (error) {
    // The run ends as its cause says (cancel, quota, model failure); the row says the handoff did not answer
    await finish(
      'failed',
      refusal('handoff_failed', `The agent "${target.name}" did not answer`),
      scope.signal.aborted ? 'aborted' : 'handoff_failed'
    ).catch(() => {})
    throw error
  }
  if (answer === null) {
    return finish(
      'failed',
      refusal('max_steps', `The agent "${target.name}" reached the step limit before answering`),
      'max_steps'
    )
  }
  return finish('succeeded', answer, null)
}
