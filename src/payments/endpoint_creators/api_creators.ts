/** What `payments:webhook --create` prints once a gateway's API created the endpoint */
export interface CreatedEndpoint {
  /** The gateway's id of the endpoint */
  id: string
  /** What the app verifies deliveries with (a signing secret, or PayPal's webhook id) */
  secret: string
  /** The env variable it goes in */
  env: string
}

export type EndpointCreator = (
  options: any,
  url: string,
  events: string[]
) => Promise<CreatedEndpoint>

/**
 * Gateways whose API creates a webhook endpoint and returns what verifies it,
 * by driver name; each creator is imported only when used.
 */
export const ENDPOINT_API_CREATORS: Record<string, () => Promise<EndpointCreator>> = {
  paddle: () => import('./paddle.ts').then((module) => module.createPaddleEndpoint),
  polar: () => import('./polar.ts').then((module) => module.createPolarEndpoint),
  dodopayments: () =>
    import('./dodopayments.ts').then((module) => module.createDodoPaymentsEndpoint),
  paypal: () => import('./paypal.ts').then((module) => module.createPayPalEndpoint),
  mollie: () => import('./mollie.ts').then((module) => module.createMollieEndpoint),
}

/**
 * Where a host creates the webhook of a gateway whose API cannot, by driver name.
 */
export const WEBHOOK_DASHBOARD_PAGES: Record<string, string> = {
  asaas: 'Asaas: Integrações → Webhooks',
  woovi: 'Woovi: API/Plugins → Webhooks',
  pagbank: 'PagBank: the notification_urls of each order (no endpoint to create)',
  adyen: 'Adyen Customer Area: Developers → Webhooks',
  infinitepay: 'InfinitePay: the webhook_url of each checkout link (no endpoint to create)',
}
