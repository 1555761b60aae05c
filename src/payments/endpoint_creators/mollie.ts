import type { MollieGatewayOptions } from '../drivers/mollie.ts'
import type { CreatedEndpoint } from './api_creators.ts'
import { gatewayApi, needed } from './http.ts'

/**
 * Mollie next-gen webhooks: `POST /v2/webhooks` answers the webhook with its
 * `webhookSecret`. Classic payment webhooks need no endpoint: each payment
 * names its own `webhookUrl`.
 */
export async function createMollieEndpoint(
  options: MollieGatewayOptions,
  url: string,
  events: string[]
): Promise<CreatedEndpoint> {
  const token = needed(options.apiKey, 'Mollie', 'apiKey', 'MOLLIE_API_KEY')
  const base = (options.apiEndpoint ?? 'https://api.mollie.com/v2/').replace(/\/+$/, '')
  // Only next-gen event types can be subscribed; the classic webhook is set per payment
  const eventTypes = events.filter((name) => /^[a-z-]+\.[a-z-]+$/.test(name))
  const answer = await gatewayApi('Mollie', `${base}/webhooks`, {
    token,
    body: { name: 'Atrium payments webhook', url, eventTypes },
  })
  return {
    id: String(answer?.id),
    secret: String(answer?.webhookSecret ?? ''),
    env: 'MOLLIE_WEBHOOK_SECRET',
  }
}
