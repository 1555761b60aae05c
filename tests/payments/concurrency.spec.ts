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

/**
 * Sends `count` parallel deliveries of one event while the handler holds
 * every run it enters until each delivery either answered or entered it:
 * two claims of one row then show as two handler entries, whatever the timing.
 */
async function raceRedeliveries(
  app: Awaited<ReturnType<typeof paymentsApp>>,
  gate: { entered: number; open(): void; onEnter?: () => void },
  event: unknown,
  count: number
) {
  let answered = 0
  const settle = () => {
    if (answered + gate.entered === count) gate.open()
  }
  gate.onEnter = settle
  const statuses = await Promise.all(
    Array.from({ length: count }, async () => {
      const response = await app.deliver('fake', event)
      answered++
      settle()
      return response.status
    })
  )
  return statuses
}

/** A handler that fails its first run and parks later runs at a gate */
function gatedHandler(options: { failFirst: boolean }) {
  let release!: () => void
  const opened = new Promise<void>((resolve) => (release = resolve))
  const gate = {
    runs: 0,
    entered: 0,
    open: () => release(),
    onEnter: undefined as undefined | (() => void),
  }
  const handler = async () => {
    gate.runs++
    if (options.failFirst && gate.runs === 1) throw new Error('first attempt fails')
    gate.entered++
    gate.onEnter?.()
    await opened
  }
  return { gate, handler }
}

test.group('Payments concurrency: redelivery of a failed or expired row', () => {
  test('40 parallel redeliveries of a failed event run the handler once more, not more', async ({
    assert,
  }) => {
    const { gate, handler } = gatedHandler({ failFirst: true })
    const app = await paymentsApp({
      config: { billing: { handlers: { 'payment.succeeded': handler } } },
    })
    const event = fakeEvent('evt_refail', 'payment.succeeded', { paymentId: 'pay_rf', amount: 5 })
    assert.equal(await statusOf(app.deliver('fake', event)), 500)
    const statuses = await raceRedeliveries(app, gate, event, 40)
    assert.equal(gate.runs, 2, 'one failed run and exactly one re-run')
    assert.equal(statuses.filter((status) => status === 200).length, 1)
    assert.isTrue(statuses.every((status) => status === 200 || status === 409))
    const [row] = await app.rows('events')
    assert.deepEqual([row.status, row.attempts], ['processed', 2])
  })

  test('40 parallel redeliveries of a row whose processing lease ran out run the handler once', async ({
    assert,
  }) => {
    const { gate, handler } = gatedHandler({ failFirst: false })
    const app = await paymentsApp({
      config: { billing: { handlers: { 'payment.succeeded': handler } } },
    })
    const manager = await app.app.container.make('atrium.payments')
    const event = fakeEvent('evt_expired', 'payment.succeeded', { paymentId: 'pay_x', amount: 5 })
    const claim = await manager.store.claim({ ...event, raw: {}, provider: 'fake' }, 'crashed')
    assert.equal(claim, 'claimed')
    await app.db
      .connection()
      .from('billing_webhook_events')
      .update({ locked_until: Date.now() - 1 })
    const statuses = await raceRedeliveries(app, gate, event, 40)
    assert.equal(gate.runs, 1)
    assert.equal(statuses.filter((status) => status === 200).length, 1)
    const [row] = await app.rows('events')
    assert.deepEqual([row.status, row.attempts], ['processed', 2])
  })
  test('40 claims of a failed row, then of an expired row, started in one tick: exactly one wins each time', async ({
    assert,
  }) => {
    const app = await paymentsApp({ config: { processingLeaseMs: 60_000 } })
    const { store } = await app.app.container.make('atrium.payments')
    const event = {
      ...fakeEvent('evt_claims', 'payment.succeeded', { paymentId: 'pay_c', amount: 5 }),
      raw: {},
      provider: 'fake',
    }
    assert.equal(await store.claim(event, 'first'), 'claimed')
    await store.markFailed(event, new Error('handler exploded'))
    // Every claim reads the failed row before any of them updates it
    const afterFailure = await Promise.all(
      Array.from({ length: 40 }, (_, index) => store.claim(event, `retry-${index}`))
    )
    assert.equal(afterFailure.filter((result) => result === 'claimed').length, 1)
    assert.isTrue(afterFailure.every((result) => result === 'claimed' || result === 'in_flight'))

    await app.db
      .connection()
      .from('billing_webhook_events')
      .update({ locked_until: Date.now() - 1 })
    const afterExpiry = await Promise.all(
      Array.from({ length: 40 }, (_, index) => store.claim(event, `late-${index}`))
    )
    assert.equal(afterExpiry.filter((result) => result === 'claimed').length, 1)
    const [row] = await app.rows('events')
    assert.deepEqual([row.status, row.attempts], ['recorded', 3])
  })
})

test.group('Payments concurrency: first deliveries of one new object', () => {
  test('60 rounds of two different events for one unseen subscription, dispute and payment answer no 5xx', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const rounds = 60
    const failures: string[] = []
    for (let round = 0; round < rounds; round++) {
      const pairs = [
        [
          fakeEvent(`evt_sc${round}`, 'subscription.created', {
            subscriptionId: `sub_${round}`,
            status: 'active',
          }),
          fakeEvent(`evt_su${round}`, 'subscription.updated', {
            subscriptionId: `sub_${round}`,
            status: 'past_due',
          }),
        ],
        [
          fakeEvent(`evt_do${round}`, 'payment.disputed', {
            disputeId: `dp_${round}`,
            paymentId: `pay_d${round}`,
          }),
          fakeEvent(`evt_du${round}`, 'payment.dispute_warning', {
            disputeId: `dp_${round}`,
            paymentId: `pay_d${round}`,
            reason: 'fraudulent',
          }),
        ],
        [
          fakeEvent(`evt_rf${round}`, 'payment.updated', {
            paymentId: `pay_r${round}`,
            refunds: [{ id: `re_${round}`, amount: 100 }],
          }),
          fakeEvent(`evt_ps${round}`, 'payment.succeeded', {
            paymentId: `pay_r${round}`,
            amount: 1000,
          }),
        ],
      ]
      const responses = await Promise.all(
        pairs.flat().map(async (event) => [event.id, await app.deliver('fake', event)] as const)
      )
      for (const [id, response] of responses) {
        if (response.status >= 500) failures.push(`${id}: ${await response.text()}`)
      }
    }
    assert.deepEqual(failures, [])
    assert.lengthOf(await app.rows('subscriptions'), rounds)
    assert.lengthOf(await app.rows('disputes'), rounds)
    const events = await app.rows('events')
    assert.lengthOf(events, rounds * 6)
    assert.isTrue(events.every((row: any) => row.status === 'processed'))
  })
})
