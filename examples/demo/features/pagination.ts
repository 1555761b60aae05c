import type { DemoFeature } from './main.ts'
import { orderCount } from '../database/seed_orders.ts'
import { escapeHtml as escape, layout } from './layout.ts'
import { formatCount, formatDate, formatMoney } from './format.ts'

/** The currency of the demo's orders (the table stores cents only) */
const ORDER_CURRENCY = 'BRL'

const SORTS: [string, string][] = [
  ['-createdAt', 'Newest first'],
  ['createdAt', 'Oldest first'],
  ['-amount,createdAt', 'Amount (high to low), then oldest'],
  ['-shippedAt', 'Shipped (latest first, unshipped last)'],
  ['shippedAt', 'Shipped (unshipped first, then earliest)'],
  ['status,-amount', 'Status, then amount (high to low)'],
]

/**
 * The query string of the parameters a request actually filters, sorts or
 * sizes by (`filter[amount][gte]=100&sort=-amount`), blank values left out:
 * what the page's links carry, so page 2 filters exactly as page 1 did. A
 * list the query-string parser split on its commas is joined back with
 * literal commas (an encoded `%2C` would be one value).
 */
export function activeQuery(qs: Record<string, unknown>, extra: Record<string, string> = {}) {
  const parts: string[] = []
  const key = (name: string) => encodeURIComponent(name).replace(/%5B/g, '[').replace(/%5D/g, ']')
  const add = (name: string, value: unknown) => {
    if (value === undefined || value === null) return
    if (Array.isArray(value)) {
      const items = value.filter((item) => typeof item === 'string' || typeof item === 'number')
      if (items.length > 0) {
        parts.push(`${key(name)}=${items.map((item) => encodeURIComponent(item)).join(',')}`)
      }
      return
    }
    if (typeof value === 'object') {
      for (const [inner, nested] of Object.entries(value)) add(`${name}[${inner}]`, nested)
      return
    }
    const text = String(value)
    if (text.trim() !== '') parts.push(`${key(name)}=${encodeURIComponent(text)}`)
  }
  add('filter', qs.filter)
  add('search', qs.search)
  add('sort', qs.sort)
  const paginate = qs.paginate
  if (paginate && typeof paginate === 'object') {
    add('paginate[first]', (paginate as Record<string, unknown>).first)
  }
  for (const [name, value] of Object.entries(extra)) add(name, value)
  return parts.join('&')
}

/**
 * Drops the form's blank fields before it is sent, so the URL holds only the
 * filters set (the library ignores blank ones anyway, so the page works without it).
 */
const SEND_ONLY_SET_FIELDS = `for (const field of this.elements) if (field.name && field.value === '') field.disabled = true`

/**
 * Keyset pagination over the demo's orders (10,000, or DEMO_ORDERS): filter,
 * search, sort, walk by cursor, with each page's SQL and time.
 */
