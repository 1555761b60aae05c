import type { DemoFeature } from './main.ts'
import { escapeHtml, layout } from './layout.ts'
import { formatCount, formatDate, formatJson, formatMoney } from './format.ts'
import {
  INFINITEPAY_DEMO_HANDLE,
  handlerLog,
  infinitePayPaid,
  paypalDemoCertificate,
} from './payments_state.ts'
import { DEMO_GATEWAYS } from './payments_gateways.ts'

const results: { at: string; gateway: string; status: number; body: string }[] = []

/** The fake gateway walks one payment through all ten canonical types */
function fakeSequence(n: string) {
  const paymentId = `fake_pay_${n}`
  const dispute = { disputeId: `fake_dp_${n}`, paymentId, amount: 1000, currency: 'BRL' }
  const subscription = { subscriptionId: `fake_sub_${n}`, customerId: 'cus_demo' }
  return [
    [
      'payment.succeeded',
      { paymentId, amount: 1000, currency: 'BRL', externalReference: `order-${n}` },
    ],
    ['payment.updated', { paymentId, refunds: [{ id: `re_${n}`, amount: 250 }] }],
    [
      'payment.dispute_warning',
      { ...dispute, actionableUntil: new Date(Date.now() + 7 * 864e5).toISOString() },
    ],
    ['payment.disputed', dispute],
    ['payment.dispute_closed', { ...dispute, outcome: 'won' }],
    ['payment.refunded', { paymentId, amount: 1000, currency: 'BRL' }],
    ['payment.failed', { paymentId: `fake_failed_${n}`, amount: 500, currency: 'BRL' }],
    ['subscription.created', { ...subscription, status: 'active' }],
    ['subscription.updated', { ...subscription, status: 'past_due' }],
    ['subscription.canceled', subscription],
  ].map(([type, data], index) => ({ id: `fake_${n}_${index}`, type, data }))
}

/** Rows the page shows of each table, newest first */
const SHOWN_ROWS = 50

/** A column: the row key, its heading, and how its cell reads (escaped text by default) */
interface Column {
  key: string
  heading: string
  /** How the cell reads (escaped text by default) */
  cell?: (row: Record<string, any>) => string
  /** How the column wraps: `num` and `time` never, `id` anywhere, `json` holds a <details> */
  kind?: 'num' | 'time' | 'id' | 'json' | 'nowrap'
}

const text = (key: string, heading = key): Column => ({ key, heading })
const id = (key: string, heading = key): Column => ({ key, heading, kind: 'id' })
const num = (key: string, heading = key): Column => ({ key, heading, kind: 'num' })
const date = (key: string, heading = key): Column => ({
  key,
  heading,
  kind: 'time',
  cell: (row) => formatDate(row[key]),
})
const money = (key: string, heading = key): Column => ({
  key,
  heading,
  kind: 'num',
  cell: (row) => formatMoney(row[key], row.currency),
})
const json = (key: string, heading = key): Column => ({
  key,
  heading,
  kind: 'json',
  cell: (row) => formatJson(row[key], 40),
})
const status = (key: string, heading = key): Column => ({
  key,
  heading,
  kind: 'nowrap',
  cell: (row) => {
    const code = Number(row[key])
    const tone =
      code >= 400 || ['failed', 'rejected'].includes(row[key]) ? 'status-bad' : 'status-ok'
    return `<span class="${tone}">${escapeHtml(row[key])}</span>`
  },
})

function table(rows: Record<string, any>[], columns: Column[], total = rows.length) {
  if (rows.length === 0) return '<p class="muted"><em>none yet</em></p>'
  const caption =
    total > rows.length
      ? `${formatCount(rows.length)} of ${formatCount(total)} rows, newest first`
      : `${formatCount(total)} ${total === 1 ? 'row' : 'rows'}, newest first`
  return `<div class="table"><table><caption>${caption}</caption><thead><tr>${columns
    .map(({ heading, kind }) => `<th class="${kind ?? ''}">${escapeHtml(heading)}</th>`)
    .join('')}</tr></thead><tbody>${rows
    .map(
      (row) =>
        `<tr>${columns
          .map(
            ({ key, cell, kind }) =>
              `<td class="${kind ?? ''}">${cell ? cell(row) : escapeHtml(row[key])}</td>`
          )
          .join('')}</tr>`
    )
    .join('')}</tbody></table></div>`
}

