import type { PaddleGatewayOptions } from '../drivers/paddle.ts'
import type { CreatedEndpoint } from './api_creators.ts'
import { gatewayApi, needed } from './http.ts'

/**
 * Paddle Billing: `POST /notification-settings` creates a destination and
 * answers its `endpoint_secret_key`.
 */
export async function createPaddleEndpoint(
  options: PaddleGatewayOptions,
  url: string,
  events: string[]
): Promise<CreatedEndpoint> {
  const token = needed(options.apiKey, 'Paddle', 'apiKey', 'PADDLE_API_KEY')
  const base =
    options.apiBaseUrl ??
    (options.sandbox ? 'https://sandbox-api.paddle.com' : 'https://api.paddle.com')
  const answer = await gatewayApi('Paddle', `${base.replace(/\/+$/, '')}/notification-settings`, {
    token,
    body: {
      description: 'Atrium payments webhook',
      type: 'url',
      destination: url,
      subscribed_events: events,
      api_version: 1,
      include_sensitive_fields: false,
    },
  })
  return {
    id: String(answer?.data?.id),
    secret: String(answer?.data?.endpoint_secret_key ?? ''),
    env: 'PADDLE_WEBHOOK_SECRET',
  }
}
