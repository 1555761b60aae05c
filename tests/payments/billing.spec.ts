import { test } from '@japa/runner'
import { readFile } from 'node:fs/promises'
import { integerAmount, toMinorUnits } from '../../src/payments/money.ts'
import { WebhookRejectedException } from '../../src/payments/errors.ts'
import { MIGRATION_STUBS } from '../migration_stubs.ts'
import { fakeEvent, paymentsApp } from './helpers.ts'

let counter = 0
const ev = (type: string, data: Record<string, unknown>) =>
  fakeEvent(`evt_${++counter}`, type, data)
const pay = (extra: Record<string, unknown> = {}) => ({
  paymentId: 'pay_1',
  amount: 1000,
  currency: 'BRL',
  ...extra,
})
const dispute = (extra: Record<string, unknown> = {}) => ({
  disputeId: 'dp_1',
  paymentId: 'pay_1',
  amount: 1000,
  ...extra,
})

async function setup() {
  const app = await paymentsApp()
  const send = async (type: string, data: Record<string, unknown>) => {
    const response = await app.deliver('fake', ev(type, data))
    return response.status
  }
  const payment = async () => {
    const [row] = await app.rows('payments')
    return row
  }
  const paymentStatus = async () => {
    const row = await payment()
    return row.status
  }
  return { app, send, payment, paymentStatus }
}

test.group('Payment row', () => {
  test('payment.succeeded creates the row as paid when absent', async ({ assert }) => {
    const { send, payment } = await setup()
    assert.equal(await send('payment.succeeded', pay({ externalReference: 'ord-9' })), 200)
    const row = await payment()
    assert.equal(row.status, 'paid')
    assert.equal(Number(row.amount), 1000)
    assert.equal(row.external_reference, 'ord-9')
    assert.isNotNull(row.paid_at)
  })

  test('payment.succeeded moves a failed payment to paid', async ({ assert }) => {
    const { send, paymentStatus } = await setup()
    await send('payment.failed', pay())
    assert.equal(await paymentStatus(), 'failed')
    await send('payment.succeeded', pay())
    assert.equal(await paymentStatus(), 'paid')
  })

  test('payment.refunded writes the payment off as a whole refund, from any state', async ({
    assert,
  }) => {
    const { send, payment } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.refunded', pay())
    const row = await payment()
    assert.equal(row.status, 'refunded')
    assert.equal(Number(row.refunded_amount), 1000)
  })

  test('payment.updated with a status applies it and records refunded_amount; a partial refund keeps the amount', async ({
    assert,
  }) => {
    const { send, payment } = await setup()
    await send('payment.updated', pay({ status: 'pending' }))
    assert.isUndefined(await payment(), 'payment.updated never creates a row')
    await send('payment.failed', pay())
    await send('payment.updated', pay({ status: 'paid', refundedAmount: 300 }))
    const row = await payment()
    assert.equal(row.status, 'paid')
    assert.equal(Number(row.refunded_amount), 300)
    assert.equal(Number(row.amount), 1000)
  })

  test('payment.updated without a status never invents one', async ({ assert }) => {
    const { send, payment } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.updated', { paymentId: 'pay_1', refundedAmount: 100 })
    const row = await payment()
    assert.equal(row.status, 'paid')
    assert.equal(Number(row.refunded_amount), 100)
  })

  test('a disputed payment never leaves disputed on payment.updated', async ({ assert }) => {
    const { send, paymentStatus } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.disputed', dispute())
    await send('payment.updated', pay({ status: 'paid' }))
    assert.equal(await paymentStatus(), 'disputed')
  })

  test('payment.dispute_warning writes a dispute row and changes nothing else', async ({
    assert,
  }) => {
    const { app, send, paymentStatus } = await setup()
    await send('payment.succeeded', pay())
    await send(
      'payment.dispute_warning',
      dispute({ actionableUntil: '2030-01-02T00:00:00.000Z', reason: 'fraudulent' })
    )
    assert.equal(await paymentStatus(), 'paid')
    const [row] = await app.rows('disputes')
    assert.equal(row.status, 'warning')
    assert.equal(row.reason, 'fraudulent')
    assert.isNotNull(row.actionable_until)
  })

  test('payment.disputed moves paid to disputed and writes the dispute row', async ({ assert }) => {
    const { app, send, paymentStatus } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.disputed', dispute())
    assert.equal(await paymentStatus(), 'disputed')
    const [row] = await app.rows('disputes')
    assert.equal(row.status, 'open')
  })

  test('a dispute closed as won restores paid', async ({ assert }) => {
    const { app, send, paymentStatus } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.disputed', dispute())
    await send('payment.dispute_closed', dispute({ outcome: 'won' }))
    assert.equal(await paymentStatus(), 'paid')
    const [row] = await app.rows('disputes')
    assert.deepEqual([row.status, row.outcome], ['closed', 'won'])
  })

  for (const outcome of ['lost', 'expired', 'canceled']) {
    test(`a dispute closed as ${outcome} keeps the payment disputed`, async ({ assert }) => {
      const { app, send, paymentStatus } = await setup()
      await send('payment.succeeded', pay())
      await send('payment.disputed', dispute())
      await send('payment.dispute_closed', dispute({ outcome }))
      assert.equal(await paymentStatus(), 'disputed')
      const [row] = await app.rows('disputes')
      assert.equal(row.outcome, outcome)
    })
  }

  test('a dispute closed with no outcome leaves the payment unchanged and fails', async ({
    assert,
  }) => {
    const { send, paymentStatus } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.disputed', dispute())
    assert.equal(await send('payment.dispute_closed', dispute()), 500)
    assert.equal(await paymentStatus(), 'disputed')
  })
})

