import type { Webhook } from 'standardwebhooks'
import { reject } from '../errors.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import { header, isObject, isoDate, requiredString } from './helpers.ts'

/**
 * Verifies a Standard Webhooks delivery (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) with the `standardwebhooks` package: its 5-minute
 * tolerance both ways, and its rule that any one `v1,<base64>` of the
 * space-separated list may match. Returns the message id and the JSON object.
 */
export function verifyStandardWebhook(
  webhook: Webhook,
  request: WebhookRequest,
  gateway: string
): { messageId: string; body: Record<string, any> } {
  const headers: Record<string, string> = {}
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = header(request, name)
    if (!value) {
      reject(`missing ${name} header`)
    }
    headers[name] = value
  }
  let body: unknown
  try {
    body = webhook.verify(request.rawBody, headers)
  } catch (error) {
    const message = error instanceof SyntaxError ? 'body is not valid JSON' : describe(error)
    reject(`${gateway} ${message}`)
  }
  if (!isObject(body)) {
    reject('body is not a JSON object')
  }
  return { messageId: headers['webhook-id'], body }
}

/**
 * The event of a verified Standard Webhooks delivery whose body is
 * `{ type, timestamp, data }` (Polar, Dodo Payments): the message id is the
 * event id, `map` gives the canonical type and data.
 */
export function standardWebhookEvent(
  webhook: Webhook | undefined,
  request: WebhookRequest,
  provider: string,
  gateway: { name: string; driver: string },
  map: (type: string, data: Record<string, any>) => { type: string; data: unknown }
): WebhookEvent {
  if (!webhook) {
    reject(`${gateway.driver} has no webhookSecret`)
  }
  const { messageId, body } = verifyStandardWebhook(webhook, request, gateway.name)
  const type = requiredString(body.type, 'event type')
  if (!isObject(body.data)) {
    reject(`${gateway.name} event has no data`)
  }
  return {
    id: messageId,
    provider,
    raw: body,
    occurredAt: isoDate(body.timestamp),
    ...map(type, body.data),
  }
}

/** The library's reasons, named the way a host debugging a delivery reads them */
function describe(error: unknown) {
  const message = String((error as Error)?.message ?? '')
  if (message.includes('too old')) return 'webhook-timestamp is older than the 5-minute tolerance'
  if (message.includes('too new')) return 'webhook-timestamp is more than 5 minutes in the future'
  if (message.includes('Invalid Signature Headers')) return 'webhook-timestamp is not a number'
  return 'webhook-signature does not match the body'
}
