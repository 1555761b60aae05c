import { test } from '@japa/runner'
import { onDiagnostic } from '../../src/shared/diagnostics.ts'
import { defineWebhookHandler } from '../../src/payments/main.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'
import { fakeEvent, paymentsApp, statusOf } from './helpers.ts'

function recorder() {
  const seen: WebhookEvent<any>[] = []
  return { seen, handler: (event: WebhookEvent<any>) => void seen.push(event) }
}

const paid = (id: string, paymentId = 'pay_1', extra: Record<string, unknown> = {}) =>
  fakeEvent(id, 'payment.succeeded', { paymentId, amount: 1000, currency: 'BRL', ...extra })

test.group('Payments ledger', () => {
  test('a new event is recorded with its raw and normalized form before the handler runs', async ({
    assert,
  }) => {
    let during: any
    const app = await paymentsApp({
      config: {
        billing: {
          handlers: {
            'payment.succeeded': async () => {
              ;[during] = await app.rows('events')
            },
          },
        },
      },
    })
    const response = await app.deliver('fake', paid('evt_1'))
    assert.equal(response.status, 200)
    assert.equal(during.status, 'recorded')
    assert.deepEqual(JSON.parse(during.raw), paid('evt_1'))
    assert.equal(JSON.parse(during.normalized).type, 'payment.succeeded')
    assert.equal(JSON.parse(during.normalized).data.paymentId, 'pay_1')
    const [row] = await app.rows('events')
    assert.equal(row.status, 'processed')
  })

  test('a processed event publishes its business event and one lifecycle event each', async ({
    assert,
  }) => {
    const messages: any[] = []
    const unsubscribe = [
      onDiagnostic('payments', 'payment.succeeded', (message) => void messages.push(message)),
      onDiagnostic('payments', 'webhook.received', (message) => void messages.push(message)),
      onDiagnostic('payments', 'webhook.processed', (message) => void messages.push(message)),
      onDiagnostic('payments', 'payment.succeeded', () => {
        throw new Error('a throwing subscriber never fails the webhook')
      }),
    ]
    const app = await paymentsApp()
    const emitted: any[] = []
    const emitter = await app.app.container.make('emitter')
    emitter.on('atrium:payments:payment.succeeded', (payload) => void emitted.push(payload))
    const response = await app.deliver('fake', [
      paid('evt_a', 'p_a', { externalReference: 'ord-1' }),
      paid('evt_b', 'p_b'),
    ])
    unsubscribe.forEach((off) => off())
    assert.equal(response.status, 200)
    const events = messages.map((message) => [message.event, message.payload.eventId])
    assert.deepEqual(events, [
      ['webhook.received', 'evt_a'],
      ['payment.succeeded', 'evt_a'],
      ['webhook.processed', 'evt_a'],
      ['webhook.received', 'evt_b'],
      ['payment.succeeded', 'evt_b'],
      ['webhook.processed', 'evt_b'],
    ])
    assert.equal(messages[1].payload.externalReference, 'ord-1')
    assert.lengthOf(new Set(messages.map((message) => message.traceId)), 1)
    assert.deepEqual(
      emitted.map((payload) => payload.eventId),
      ['evt_a', 'evt_b']
    )
  })

  test('a throwing handler marks the event failed and answers 500 with the partial-failure body; siblings still run', async ({
    assert,
  }) => {
    const { seen, handler } = recorder()
    const app = await paymentsApp({
      config: {
        billing: {
          handlers: {
            'payment.succeeded': (event) => {
              if (event.id === 'evt_bad') throw new Error('handler exploded')
            },
            'payment.failed': handler,
          },
        },
      },
    })
    const failures: any[] = []
    const off = onDiagnostic('payments', 'webhook.failed', (message) => void failures.push(message))
    const response = await app.deliver('fake', [
      paid('evt_bad'),
      fakeEvent('evt_sibling', 'payment.failed', { paymentId: 'pay_2', amount: 5 }),
    ])
    off()
    assert.equal(response.status, 500)
    assert.deepEqual((await response.json()) as any, {
      received: true,
      processed: 1,
      failed: ['evt_bad'],
      error: 'evt_bad: handler exploded',
    })
    assert.lengthOf(seen, 1)
    const rows = await app.rows('events')
    assert.deepEqual(
      rows.map((row) => [row.event_id, row.status, row.error]),
      [
        ['evt_bad', 'failed', 'handler exploded'],
        ['evt_sibling', 'processed', null],
      ]
    )
    assert.equal(failures[0].payload.eventId, 'evt_bad')
  })

  test('a failed event is claimable again: the redelivery re-runs the handler', async ({
    assert,
  }) => {
    let calls = 0
    const app = await paymentsApp({
      config: {
        billing: {
          handlers: {
            'payment.succeeded': () => {
              calls++
              if (calls === 1) throw new Error('first attempt fails')
            },
          },
        },
      },
    })
    assert.equal(await statusOf(app.deliver('fake', paid('evt_retry'))), 500)
    assert.equal(await statusOf(app.deliver('fake', paid('evt_retry'))), 200)
    assert.equal(calls, 2)
    const [row] = await app.rows('events')
    assert.equal(row.status, 'processed')
    assert.equal(row.attempts, 2)
  })

  test('a redelivered processed event never reaches the handler twice', async ({ assert }) => {
    const { seen, handler } = recorder()
    const app = await paymentsApp({
      config: { billing: { handlers: { 'payment.succeeded': handler } } },
    })
    assert.equal(await statusOf(app.deliver('fake', paid('evt_dup'))), 200)
    const again = await app.deliver('fake', paid('evt_dup'))
    assert.equal(again.status, 200)
    assert.deepEqual((await again.json()) as any, { received: true })
    assert.lengthOf(seen, 1)
    assert.lengthOf(await app.rows('events'), 1)
  })

  test('a delivery arriving while the first is still processing answers 409 so the gateway retries', async ({
    assert,
  }) => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let entered!: () => void
    const inside = new Promise<void>((resolve) => (entered = resolve))
    const app = await paymentsApp({
      config: {
        billing: {
          handlers: {
            'payment.succeeded': async () => {
              entered()
              await gate
            },
          },
        },
      },
    })
    const first = app.deliver('fake', paid('evt_slow'))
    try {
      await inside
      const second = await app.deliver('fake', paid('evt_slow'))
      assert.equal(second.status, 409)
      const body = (await second.json()) as any
      assert.deepEqual(body.inFlight, ['evt_slow'])
      assert.match(body.error, /still being processed/)
    } finally {
      // A failed assertion must not leave the first delivery parked in its handler
      release()
    }
    assert.equal(await statusOf(first), 200)
  })

  test('a row stuck in "recorded" past the processing lease is claimable again', async ({
    assert,
  }) => {
    const { seen, handler } = recorder()
    const app = await paymentsApp({
      config: {
        processingLeaseMs: 60_000,
        billing: { handlers: { 'payment.succeeded': handler } },
      },
    })
    const manager = await app.app.container.make('atrium.payments')
    const event = {
      id: 'evt_stuck',
      type: 'payment.succeeded',
      data: { paymentId: 'p', amount: 1 },
      raw: {},
      provider: 'fake',
    }
    assert.equal(await manager.store.claim(event, 't1'), 'claimed')
    assert.equal(await manager.store.claim(event, 't2'), 'in_flight')
    await app.db
      .connection()
      .from('billing_webhook_events')
      .update({ locked_until: Date.now() - 1 })
    assert.equal(await statusOf(app.deliver('fake', paid('evt_stuck'))), 200)
    assert.lengthOf(seen, 1)
  })
})

