import { test } from '@japa/runner'
import { paymentsApp } from './helpers.ts'

/** Every order of a list */
function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items]
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [
      item,
      ...rest,
    ])
  )
}

/** A fake-gateway event at `second` seconds past a fixed instant */
function at(second: number, id: string, type: string, data: Record<string, unknown>) {
  return { id, type, data, occurredAt: new Date(Date.UTC(2030, 0, 1, 0, 0, second)).toISOString() }
}

type Event = ReturnType<typeof at>

/**
 * Delivers each order of `events` (the ids and object ids made unique per
 * order by `scope`) one after another and returns what `read` sees at the end.
 */
async function finalStates(
  events: (scope: string) => Event[],
  read: (app: Awaited<ReturnType<typeof paymentsApp>>, scope: string) => Promise<unknown>,
  setup?: (app: Awaited<ReturnType<typeof paymentsApp>>, scope: string) => Promise<void>
) {
  const app = await paymentsApp()
  const finals: Record<string, unknown> = {}
  const orders = permutations(events('').map((_, index) => index))
  for (const [n, order] of orders.entries()) {
    const scope = `o${n}`
    const scoped = events(scope)
    await setup?.(app, scope)
    for (const index of order) {
      const response = await app.deliver('fake', scoped[index])
      if (response.status !== 200) {
        throw new Error(`${scoped[index].id} answered ${response.status}: ${await response.text()}`)
      }
    }
    finals[order.map((index) => scoped[index].id.replace(`_${scope}`, '')).join(' > ')] =
      await read(app, scope)
  }
  return finals
}

async function paymentState(app: Awaited<ReturnType<typeof paymentsApp>>, scope: string) {
  const row = await app.db
    .connection()
    .from('billing_payments')
    .where('payment_id', `pay_${scope}`)
    .first()
  return row ? [row.status, Number(row.refunded_amount), Number(row.amount)] : null
}

function assertOneFinalState(assert: any, finals: Record<string, unknown>, expected: unknown) {
  for (const [order, state] of Object.entries(finals)) {
    assert.deepEqual(state, expected, `delivered as ${order}`)
  }
}

