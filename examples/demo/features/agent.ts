import { fileURLToPath } from 'node:url'
import type { DemoFeature } from './main.ts'
import { escapeHtml, layout } from './layout.ts'
import { builtPage } from './built_pages.ts'
import { agentModel, DEMO_ACTOR } from '../config/agent.ts'

/** The page's build (vite.agent.config.ts writes it) and its URL prefix */
const page = builtPage(
  fileURLToPath(new URL('../public/agent/', import.meta.url)),
  '/agent-demo/assets/'
)

/**
 * The agent gateway: threads, streamed answers, a refund tool that waits for
 * Approve or Reject, cancel, regenerate and fork, beside the governance
 * view (spend, reliability, tools, pending approvals). React
 * (resources/agent, built by Vite) on the gateway's own routes.
 */
export const agent: DemoFeature = {
  title: 'Agent gateway',
  description:
    'Chat with an agent whose answers stream, approve the refund it asks for, and watch spend and reliability. Runs without an API key.',
  path: '/agent',
  routes(router) {
    router.get('/agent-demo/assets/*', page.sendBuiltFile)

    router.get('/agent', async ({ response }) => {
      const tags = await page.entryTags('page.tsx')
      response.header('content-type', 'text/html; charset=utf-8')
      return layout(
        'Agent gateway',
        `<p>Model: <strong>${escapeHtml(agentModel.label)}</strong>.
        ${agentModel.scripted ? 'Set <code>AGENT_MODEL=openai:gpt-4o-mini</code> (with <code>OPENAI_API_KEY</code>) or <code>anthropic:…</code> (with <code>ANTHROPIC_API_KEY</code>) to talk to a real one.' : ''}</p>
        <p>The demo has no login: every request is the fixed actor <strong>${escapeHtml(DEMO_ACTOR.id)}</strong>
        (roles ${escapeHtml(DEMO_ACTOR.roles?.join(', '))}), set by <code>actorResolver</code> in config/agent.ts,
        and the governance API is open to every visitor.</p>
        ${
          tags
            ? '<div id="agent-root"><p class="muted">Loading…</p></div>'
            : '<p class="error">The page is not built: run <code>npm run build:demo</code> (or <code>npm run demo</code>, which builds it).</p>'
        }`,
        tags ?? '',
        '/agent'
      )
    })
  },
}
