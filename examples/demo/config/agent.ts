import env from '../start/env.ts'
import { defineConfig } from 'adonis-atrium/agent'
import type { AgentActor } from 'adonis-atrium/agent'
import { demoModel } from '../features/agent_model.ts'
import { SCRIPTED_MODEL_ID } from '../features/agent_scripted_model.ts'
import { refundOrder } from '../features/agent_tools.ts'

/**
 * The demo has no login, so every request is this one customer, with the
 * SUPPORT role the refund tool asks for. A real app resolves the signed-in
 * user with actors.auth() (see docs/agent.md).
 */
export const DEMO_ACTOR: AgentActor = { id: 'demo-customer', roles: ['SUPPORT'] }

/** The model of the /agent page: the local scripted server unless AGENT_MODEL names another */
export const agentModel = demoModel({
  AGENT_MODEL: env.get('AGENT_MODEL'),
  OPENAI_API_KEY: env.get('OPENAI_API_KEY'),
  ANTHROPIC_API_KEY: env.get('ANTHROPIC_API_KEY'),
})

/**
 * The agent gateway of the /agent page: one default agent with the refund
 * tool, which waits for a person's approval. The governance API is open to
 * every visitor here, because the demo has no users; a real app puts its
 * admin check in dashboard.authorize.
 */
export default defineConfig({
  model: agentModel.model,
  actorResolver: () => DEMO_ACTOR,
  discoverAgents: false,
  tools: [refundOrder],
  systemPromptContributors: [
    () =>
      'You are the support agent of the Atrium demo shop. When the customer asks for a refund, call refund_order with the order number and the amount; a person approves it.',
  ],
  // the scripted model's made-up price, so the spend view shows a cost
  pricing: { [SCRIPTED_MODEL_ID]: { inputPricePer1m: '3', outputPricePer1m: '15' } },
  dashboard: { authorize: () => true },
})