test.group('Payment ordering and refunds', () => {
  test('out-of-order events never move a payment backwards', async ({ assert }) => {
    const { send, paymentStatus } = await setup()
    await send('payment.succeeded', pay())
    await send('payment.failed', pay())
    assert.equal(await paymentStatus(), 'paid')
    await send('payment.updated', pay({ status: 'pending' }))
    assert.equal(await paymentStatus(), 'paid')
    await send('payment.refunded', pay())
    await send('payment.succeeded', pay())
    assert.equal(await paymentStatus(), 'refunded')
  })

  test('partial refunds accumulate across refund ids; the last one makes payment.refunded', async ({
    assert,
  }) => {
    const { app, send, payment } = await setup()
    const types: string[] = []
    const emitter = await app.app.container.make('emitter')
    emitter.on('atrium:payments:payment.refunded', (event) => void types.push(event.type))
    await send('payment.succeeded', pay())
    await send('payment.updated', { paymentId: 'pay_1', refunds: [{ id: 're_1', amount: 300 }] })
    await send('payment.updated', { paymentId: 'pay_1', refunds: [{ id: 're_2', amount: 200 }] })
    // The same refund id reported again does not count twice
    await send('payment.updated', { paymentId: 'pay_1', refunds: [{ id: 're_2', amount: 200 }] })
    let row = await payment()
    assert.equal(row.status, 'paid')
    assert.equal(Number(row.refunded_amount), 500)
    await send('payment.updated', { paymentId: 'pay_1', refunds: [{ id: 're_3', amount: 500 }] })
    row = await payment()
    assert.equal(row.status, 'refunded')
    assert.equal(Number(row.refunded_amount), 1000)
    assert.lengthOf(await app.rows('refunds'), 3)
    assert.deepEqual(types, ['payment.refunded'])
    const events = await app.rows('events')
    assert.equal(events.at(-1).type, 'payment.refunded')
  })

  test('findPaymentByExternalReference returns the stored row, its money as numbers', async ({
    assert,
  }) => {
    const { app, send } = await setup()
    await send('payment.succeeded', pay({ externalReference: 'order-42', customerId: 'cus_9' }))
    await send('payment.updated', { paymentId: 'pay_1', refundedAmount: 250 })
    const manager = await app.app.container.make('atrium.payments')
    const found = await manager.findPaymentByExternalReference('order-42')
    assert.containSubset(found, {
      provider: 'fake',
      payment_id: 'pay_1',
      status: 'paid',
      amount: 1000,
      refunded_amount: 250,
      currency: 'BRL',
      customer_id: 'cus_9',
      external_reference: 'order-42',
    })
    const [stored] = await app.rows('payments')
    assert.equal(found!.id, stored.id)
    assert.isNull(await manager.findPaymentByExternalReference('order-missing'))
  })

  test('subscriptions are upserted; canceled is final', async ({ assert }) => {
    const { app, send } = await setup()
    await send('subscription.created', {
      subscriptionId: 'sub_1',
      status: 'active',
      customerId: 'c1',
    })
    await send('subscription.updated', { subscriptionId: 'sub_1', status: 'past_due' })
    let [row] = await app.rows('subscriptions')
    assert.deepEqual([row.status, row.customer_id], ['past_due', 'c1'])
    await send('subscription.canceled', { subscriptionId: 'sub_1' })
    await send('subscription.updated', { subscriptionId: 'sub_1', status: 'active' })
    ;[row] = await app.rows('subscriptions')
    assert.equal(row.status, 'canceled')
    assert.isNotNull(row.canceled_at)
  })
})