test.group('Payments errors', () => {
  test('an unparsable body, a bad signature and an unknown provider answer 400 with an audit row', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const { signedWebhook } = await import('../../src/payments/testing.ts')
    const unparsable = signedWebhook('fake', '{not json', { webhookSecret: 'fake-secret' })
    assert.equal(await statusOf(app.post('fake', unparsable)), 400)
    const badSignature = { ...signedWebhook('fake', paid('e'), { webhookSecret: 'x' }) }
    assert.equal(await statusOf(app.post('fake', badSignature)), 400)
    const unknown = await app.post(
      'paypal',
      signedWebhook('fake', paid('e'), { webhookSecret: 'x' })
    )
    assert.equal(unknown.status, 400)
    assert.match(((await unknown.json()) as any).errors[0].message, /unknown provider "paypal"/)
    assert.lengthOf(await app.rows('events'), 0)
    const audit = await app.rows('audit')
    assert.deepEqual(
      audit.map((row) => [row.provider, row.type]),
      [
        ['fake', 'webhook.rejected'],
        ['fake', 'webhook.rejected'],
        ['paypal', 'webhook.rejected'],
      ]
    )
  })

  test('rejections are counted per provider, reason and minute: 300 unsigned posts write at most 2 rows', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const { signedWebhook } = await import('../../src/payments/testing.ts')
    const unsigned = signedWebhook('fake', paid('e'), { webhookSecret: 'not-the-secret' })
    for (let batch = 0; batch < 10; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 30 }, () => statusOf(app.post('fake', unsigned)))
      )
      assert.isTrue(statuses.every((status) => status === 400))
    }
    const rows = await app.rows('audit')
    // One row, or two when the run crossed a minute boundary
    assert.isAtMost(rows.length, 2)
    assert.equal(
      rows.reduce((total: number, row: any) => total + Number(row.occurrences), 0),
      300
    )
    assert.isTrue(rows.every((row: any) => row.type === 'webhook.rejected' && row.trace_id))
    assert.notProperty(rows[0], 'payload')
  })

  test('rejections under invented provider names stop adding rows past the per-minute key cap', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const { MAX_REJECTION_KEYS } = await import('../../src/payments/ledger/rejections.ts')
    const { signedWebhook } = await import('../../src/payments/testing.ts')
    const signed = signedWebhook('fake', paid('e'), { webhookSecret: 'x' })
    const names = Array.from({ length: MAX_REJECTION_KEYS + 70 }, (_, index) => `nope${index}`)
    for (let start = 0; start < names.length; start += 30) {
      await Promise.all(names.slice(start, start + 30).map((name) => app.post(name, signed)))
    }
    const rows = await app.rows('audit')
    assert.isAtMost(rows.length, 2 * (MAX_REJECTION_KEYS + 1))
    assert.isAtLeast(rows.length, MAX_REJECTION_KEYS + 1)
    assert.equal(
      rows.reduce((total: number, row: any) => total + Number(row.occurrences), 0),
      names.length
    )
    assert.isTrue(rows.some((row: any) => row.provider === '*'))
  })

  test('a failing audit write never changes the 400', async ({ assert }) => {
    const app = await paymentsApp()
    await app.db.connection().schema.dropTable('billing_audit_events')
    const { signedWebhook } = await import('../../src/payments/testing.ts')
    const response = await app.post(
      'fake',
      signedWebhook('fake', paid('e'), { webhookSecret: 'x' })
    )
    assert.equal(response.status, 400)
  })

  test('payment.dispute_closed without an outcome fails the event (retried later)', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const response = await app.deliver(
      'fake',
      fakeEvent('evt_close', 'payment.dispute_closed', { disputeId: 'd1', paymentId: 'p1' })
    )
    assert.equal(response.status, 500)
    assert.match(((await response.json()) as any).error, /carries no outcome/)
    const [row] = await app.rows('events')
    assert.equal(row.status, 'failed')
  })

  test('an undotted passthrough type is recorded and runs its handler', async ({ assert }) => {
    const { seen, handler } = recorder()
    const app = await paymentsApp({
      config: { billing: { handlers: { payment_anticipated: handler } } },
    })
    const response = await app.deliver('fake', fakeEvent('evt_pt', 'payment_anticipated', { x: 1 }))
    assert.equal(response.status, 200)
    assert.equal(seen[0].type, 'payment_anticipated')
    assert.lengthOf(await app.rows('payments'), 0)
  })

  test('defineWebhookHandler results work in config and carry type and handle', async ({
    assert,
  }) => {
    const seen: string[] = []
    const handler = defineWebhookHandler('payment.succeeded', (event) => {
      seen.push(event.data.paymentId)
    })
    assert.equal(handler.type, 'payment.succeeded')
    const app = await paymentsApp({
      config: { billing: { handlers: { 'payment.succeeded': handler } } },
    })
    await app.deliver('fake', paid('evt_def', 'pay_def'))
    assert.deepEqual(seen, ['pay_def'])
  })
})
