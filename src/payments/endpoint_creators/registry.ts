import { randomBytes, randomUUID } from 'node:crypto'
import type { PaymentDriver } from '../types.ts'
import { importOptional } from '../../shared/optional_import.ts'
import {
  ENDPOINT_API_CREATORS,
  WEBHOOK_DASHBOARD_PAGES,
  type EndpointCreator,
} from './api_creators.ts'

/** What a creator reports back: lines to print, or the one problem that stopped it */
export type CreateOutcome =
  { ok: true; lines: string[]; success: string } | { ok: false; error: string }

/** Creates a provider's webhook endpoint through its gateway's API */
export type WebhookCreator = (
  driver: PaymentDriver,
  provider: string,
  url: string
) => Promise<CreateOutcome>

/**
 * Square: `POST /v2/webhooks/subscriptions` through the `square` SDK creates a
 * subscription for the URL and returns its signature key.
 */
async function createSquare(
  driver: PaymentDriver,
  provider: string,
  url: string
): Promise<CreateOutcome> {
  const options = (driver as import('../drivers/square.ts').SquareDriver).options
  if (!options.accessToken) {
    return {
      ok: false,
      error: `Missing "providers.${provider}" accessToken in config/payments.ts. Set SQUARE_ACCESS_TOKEN to create subscriptions`,
    }
  }
  const { SquareClient } = await importOptional<typeof import('square')>(
    'square',
    'payments:webhook --create for Square'
  )
  const client = new SquareClient({
    token: options.accessToken,
    ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}),
    maxRetries: 0,
  } as any)
  const { subscription } = await client.webhooks.subscriptions.create({
    idempotencyKey: randomUUID(),
    subscription: {
      name: 'Atrium payments webhook',
      eventTypes: driver.subscribedEvents,
      notificationUrl: url,
    },
  })
  return {
    ok: true,
    success: `Created Square webhook subscription ${subscription?.id} for ${subscription?.notificationUrl}`,
    lines: [
      `Signature key: ${subscription?.signatureKey}`,
      `Set it as SQUARE_WEBHOOK_SIGNATURE_KEY and ${url} as SQUARE_WEBHOOK_URL (the URL is part of what Square signs)`,
    ],
  }
}

/**
 * Lemon Squeezy: `POST /v1/webhooks` takes the signing secret from the caller,
 * so one is generated here, sent, and printed once.
 */
async function createLemonSqueezy(
  driver: PaymentDriver,
  provider: string,
  url: string
): Promise<CreateOutcome> {
  const options = (driver as import('../drivers/lemonsqueezy.ts').LemonSqueezyDriver).options
  if (!options.apiKey || !options.storeId) {
    return {
      ok: false,
      error: `Missing "providers.${provider}" apiKey or storeId in config/payments.ts. Set LEMONSQUEEZY_API_KEY and LEMONSQUEEZY_STORE_ID to create webhooks`,
    }
  }
  const secret = randomBytes(20).toString('hex')
  const base = (options.apiBaseUrl ?? 'https://api.lemonsqueezy.com').replace(/\/+$/, '')
  const response = await fetch(`${base}/v1/webhooks`, {
    method: 'POST',
    headers: {
      'accept': 'application/vnd.api+json',
      'content-type': 'application/vnd.api+json',
      'authorization': `Bearer ${options.apiKey}`,
    },
    body: JSON.stringify({
      data: {
        type: 'webhooks',
        attributes: { url, events: driver.subscribedEvents, secret },
        relationships: { store: { data: { type: 'stores', id: String(options.storeId) } } },
      },
    }),
    signal: AbortSignal.timeout(30_000),
  })
  const body = (await response.json().catch(() => null)) as any
  if (!response.ok) {
    const detail = body?.errors?.[0]?.detail ?? body?.errors?.[0]?.title ?? ''
    return {
      ok: false,
      error: `Lemon Squeezy answered ${response.status} ${detail}`.trim(),
    }
  }
  return {
    ok: true,
    success: `Created Lemon Squeezy webhook ${body?.data?.id} for ${body?.data?.attributes?.url ?? url}`,
    lines: [
      `Signing secret: ${secret}`,
      'Set it as LEMONSQUEEZY_WEBHOOK_SECRET: it was generated here and is not shown again',
    ],
  }
}

/** A creator that answers the endpoint's id and secret, as a command outcome */
function fromEndpointCreator(load: () => Promise<EndpointCreator>): WebhookCreator {
  return async (driver, _provider, url) => {
    try {
      const create = await load()
      const endpoint = await create((driver as any).options, url, driver.subscribedEvents)
      return {
        ok: true,
        success: `Created ${driver.name} webhook endpoint ${endpoint.id} for ${url}`,
        lines: [`Set ${endpoint.env}=${endpoint.secret}`],
      }
    } catch (error) {
      return {
        ok: false,
        error: `Could not create the ${driver.name} endpoint: ${(error as Error).message}`,
      }
    }
  }
}

/** Gateways whose API creates an endpoint and hands back (or takes) its secret */
export const WEBHOOK_CREATORS: Record<string, WebhookCreator> = {
  lemonsqueezy: createLemonSqueezy,
  square: createSquare,
  ...Object.fromEntries(
    Object.entries(ENDPOINT_API_CREATORS).map(([name, load]) => [name, fromEndpointCreator(load)])
  ),
}

/** Where a gateway without such an API has its webhooks set up */
export const DASHBOARD_PATHS: Record<string, string> = {
  ...WEBHOOK_DASHBOARD_PAGES,
  mercadopago:
    'Mercado Pago: Your integrations > your application > Webhooks > Configure notifications (copy the secret signature it shows)',
  pagarme:
    'Pagar.me: Dashboard > Settings > Webhooks (the signature key is your account secret key)',
  razorpay:
    'Razorpay: Dashboard > Account & Settings > Webhooks > Add New Webhook (you choose the secret there)',
}
