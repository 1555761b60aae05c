import type { DodoPaymentsGatewayOptions } from '../drivers/dodopayments.ts'
import type { CreatedEndpoint } from './api_creators.ts'
import { gatewayApi, needed } from './http.ts'

/**
 * Dodo Payments: `POST /webhooks` creates the endpoint, then
 * `GET /webhooks/:id/secret` answers its signing key.
 */
export async function createDodoPaymentsEndpoint(
  options: DodoPaymentsGatewayOptions,
  url: string,
  events: string[]
): Promise<CreatedEndpoint> {
  const token = needed(options.apiKey, 'Dodo Payments', 'apiKey', 'DODO_PAYMENTS_API_KEY')
  const base = (
    options.apiBaseUrl ??
    (options.testMode ? 'https://test.dodopayments.com' : 'https://live.dodopayments.com')
  ).replace(/\/+$/, '')
  const created = await gatewayApi('Dodo Payments', `${base}/webhooks`, {
    token,
    body: { url, description: 'Atrium payments webhook', filter_types: events },
  })
  const id = String(created?.id)
  const { secret } = await gatewayApi(
    'Dodo Payments',
    `${base}/webhooks/${encodeURIComponent(id)}/secret`,
    { token }
  )
  return { id, secret: String(secret ?? ''), env: 'DODO_PAYMENTS_WEBHOOK_KEY' }
}
