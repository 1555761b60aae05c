import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { DASHBOARD_PATHS, WEBHOOK_CREATORS } from '../src/payments/endpoint_creators/registry.ts'

/** Widest line of the Events column */
const EVENTS_WIDTH = 48

/**
 * The app's public base URL: the flag, then APP_URL, then the host and port
 * the app listens on (HOST, PORT), as `node ace serve` binds them.
 */
export function baseUrlOf(flag?: string, env: NodeJS.ProcessEnv = process.env) {
  if (flag) return flag.replace(/\/+$/, '')
  if (env.APP_URL) return env.APP_URL.replace(/\/+$/, '')
  const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.PORT || 3333}`
}

/**
 * Joins names with ", " into lines no wider than `width` (a name longer
 * than the width gets a line of its own).
 */
export function wrapList(names: string[], width: number) {
  const lines: string[] = []
  for (const name of names) {
    const last = lines.length - 1
    if (last >= 0 && lines[last].length + 2 + name.length <= width) {
      lines[last] += `, ${name}`
    } else {
      if (last >= 0) lines[last] += ','
      lines.push(name)
    }
  }
  return lines.join('\n')
}

/**
 * Prints the webhook URL and the events to subscribe to for each configured
 * provider; `--create` registers the endpoint through the gateway's API
 * (Stripe, Paddle, Polar, Dodo Payments, PayPal, Mollie) and prints what
 * verifies its deliveries (a signing secret, or PayPal's webhook id).
 */
export default class PaymentsWebhook extends BaseCommand {
  static commandName = 'payments:webhook'
  static description =
    'Show the webhook URL and events of each payment provider, or create an endpoint through the gateway API'
  static options: CommandOptions = { startApp: true }

  @flags.string({
    description: 'Public base URL of the app (default APP_URL, else http://HOST:PORT)',
  })
  declare url?: string

  @flags.string({ description: 'Alias of --url' })
  declare baseUrl?: string

  @flags.boolean({
    description:
      'Create the endpoint through the gateway API (Stripe, Square, Lemon Squeezy, Paddle, Polar, Dodo Payments, PayPal, Mollie)',
  })
  declare create?: boolean

  @flags.string({ description: 'Provider to create the endpoint for', default: 'stripe' })
  declare provider: string

  async run() {
    const manager = await this.app.container.make('atrium.payments')
    await manager.init({ schema: false })
    const base = baseUrlOf(this.url ?? this.baseUrl)
    const urlOf = (name: string) => `${base}${manager.config.routes.prefix}/${name}`

    if (this.create) {
      const driver = manager.drivers.get(this.provider)
      const creator = driver ? WEBHOOK_CREATORS[driver.name] : undefined
      if (driver && creator) {
        const outcome = await creator(driver, this.provider, urlOf(this.provider))
        if (!outcome.ok) {
          this.exitCode = 1
          this.logger.error(outcome.error)
          return
        }
        this.logger.success(outcome.success)
        for (const line of outcome.lines) this.logger.info(line)
        return
      }
      if (!driver || driver.name !== 'stripe') {
        this.exitCode = 1
        const dashboard = driver && DASHBOARD_PATHS[driver.name]
        const creators = ['stripe', ...Object.keys(WEBHOOK_CREATORS)].join(', ')
        this.logger.error(
          `--create works for providers whose gateway API creates endpoints (${creators}); "${this.provider}" is ${driver ? `a ${driver.name} provider` : 'not configured'}. Create its webhook in ${dashboard ?? "the gateway's dashboard"} with the URL "payments:webhook" prints`
        )
        return
      }
      const stripe = driver as import('../src/payments/drivers/stripe.ts').StripeDriver
      if (!stripe.options.apiKey) {
        this.exitCode = 1
        this.logger.error(
          `Missing "providers.${this.provider}" apiKey in config/payments.ts. Set STRIPE_SECRET_KEY to create endpoints`
        )
        return
      }
      const endpoint = await stripe.client.webhookEndpoints.create({
        url: urlOf(this.provider),
        enabled_events: driver.subscribedEvents as any,
        description: 'Atrium payments webhook',
      })
      this.logger.success(`Created Stripe webhook endpoint ${endpoint.id} for ${endpoint.url}`)
      this.logger.info(`Signing secret: ${endpoint.secret}`)
      this.logger.info('Set it as STRIPE_WEBHOOK_SECRET: Stripe shows it only once')
      return
    }

    this.#table(manager, urlOf)
  }

  #table(
    manager: import('../src/payments/manager.ts').PaymentsManager,
    urlOf: (name: string) => string
  ) {
    const table = this.ui.table()
    table.head(['Provider', 'Driver', 'Verification', 'URL', 'Events'])
    for (const [name, driver] of manager.drivers) {
      table.row([
        name,
        driver.name,
        driver.webhookVerification,
        urlOf(name),
        wrapList(driver.subscribedEvents, EVENTS_WIDTH),
      ])
    }
    table.render()
  }
}