export const pagination: DemoFeature = {
  title: 'Keyset pagination',
  description:
    'Filter, search, sort and walk the orders table by cursor (10,000 rows, or a million with DEMO_ORDERS=1000000), with the SQL and time of each page.',
  path: '/pagination',
  routes(router) {
    router.get('/pagination/orders', async ({ request }) => {
      const [{ default: Order, orderFilters }, { toHttpPage }] = await Promise.all([
        import('../app/models/order.ts'),
        import('adonis-atrium/pagination'),
      ])
      return toHttpPage(await orderFilters.findPage(Order, request.qs()))
    })

    router.get('/pagination', async ({ request }) => {
      const [{ default: Order, orderFilters }, { errors }] = await Promise.all([
        import('../app/models/order.ts'),
        import('adonis-atrium/pagination'),
      ])
      const qs = request.qs()
      const filter = (qs.filter ?? {}) as Record<string, any>
      const input = { ...qs, include: 'customer' }
      const queries: string[] = []
      let body = ''
      try {
        const started = performance.now()
        const page = await orderFilters.findPage(Order, input, {
          onQuery: (query) => queries.push(query.toQuery()),
        })
        const elapsed = performance.now() - started
        const link = (extra: Record<string, string>) => `/pagination?${activeQuery(qs, extra)}`
        const size = String(qs.paginate?.first ?? 25)
        const nav = [
          `<a href="${escape(link({}))}">First</a>`,
          page.hasPrev && page.prevCursor
            ? `<a href="${escape(link({ 'paginate[last]': size, 'paginate[before]': page.prevCursor }))}">← Previous</a>`
            : '<span>← Previous</span>',
          page.hasNext && page.nextCursor
            ? `<a href="${escape(link({ 'paginate[after]': page.nextCursor }))}">Next →</a>`
            : '<span>Next →</span>',
          `<a href="${escape(link({ 'paginate[last]': size }))}">Last</a>`,
        ].join(' · ')
        body = `
          <p class="pager">${nav}</p>
          <div class="table"><table>
            <caption>${formatCount(page.items.length)} orders on this page, ${escape(size)} asked for</caption>
            <thead><tr><th class="num">#</th><th>Reference</th><th>Customer</th><th>Status</th><th class="num">Amount</th><th>Shipped</th><th>Created</th></tr></thead>
            <tbody>${page.items
              .map(
                (order) =>
                  `<tr><td class="num">${escape(order.id)}</td><td>${escape(order.reference)}</td><td>${escape(order.customer?.name)}</td><td>${escape(order.status)}</td><td class="num">${formatMoney(order.amount, ORDER_CURRENCY)}</td><td class="time">${formatDate(order.shippedAt)}</td><td class="time">${formatDate(order.createdAt)}</td></tr>`
              )
              .join('')}</tbody>
          </table></div>
          <p class="pager">${nav}</p>
          <h2>SQL of this page <small>(${elapsed.toFixed(1)} ms for the page, preload included)</small></h2>
          ${queries.map((sql) => `<pre>${escape(sql)}</pre>`).join('')}`
      } catch (error) {
        if (!(error instanceof errors.InvalidPaginationQueryException)) throw error
        body = `<p role="alert" class="alert"><strong>400:</strong> ${escape(error.message)}</p>`
      }

      const selected = (value: string, current: unknown) => (value === current ? ' selected' : '')
      const form = `
        <form method="get" action="/pagination" class="filters" onsubmit="${escape(SEND_ONLY_SET_FIELDS)}">
          <label>Status<select name="filter[status]">
            ${['', 'paid', 'pending', 'refunded', 'failed'].map((status) => `<option value="${escape(status)}"${selected(status, filter.status)}>${status || 'any'}</option>`).join('')}
          </select></label>
          <label>Amount ≥ (cents)<input name="filter[amount][gte]" size="8" value="${escape(filter.amount?.gte)}"></label>
          <label>Unshipped<select name="filter[shippedAt][isNull]">
            <option value="">any</option><option value="true"${selected('true', filter.shippedAt?.isNull)}>only unshipped</option><option value="false"${selected('false', filter.shippedAt?.isNull)}>only shipped</option>
          </select></label>
          <label>Search reference<input name="search" size="12" value="${escape(qs.search)}" placeholder="ORD-00042"></label>
          <label>Sort<select name="sort">
            ${SORTS.map(([value, label]) => `<option value="${escape(value)}"${selected(value, [qs.sort].flat().join(','))}>${escape(label)}</option>`).join('')}
          </select></label>
          <label>Per page<input name="paginate[first]" size="4" value="${escape(qs.paginate?.first ?? 25)}"></label>
          <button>Apply</button>
        </form>
        <p>JSON: <a href="/pagination/orders?sort=-amount&amp;paginate[first]=5">/pagination/orders?sort=-amount&amp;paginate[first]=5</a></p>
        <p><small>The table holds ${formatCount(orderCount())} orders (amounts in ${ORDER_CURRENCY}). Start the demo with <code>DEMO_ORDERS=1000000 npm run demo</code> to walk a million (seeded once: 15 to 70 s and about 210 MB of SQLite); a blank field is no filter.</small></p>`
      return layout('Keyset pagination', form + body, '', '/pagination')
    })
  },
}
