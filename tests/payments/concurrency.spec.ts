import { test } from '@japa/runner'
import { fakeEvent, paymentsApp, statusOf } from './helpers.ts'

test.group('Payments concurrency', () => {
  test('many parallel deliveries of one event id reach the handler exactly once', async ({
    assert,
  }) => {
    let runs = 0
    const app = await paymentsApp({
      config: {
        billing: {
          handlers: {
            'payment.succeeded': async () => {
              runs++
              await new Promise((resolve) => setTimeout(resolve, 20))
            },
          },
        },
      },
    })
    const event = fakeEvent('evt_race', 'payment.succeeded', { paymentId: 'pay_race', amount: 990 })
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => app.deliver('fake', event))
    )
    const statuses = responses.map((response) => response.status)
    assert.isTrue(
      statuses.every((status) => status === 200 || status === 409),
      statuses.join(',')
    )
    assert.include(statuses, 200)
    assert.equal(runs, 1)
    assert.lengthOf(await app.rows('events'), 1)
    assert.lengthOf(await app.rows('payments'), 1)
    // Every retry after the first finished is a plain 200 and still no second run
    assert.equal(await statusOf(app.deliver('fake', event)), 200)
    assert.equal(runs, 1)
  })

  test('parallel events of one payment keep one payment row and sum their refunds', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    await app.deliver(
      'fake',
      fakeEvent('evt_base', 'payment.succeeded', { paymentId: 'pay_p', amount: 1000 })
    )
    await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        app.deliver(
          'fake',
          fakeEvent(`evt_r${index}`, 'payment.updated', {
            paymentId: 'pay_p',
            refunds: [{ id: `re_${index}`, amount: 100 }],
          })
        )
      )
    )
    const payments = await app.rows('payments')
    assert.lengthOf(payments, 1)
    assert.equal(Number(payments[0].refunded_amount), 1000)
    assert.equal(payments[0].status, 'refunded')
  })
})
