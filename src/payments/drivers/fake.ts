import { BaseGatewayDriver } from './base_driver.ts'
import { createHmac } from 'node:crypto'
import { reject } from '../errors.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  isObject,
  jsonObject,
  optionalString,
  requiredString,
  safeCompare,
} from './helpers.ts'
import { WEBHOOK_EVENT_TYPES } from '../types.ts'

export interface FakeGatewayOptions {
  /** Signs `x-fake-signature` (hex HMAC-SHA256 of the raw body) */
  secret?: string
}

/**
 * A gateway for tests and demos: the body is `{ id, type, data }` (or an
 * array of them) already in canonical form, signed with `x-fake-signature`.
 */
export class FakeDriver extends BaseGatewayDriver<FakeGatewayOptions> {
  readonly subscribedEvents = [...WEBHOOK_EVENT_TYPES]

  constructor(options: FakeGatewayOptions = {}) {
    super('fake', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent | WebhookEvent[] {
    if (!this.options.secret) {
      reject('fake has no secret')
    }
    const signature = header(request, 'x-fake-signature')
    if (!signature) {
      reject('missing x-fake-signature header')
    }
    const expected = createHmac('sha256', this.options.secret).update(request.rawBody).digest('hex')
    if (!safeCompare(expected, signature)) {
      reject('x-fake-signature does not match the body')
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(request.rawBody.toString('utf8'))
    } catch {
      reject('body is not valid JSON')
    }
    if (Array.isArray(parsed)) {
      return parsed.map((entry) => this.#event(entry, provider))
    }
    return this.#event(jsonObject(request.rawBody), provider)
  }

  #event(entry: unknown, provider: string): WebhookEvent {
    if (!isObject(entry)) {
      reject('fake event is not an object')
    }
    return {
      id: requiredString(entry.id, 'event id'),
      type: requiredString(entry.type, 'event type'),
      data: isObject(entry.data) ? entry.data : {},
      raw: entry,
      provider,
      occurredAt: optionalString(entry.occurredAt),
    }
  }
}
