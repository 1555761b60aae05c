import type { PaymentDriver, WebhookEvent, WebhookRequest, WebhookVerification } from '../types.ts'
import { GATEWAY_DECLARATIONS, verificationOf, type GatewayName } from './declarations.ts'

/**
 * Base of every gateway driver: its verification state and credential hint
 * are derived from the gateway's declaration, the
 * same one `defineConfig` reads, so a driver cannot disagree with the boot
 * about what it can verify.
 */
export abstract class BaseGatewayDriver<Options extends object> implements PaymentDriver {
  readonly webhookVerification: WebhookVerification
  readonly credentialHint: string
  abstract readonly subscribedEvents: string[]

  constructor(
    readonly name: GatewayName,
    public options: Options
  ) {
    const declaration = GATEWAY_DECLARATIONS[name]
    this.webhookVerification = verificationOf(declaration, options)
    this.credentialHint = `${declaration.credential} (${declaration.env})`
  }

  abstract parse(request: WebhookRequest, provider: string): WebhookEvent | WebhookEvent[]
}
