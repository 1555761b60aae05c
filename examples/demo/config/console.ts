import { defineConfig, explainWithLucid, watchers } from 'adonis-atrium/console'

/**
 * The demo records itself: every page's requests, queries, logs and the
 * payments and collaboration events show up at /console. Sign in with the
 * demo user `demo` / `demo`; signed in, you may also replay requests,
 * explain queries and prune. A real app takes the secret from its env and
 * checks its own users (see docs/console.md).
 */
export default defineConfig({
  watchers: [watchers.queries({ slowMs: 100 }), watchers.logs(), watchers.features()],
  prune: { after: '24h' },
  dashboardAuth: {
    secret: 'atrium-demo-console-secret-for-local-use-only',
    login: (username, password) =>
      username === 'demo' && password === 'demo' ? { id: 'demo', name: 'Demo user' } : null,
  },
  authorizeAction: (ctx) => ctx.request.consoleSession?.sub === 'demo',
  explainQuery: explainWithLucid(),
})
