import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import string from '@adonisjs/core/helpers/string'
import { stubsRoot } from '../stubs/main.ts'
import { WEBHOOK_EVENT_TYPES } from '../src/payments/types.ts'

/**
 * Scaffolds `app/payment_handlers/<type>.ts`: a class with a static
 * `eventType` and a typed `handle(event)`.
 */
export default class MakeWebhookHandler extends BaseCommand {
  static commandName = 'make:webhook-handler'
  static description = 'Create a payment webhook handler for one event type'

  @args.string({ description: 'Event type, e.g. payment.succeeded or payment_anticipated' })
  declare eventType: string

  @flags.boolean({ description: 'Overwrite an existing file' })
  declare force?: boolean

  async run() {
    const type = this.eventType.trim()
    const canonical = (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)
    const namespaced = type.startsWith('payment.') || type.startsWith('subscription.')
    if (namespaced && !canonical) {
      this.logger.warning(
        `"${type}" is not one of the ten canonical types: declare it in billing.passthroughEvents of config/payments.ts or the app refuses to boot`
      )
    }
    const name = string.snakeCase(type.replace(/\./g, '_'))
    const codemods = await this.createCodemods()
    codemods.overwriteExisting = this.force === true
    await codemods.makeUsingStub(stubsRoot, 'make/webhook_handler/main.stub', {
      type,
      canonical,
      className: `${string.pascalCase(name)}Handler`,
      fileName: `${name}.ts`,
    })
  }
}
