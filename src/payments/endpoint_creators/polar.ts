import type { PolarGatewayOptions } from '../drivers/polar.ts'
import type { CreatedEndpoint } from './api_creators.ts'
import { gatewayApi, needed } from './http.ts'

/**
 * Polar: `POST /v1/webhooks/endpoints` (raw format) answers the endpoint with its `secret`.
 */
export async function createPolarEndpoint(
  options: PolarGatewayOptions,
  url: string,
  events: string[]
): Promise<CreatedEndpoint> {
  const token = needed(options.accessToken, 'Polar', 'accessToken', 'POLAR_ACCESS_TOKEN')
  const base =
    options.apiBaseUrl ??
    (options.sandbox ? 'https://sandbox-api.polar.sh' : 'https://api.polar.sh')
  const answer = await gatewayApi('Polar', `${base.replace(/\/+$/, '')}/v1/webhooks/endpoints`, {
    token,
    body: { url, format: 'raw', events },
  })
  return {
    id: String(answer?.id),
    secret: String(answer?.secret ?? ''),
    env: 'POLAR_WEBHOOK_SECRET',
  }
}
