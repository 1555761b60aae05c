import { createError, Exception } from '@adonisjs/core/exceptions'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * A delivery that cannot be trusted or understood: bad or missing signature,
 * tampered or unparsable body, unknown provider. Answered 400, never recorded.
 */
export class WebhookRejectedException extends Exception {
  static status = 400
  static code = 'E_WEBHOOK_REJECTED'

  constructor(
    message: string,
    public provider?: string
  ) {
    super(message, { status: 400, code: 'E_WEBHOOK_REJECTED' })
  }

  async handle(error: this, ctx: HttpContext) {
    ctx.response.status(error.status).send({ received: false, error: error.message })
  }
}

/**
 * Boot refuses a provider that can verify but has no credential, or a
 * handler setup it cannot trust.
 */
export const E_PAYMENTS_CONFIG = createError<[string]>('%s', 'E_PAYMENTS_CONFIG', 500)

/**
 * `payment.dispute_closed` without an outcome: the event fails and is retried.
 */
export const E_DISPUTE_OUTCOME_MISSING = createError<[string]>(
  'payment.dispute_closed event "%s" carries no outcome (expected won, lost, expired or canceled)',
  'E_DISPUTE_OUTCOME_MISSING',
  500
)

/**
 * Rejects a delivery: the route answers 400 and writes a `webhook.rejected` audit row.
 */
export function reject(message: string): never {
  throw new WebhookRejectedException(message)
}

import { AtriumException } from '../shared/errors.ts'

/**
 * A billing table or column the published migrations create is missing:
 * the app has not run them (or runs an older copy). Raised by the store,
 * which never alters tables itself.
 */
export class PaymentsSchemaException extends AtriumException {
  static status = 500
  static code = 'E_PAYMENTS_SCHEMA'

  constructor(missing: string[]) {
    super(
      `The billing tables are not migrated (missing ${missing.join(', ')}). Publish the payments migrations with "node ace configure adonis-atrium --features=payments" if needed, then run "node ace migration:run"`,
      { status: 500, code: 'E_PAYMENTS_SCHEMA', details: { missing } }
    )
  }
}