/**
 * Sends signed test deliveries of every gateway to the app's own webhook
 * route and shows the ledger, the billing rows and what the handlers saw.
 */
export const payments: DemoFeature = {
  title: 'Payment webhooks',
  description: `Signed deliveries from ${DEMO_GATEWAYS.length} gateways, an idempotent ledger and billing tables.`,
  path: '/payments',
  routes(router) {
    // Stands in for InfinitePay's public payment check, answering as documented
    router.post(
      '/payments/demo/infinitepay/invoices/public/checkout/payment_check',
      async ({ request }) => {
        const check = request.only(['handle', 'order_nsu', 'transaction_nsu', 'slug'])
        const paid = infinitePayPaid.get(String(check.transaction_nsu))
        if (
          !paid ||
          check.handle !== INFINITEPAY_DEMO_HANDLE ||
          paid.order_nsu !== check.order_nsu ||
          paid.slug !== check.slug
        ) {
          return { success: true, paid: false }
        }
        return { success: true, paid: true, amount: paid.amount, paid_amount: paid.paid_amount }
      }
    )

    // Stands in for Mercado Pago's payments API: every notified id is an approved payment
    router.get('/payments/demo/mercadopago/v1/payments/:id', async ({ params }) => ({
      id: String(params.id),
      status: 'approved',
      transaction_amount: 129.9,
      currency_id: 'BRL',
      external_reference: `order-${params.id}`,
      date_last_updated: new Date().toISOString(),
    }))

    // Stands in for PayPal's certificate host: the demo signs PayPal deliveries with this certificate's key
    router.get('/v1/notifications/certs/CERT-atrium-demo', async ({ response }) => {
      response.header('content-type', 'text/plain')
      return paypalDemoCertificate.get().certificate
    })

    router.post('/payments/demo/send/:gateway', async ({ params, response }) => {
      const { default: env } = await import('../start/env.ts')
      const { signedWebhook } = await import('adonis-atrium/payments/testing')
      const forged = String(params.gateway) === 'infinitepay-forged'
      const gateway = forged ? 'infinitepay' : String(params.gateway)
      const n = `${Date.now()}${Math.floor(Math.random() * 1000)}`
      const listed = DEMO_GATEWAYS.find((entry) => entry.name === gateway)
      if (gateway !== 'fake' && !listed?.payload) {
        return response.redirect('/payments')
      }
      const credentials =
        gateway === 'fake' ? { webhookSecret: 'demo-fake-secret' } : listed!.credentials!(env)
      if (gateway === 'infinitepay' && !forged) {
        // The customer really paid: InfinitePay's check will confirm it
        infinitePayPaid.set(`tx-${n}`, {
          order_nsu: `order-${n}`,
          slug: `inv-${n}`,
          amount: 1000,
          paid_amount: 1000,
        })
      }
      const deliveries =
        gateway === 'fake'
          ? fakeSequence(n).map((event) => signedWebhook('fake', event, credentials))
          : [signedWebhook(gateway, listed!.payload!(n), credentials)]
      for (const delivery of deliveries) {
        const query = delivery.query ? `?${new URLSearchParams(delivery.query)}` : ''
        const answer = await fetch(
          `http://127.0.0.1:${env.get('PORT')}/payments/webhook/${gateway}${query}`,
          {
            method: 'POST',
            headers: delivery.headers,
            body: delivery.body,
          }
        )
        results.unshift({
          at: new Date().toISOString(),
          gateway,
          status: answer.status,
          body: await answer.text(),
        })
      }
      results.length = Math.min(results.length, 20)
      return response.redirect('/payments')
    })

    router.get('/payments', async () => {
      const { default: db } = await import('@adonisjs/lucid/services/db')
      // the newest rows of a table and how many it holds
      const latest = async (name: string) => {
        const [rows, [{ total }]] = await Promise.all([
          db.from(name).orderBy('id', 'desc').limit(SHOWN_ROWS),
          db.from(name).count('* as total'),
        ])
        return { rows, total: Number(total) }
      }
      const [events, paymentsRows, refunds, disputes, subscriptions, audit] = await Promise.all([
        latest('billing_webhook_events'),
        latest('billing_payments'),
        latest('billing_refunds'),
        latest('billing_disputes'),
        latest('billing_subscriptions'),
        latest('billing_audit_events'),
      ])
      const { gateways: drivers } = await import('adonis-atrium/payments')
      const built = (name: string) => name in drivers
      const button = (name: string, label: string, secondary = false) =>
        `<form class="inline" method="post" action="/payments/demo/send/${escapeHtml(name)}"><button${secondary ? ' class="secondary"' : ''}>${escapeHtml(label)}</button></form>`
      const buttons = [
        ...DEMO_GATEWAYS.map((gateway) =>
          built(gateway.name) && gateway.payload
            ? button(gateway.name, gateway.label)
            : `<button disabled title="not in this build">${escapeHtml(gateway.label)}</button>`
        ),
        button('infinitepay-forged', 'InfinitePay: forged (not paid)', true),
        button('fake', 'fake: all ten types'),
      ].join(' ')
      return layout(
        'Payment webhooks',
        `<p>Each button signs a delivery exactly as that gateway signs it and posts it to
        <code>POST /payments/webhook/:provider</code> on this app. InfinitePay signs nothing:
        the app confirms each delivery through InfinitePay's payment check (here a stand-in
        route), so the forged one is answered 400.</p>
        <div class="toolbar">${buttons}</div>
        <h2>Responses <small>(of the deliveries this page sent, the last 20)</small></h2>${table(results, [date('at'), text('gateway'), status('status'), json('body')])}
        <h2>Handlers saw <small>(the last 30 events, since the demo started)</small></h2>${table(
          handlerLog,
          [date('at'), text('provider'), text('type'), id('id'), json('data')]
        )}
        <h2>Ledger <small>(billing_webhook_events)</small></h2>${table(
          events.rows,
          [
            num('id'),
            text('provider'),
            id('event_id', 'event id'),
            text('type'),
            status('status'),
            num('attempts'),
            json('error'),
            date('created_at', 'received'),
          ],
          events.total
        )}
        <h2>Payments <small>(billing_payments)</small></h2>${table(
          paymentsRows.rows,
          [
            text('provider'),
            id('payment_id', 'payment id'),
            status('status'),
            money('amount'),
            money('refunded_amount', 'refunded'),
            id('external_reference', 'reference'),
            date('paid_at', 'paid at'),
          ],
          paymentsRows.total
        )}
        <h2>Refunds <small>(billing_refunds)</small></h2>${table(
          refunds.rows,
          [
            text('provider'),
            id('refund_id', 'refund id'),
            id('payment_id', 'payment id'),
            money('amount'),
            date('created_at', 'recorded'),
          ],
          refunds.total
        )}
        <h2>Disputes <small>(billing_disputes)</small></h2>${table(
          disputes.rows,
          [
            text('provider'),
            id('dispute_id', 'dispute id'),
            id('payment_id', 'payment id'),
            text('status'),
            text('outcome'),
            money('amount'),
            date('actionable_until', 'actionable until'),
          ],
          disputes.total
        )}
        <h2>Subscriptions <small>(billing_subscriptions)</small></h2>${table(
          subscriptions.rows,
          [
            text('provider'),
            id('subscription_id', 'subscription id'),
            text('customer_id', 'customer'),
            text('status'),
            date('current_period_end', 'period ends'),
            date('canceled_at', 'canceled at'),
          ],
          subscriptions.total
        )}
        <h2>Audit <small>(billing_audit_events)</small></h2>${table(
          audit.rows,
          [
            text('provider'),
            text('type'),
            text('reason'),
            num('occurrences'),
            date('created_at', 'first seen'),
          ],
          audit.total
        )}`,
        '',
        '/payments'
      )
    })
  },
}
