import { AtriumException } from '../shared/errors.ts'

/** The message of an error built from a string or the `[message]` tuple `createError` used */
function text(message: string | [string]) {
  return Array.isArray(message) ? message[0] : message
}

/**
 * A delivery that cannot be trusted or understood: bad or missing signature,
 * tampered or unparsable body, unknown provider. Answered 400 with the one
 * Atrium error body naming the provider; never recorded in the ledger.
 */
export class WebhookRejectedException extends AtriumException {
  static status = 400
  static code = 'E_WEBHOOK_REJECTED'

  /** The `:provider` segment the delivery came in on; set by the processor when known */
  provider?: string

  constructor(message: string, provider?: string, options?: ErrorOptions) {
    super(message, { ...options, status: 400, code: 'E_WEBHOOK_REJECTED' })
    this.provider = provider
  }

  toResponseBody() {
    const provider = this.provider === undefined ? {} : { provider: this.provider.slice(0, 64) }
    return { errors: [{ code: 'E_WEBHOOK_REJECTED', message: this.message, ...provider }] }
  }
}

/**
 * A body larger than `maxBodySize`: answered 413 before it is read whole.
 */
export class WebhookTooLargeException extends AtriumException {
  static status = 413
  static code = 'E_WEBHOOK_TOO_LARGE'
}

/**
 * `config/payments.ts` is missing, invalid, or asks for something the boot
 * cannot trust (a verifying gateway without its credential, two handlers for
 * one type). The message names the file, the key and the fix.
 */
export class PaymentsConfigException extends AtriumException {
  static status = 500
  static code = 'E_PAYMENTS_CONFIG'

  constructor(message: string | [string], options?: ErrorOptions) {
    super(text(message), { ...options, status: 500, code: 'E_PAYMENTS_CONFIG' })
  }
}

/**
 * `payment.dispute_closed` without an outcome: the event fails and is retried.
 */
export class DisputeOutcomeMissingException extends AtriumException {
  static status = 500
  static code = 'E_DISPUTE_OUTCOME_MISSING'

  constructor(eventId: string | [string], options?: ErrorOptions) {
    super(
      `payment.dispute_closed event "${text(eventId)}" carries no outcome (expected won, lost, expired or canceled)`,
      { ...options, status: 500, code: 'E_DISPUTE_OUTCOME_MISSING' }
    )
  }
}

export const E_WEBHOOK_REJECTED = WebhookRejectedException
export const E_WEBHOOK_TOO_LARGE = WebhookTooLargeException
export const E_PAYMENTS_CONFIG = PaymentsConfigException
export const E_DISPUTE_OUTCOME_MISSING = DisputeOutcomeMissingException

/**
 * Rejects a delivery: the route answers 400 and writes a `webhook.rejected` audit row.
 */
export function reject(message: string): never {
  throw new WebhookRejectedException(message)
}

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
export const E_PAYMENTS_SCHEMA = PaymentsSchemaException
