/**
 * Lucid models over the agent tables (`adonis-atrium/agent/models`).
 */
export { default as AgentThread } from './agent_thread.ts'
export { default as AgentMessage } from './agent_message.ts'
export { default as AgentRun } from './agent_run.ts'
export { default as AgentToolCall } from './agent_tool_call.ts'
export { default as AgentUsage } from './agent_usage.ts'
export { default as AgentPricing } from './agent_pricing.ts'
export { default as AgentRollup } from './agent_rollup.ts'
export { default as AgentModelRollup } from './agent_model_rollup.ts'
export { default as AgentActorRollup } from './agent_actor_rollup.ts'
export { default as AgentRunRollup } from './agent_run_rollup.ts'
export { default as AgentErrorRollup } from './agent_error_rollup.ts'
export { default as AgentDurationRollup } from './agent_duration_rollup.ts'
