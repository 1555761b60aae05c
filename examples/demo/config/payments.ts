import env from '../start/env.ts'
import { defineConfig, gateways, WEBHOOK_EVENT_TYPES } from 'adonis-atrium/payments'
import { remember } from '../features/payments_state.ts'
import { demoProviders } from '../features/payments_gateways.ts'

/**
 * Every gateway of the demo's list (features/payments_gateways.ts) whose
 * driver this build has, with development credentials; every canonical type
 * has a handler that records what it saw for the page. InfinitePay's payment
 * check and PayPal's certificate are served by the demo itself (this
 * machine has no route to either).
 */
export default defineConfig({
  providers: {
    ...demoProviders(env, gateways),
    fake: gateways.fake({ secret: 'demo-fake-secret' }),
  },
  allowUnverifiedWebhooks: [],
  billing: {
    handlers: Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, remember])),
    passthroughEvents: [],
  },
})