test.group('Billing models', () => {
  test('the Lucid models read the rows the route wrote', async ({ assert }) => {
    const { send } = await setup()
    await send('payment.succeeded', { ...pay({ externalReference: 'ord-m' }) })
    await send('payment.disputed', dispute({ actionableUntil: '2030-01-02T00:00:00.000Z' }))
    const { BillingPayment, BillingDispute, BillingWebhookEvent } =
      await import('../../src/payments/models/main.ts')
    const payment = await BillingPayment.findByOrFail('externalReference', 'ord-m')
    assert.equal(payment.amount, 1000)
    assert.equal(payment.status, 'disputed')
    assert.instanceOf(payment.paidAt, Date)
    const disputeRow = await BillingDispute.findByOrFail('disputeId', 'dp_1')
    assert.equal(disputeRow.actionableUntil?.toISOString(), '2030-01-02T00:00:00.000Z')
    const events = await BillingWebhookEvent.query().where('status', 'processed')
    assert.lengthOf(events, 2)
  })
})

test.group('Money', () => {
  test('negative amounts keep their sign in minor units', ({ assert }) => {
    assert.equal(toMinorUnits('-12.50', 'BRL'), -1250)
    assert.equal(toMinorUnits(-0.5, 'USD'), -50)
    assert.equal(toMinorUnits('-1500', 'JPY'), -1500)
    assert.equal(toMinorUnits('-1.234', 'KWD'), -1234)
    assert.equal(integerAmount('-700'), -700)
    assert.equal(integerAmount(-3), -3)
    assert.equal(toMinorUnits('12.50', 'BRL'), 1250)
  })

  test('toMinorUnits trims text, accepts trailing zeros and defaults to BRL', ({ assert }) => {
    assert.equal(toMinorUnits(' 12.50 '), 1250)
    assert.equal(toMinorUnits('12.500', 'BRL'), 1250)
    assert.equal(toMinorUnits('7', 'jpy'), 7)
  })

  test('toMinorUnits rejects what is not a whole decimal number, naming it', ({ assert }) => {
    const rejected = (value: unknown, currency?: string) => {
      try {
        toMinorUnits(value, currency)
      } catch (error) {
        assert.instanceOf(error, WebhookRejectedException)
        return (error as Error).message
      }
      assert.fail(`${JSON.stringify(value)} was accepted`)
    }
    assert.equal(rejected('abc'), 'amount "abc" is not a decimal number')
    assert.equal(rejected('x12.50'), 'amount "x12.50" is not a decimal number')
    assert.equal(rejected('12.50x'), 'amount "12.50x" is not a decimal number')
    assert.equal(rejected({ amount: 1 }), 'amount {"amount":1} is not a decimal number')
    assert.equal(rejected('1.234'), 'amount 1.234 has more decimals than BRL allows')
    assert.equal(rejected('1.5', 'jpy'), 'amount 1.5 has more decimals than JPY allows')
    assert.equal(rejected('999999999999999.99'), 'amount 999999999999999.99 is too large')
  })

  test('integerAmount reads only whole numbers in minor units', ({ assert }) => {
    assert.equal(integerAmount('700'), 700)
    for (const value of ['1e3', 'abc', '12abc', 'x12', 1.5, '9007199254740993', null, [7]]) {
      assert.throws(
        () => integerAmount(value),
        `amount ${JSON.stringify(value)} is not an integer in minor units`
      )
    }
  })

  test('a negative amount is stored as delivered, never flipped', async ({ assert }) => {
    const { send, payment } = await setup()
    assert.equal(await send('payment.succeeded', pay({ amount: toMinorUnits('-9.90') })), 200)
    const row = await payment()
    assert.equal(Number(row.amount), -990)
  })
})

test.group('Billing migrations', () => {
  test("the demo's billing migrations are the published stubs, byte for byte", async ({
    assert,
  }) => {
    const root = new URL('../../', import.meta.url)
    for (const [index, name] of MIGRATION_STUBS.payments.entries()) {
      const stub = await readFile(new URL(`stubs/make/migration/${name}.stub`, root), 'utf8')
      const demo = await readFile(
        new URL(
          `examples/demo/database/migrations/170000000000${index + 1}_create_${name}_table.ts`,
          root
        ),
        'utf8'
      )
      assert.equal(demo, stub.replace(/^\{\{\{[\s\S]*?\}\}\}\n/, ''), name)
    }
  })
})
