/**
 * What `payments:webhook --create` asks each gateway to send: every event a
 * driver subscribes to is one its section of docs/payments.md maps, and the
 * payment events the table starts with are among them.
 */
import { readFileSync } from 'node:fs'
import { test } from '@japa/runner'
import { DODO_PAYMENTS_EVENTS } from '../../src/payments/drivers/dodopayments.ts'
import { LEMONSQUEEZY_EVENTS } from '../../src/payments/drivers/lemonsqueezy.ts'
import { MERCADOPAGO_EVENTS } from '../../src/payments/drivers/mercadopago.ts'
import { MOLLIE_EVENTS } from '../../src/payments/drivers/mollie.ts'
import { PADDLE_EVENTS } from '../../src/payments/drivers/paddle.ts'
import { PAGARME_EVENTS } from '../../src/payments/drivers/pagarme.ts'
import { PAYPAL_EVENTS } from '../../src/payments/drivers/paypal.ts'
import { POLAR_EVENTS } from '../../src/payments/drivers/polar.ts'
import { RAZORPAY_EVENTS } from '../../src/payments/drivers/razorpay.ts'
import { SQUARE_EVENTS } from '../../src/payments/drivers/square.ts'

const DOCS = readFileSync(new URL('../../docs/payments.md', import.meta.url), 'utf8')

/** The `### ...` section of docs/payments.md for `gateways.<name>(` */
function section(name: string) {
  const start = DOCS.indexOf(`(\`gateways.${name}(`)
  const end = DOCS.indexOf('\n### ', start)
  return DOCS.slice(start, end)
}

/** Each gateway's subscribed events, and the payment events its table must start with */
const GATEWAYS: [string, string[], string[]][] = [
  ['paddle', PADDLE_EVENTS, ['transaction.completed', 'transaction.payment_failed']],
  ['polar', POLAR_EVENTS, ['order.paid', 'order.refunded']],
  ['dodopayments', DODO_PAYMENTS_EVENTS, ['payment.succeeded', 'payment.failed']],
  ['paypal', PAYPAL_EVENTS, ['PAYMENT.CAPTURE.COMPLETED', 'PAYMENT.CAPTURE.REFUNDED']],
  ['lemonsqueezy', LEMONSQUEEZY_EVENTS, ['order_created', 'order_refunded']],
  ['mercadopago', MERCADOPAGO_EVENTS, ['payment', 'subscription_preapproval']],
  ['pagarme', PAGARME_EVENTS, ['charge.paid', 'charge.refunded']],
  ['razorpay', RAZORPAY_EVENTS, ['payment.captured', 'refund.processed']],
  ['square', SQUARE_EVENTS, ['payment.created', 'payment.updated']],
]

test.group('Payments: the events payments:webhook --create subscribes to', () => {
  test('every subscribed event is named in its gateway mapping table', ({ assert }) => {
    for (const [name, events, required] of GATEWAYS) {
      const text = section(name)
      assert.isAbove(text.length, 200, name)
      for (const event of required) assert.include(events, event, name)
      for (const event of events) {
        // The tables shorten siblings: `subscription.updated`, `.paused` (or `_paused`)
        const dot = event.slice(event.lastIndexOf('.'))
        const underscore = event.slice(event.lastIndexOf('_'))
        const named =
          text.includes(`\`${event}\``) ||
          (dot.length > 1 && text.includes(`\`${dot}\``)) ||
          (underscore.length > 1 && text.includes(`\`${underscore}\``))
        assert.isTrue(named && event.length > 0, `${name}: "${event}" is not in its table`)
      }
    }
  })

  test('mollie: next-gen payment links are subscribed beside the classic webhook', ({ assert }) => {
    assert.include(MOLLIE_EVENTS, 'payment-link.paid')
    assert.include(section('mollie'), '`payment-link.paid`')
    assert.isTrue(MOLLIE_EVENTS.some((event) => event.includes('tr_')))
  })
})
