import { paypalAccessToken, paypalApiBase, type PayPalGatewayOptions } from '../drivers/paypal.ts'
import type { CreatedEndpoint } from './api_creators.ts'
import { gatewayApi, needed } from './http.ts'

/**
 * PayPal: `POST /v1/notifications/webhooks` with an OAuth token answers the
 * webhook's id, which is what deliveries are verified against.
 */
export async function createPayPalEndpoint(
  options: PayPalGatewayOptions,
  url: string,
  events: string[]
): Promise<CreatedEndpoint> {
  needed(options.clientId, 'PayPal', 'clientId', 'PAYPAL_CLIENT_ID')
  needed(options.clientSecret, 'PayPal', 'clientSecret', 'PAYPAL_CLIENT_SECRET')
  const token = await paypalAccessToken(options)
  const answer = await gatewayApi('PayPal', `${paypalApiBase(options)}/v1/notifications/webhooks`, {
    token,
    body: { url, event_types: events.map((name) => ({ name })) },
  })
  const id = String(answer?.id ?? '')
  return { id, secret: id, env: 'PAYPAL_WEBHOOK_ID' }
}