test.group('Payments ordering: one final state for every delivery order', () => {
  test('a success, a partial refund and a whole refund end refunded/1000 in all 6 orders', async ({
    assert,
  }) => {
    const finals = await finalStates(
      (scope) => [
        at(1, `evt_s_${scope}`, 'payment.succeeded', { paymentId: `pay_${scope}`, amount: 1000 }),
        at(2, `evt_p_${scope}`, 'payment.updated', {
          paymentId: `pay_${scope}`,
          refundedAmount: 300,
        }),
        at(3, `evt_r_${scope}`, 'payment.refunded', {
          paymentId: `pay_${scope}`,
          amount: 1000,
          refundedAmount: 1000,
        }),
      ],
      paymentState
    )
    assert.lengthOf(Object.keys(finals), 6)
    assertOneFinalState(assert, finals, ['refunded', 1000, 1000])
  })

  test('a refund line, a dispute and a whole refund of a paid payment end refunded/1000 in all 6 orders', async ({
    assert,
  }) => {
    const finals = await finalStates(
      (scope) => [
        at(2, `evt_l_${scope}`, 'payment.updated', {
          paymentId: `pay_${scope}`,
          refunds: [{ id: `re_${scope}`, amount: 400 }],
        }),
        at(3, `evt_d_${scope}`, 'payment.disputed', {
          disputeId: `dp_${scope}`,
          paymentId: `pay_${scope}`,
          amount: 600,
        }),
        at(4, `evt_r_${scope}`, 'payment.refunded', {
          paymentId: `pay_${scope}`,
          refundedAmount: 1000,
        }),
      ],
      paymentState,
      async (app, scope) => {
        const first = at(1, `evt_s_${scope}`, 'payment.succeeded', {
          paymentId: `pay_${scope}`,
          amount: 1000,
        })
        const response = await app.deliver('fake', first)
        assert.equal(response.status, 200)
      }
    )
    assertOneFinalState(assert, finals, ['refunded', 1000, 1000])
  })

  test('a dispute opened then closed as won restores paid in both orders', async ({ assert }) => {
    const finals = await finalStates(
      (scope) => [
        at(2, `evt_d_${scope}`, 'payment.disputed', {
          disputeId: `dp_${scope}`,
          paymentId: `pay_${scope}`,
        }),
        at(3, `evt_c_${scope}`, 'payment.dispute_closed', {
          disputeId: `dp_${scope}`,
          paymentId: `pay_${scope}`,
          outcome: 'won',
        }),
      ],
      async (app, scope) => {
        const dispute = await app.db
          .connection()
          .from('billing_disputes')
          .where('dispute_id', `dp_${scope}`)
          .first()
        return [await paymentState(app, scope), dispute.status, dispute.outcome]
      },
      async (app, scope) => {
        const first = at(1, `evt_s_${scope}`, 'payment.succeeded', {
          paymentId: `pay_${scope}`,
          amount: 1000,
        })
        const response = await app.deliver('fake', first)
        assert.equal(response.status, 200)
      }
    )
    assertOneFinalState(assert, finals, [['paid', 0, 1000], 'closed', 'won'])
  })

  test('subscription created, past_due, active again end active in all 6 orders; a cancel after them ends canceled in all 24', async ({
    assert,
  }) => {
    const lifecycle = (scope: string) => [
      at(1, `evt_c_${scope}`, 'subscription.created', {
        subscriptionId: `sub_${scope}`,
        status: 'active',
        customerId: 'cus_1',
      }),
      at(2, `evt_u1_${scope}`, 'subscription.updated', {
        subscriptionId: `sub_${scope}`,
        status: 'past_due',
        planId: 'plan_old',
      }),
      at(3, `evt_u2_${scope}`, 'subscription.updated', {
        subscriptionId: `sub_${scope}`,
        status: 'active',
        planId: 'plan_new',
      }),
    ]
    const read = async (app: Awaited<ReturnType<typeof paymentsApp>>, scope: string) => {
      const row = await app.db
        .connection()
        .from('billing_subscriptions')
        .where('subscription_id', `sub_${scope}`)
        .first()
      return [row.status, row.plan_id, row.customer_id, row.canceled_at !== null]
    }
    const finals = await finalStates(lifecycle, read)
    assertOneFinalState(assert, finals, ['active', 'plan_new', 'cus_1', false])

    const withCancel = await finalStates(
      (scope) => [
        ...lifecycle(scope),
        at(4, `evt_x_${scope}`, 'subscription.canceled', { subscriptionId: `sub_${scope}` }),
      ],
      read
    )
    assert.lengthOf(Object.keys(withCancel), 24)
    for (const [order, state] of Object.entries(withCancel)) {
      assert.deepEqual((state as unknown[])[0], 'canceled', `delivered as ${order}`)
      assert.isTrue((state as unknown[])[3] as boolean, `delivered as ${order}`)
    }
  })

  test('the first delivery stores its event time, so an older status delivered next only fills blanks', async ({
    assert,
  }) => {
    // the first sighting is written by the claim statement itself on SQLite and PostgreSQL
    const app = await paymentsApp()
    const paid = at(10, 'evt_late_1', 'payment.succeeded', { paymentId: 'pay_late', amount: 1000 })
    const older = at(5, 'evt_late_2', 'payment.updated', {
      paymentId: 'pay_late',
      status: 'refunded',
      customerId: 'cus_late',
    })
    for (const event of [paid, older]) {
      const response = await app.deliver('fake', event)
      assert.equal(response.status, 200)
    }
    const row = await app.db
      .connection()
      .from('billing_payments')
      .where('payment_id', 'pay_late')
      .first()
    assert.deepEqual([row.status, row.customer_id], ['paid', 'cus_late'])
    assert.equal(Number(row.last_event_at), Date.parse(paid.occurredAt))
  })
})
