import type { DemoFeature } from './main.ts'
import { layout } from './layout.ts'

function escape(value: unknown) {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!
  )
}

const SORTS: [string, string][] = [
  ['-createdAt', 'Newest first'],
  ['createdAt', 'Oldest first'],
  ['-amount,createdAt', 'Amount (high to low), then oldest'],
  ['-shippedAt', 'Shipped (latest first, unshipped last)'],
  ['shippedAt', 'Shipped (unshipped first, then earliest)'],
  ['status,-amount', 'Status, then amount (high to low)'],
]

/**
 * Keyset pagination over the demo's 1,000,000 orders: filter, search, sort,
 * walk by cursor, with each page's SQL and time.
 */
export const pagination: DemoFeature = {
  title: 'Keyset pagination',
  description:
    'Filter, search, sort and walk 1,000,000 orders by cursor, with the SQL and time of each page.',
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
        const keep = new URLSearchParams()
        for (const [key, value] of Object.entries({
          'filter[status]': filter.status,
          'filter[amount][gte]': filter.amount?.gte,
          'filter[shippedAt][isNull]': filter.shippedAt?.isNull,
          'search': qs.search,
          'sort': qs.sort,
          'paginate[first]': qs.paginate?.first,
        })) {
          // The query-string parser turns `a,b` into an array
          const text = Array.isArray(value) ? value.join(',') : value
          if (typeof text === 'string' && text !== '') keep.set(key, text)
        }
        const link = (extra: Record<string, string>) => {
          const params = new URLSearchParams(keep)
          for (const [key, value] of Object.entries(extra)) params.set(key, value)
          return `/pagination?${params}`
        }
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
          <p class="nav">${nav}</p>
          <table>
            <thead><tr><th>#</th><th>Reference</th><th>Customer</th><th>Status</th><th>Amount</th><th>Shipped</th><th>Created</th></tr></thead>
            <tbody>${page.items
              .map(
                (order) =>
                  `<tr><td>${order.id}</td><td>${escape(order.reference)}</td><td>${escape(order.customer?.name)}</td><td>${escape(order.status)}</td><td>${(order.amount / 100).toFixed(2)}</td><td>${escape(order.shippedAt?.toFormat('yyyy-MM-dd HH:mm') ?? '—')}</td><td>${escape(order.createdAt.toFormat('yyyy-MM-dd HH:mm:ss'))}</td></tr>`
              )
              .join('')}</tbody>
          </table>
          <p class="nav">${nav}</p>
          <h2>SQL of this page <small>(${elapsed.toFixed(1)} ms for the page, preload included)</small></h2>
          ${queries.map((sql) => `<pre style="white-space: pre-wrap">${escape(sql)}</pre>`).join('')}`
      } catch (error) {
        if (!(error instanceof errors.InvalidPaginationQueryException)) throw error
        body = `<p role="alert" style="color: #c92a2a"><strong>400:</strong> ${escape(error.message)}</p>`
      }

      const selected = (value: string, current: unknown) => (value === current ? ' selected' : '')
      const form = `
        <form method="get" action="/pagination" style="display: flex; gap: .5rem; flex-wrap: wrap; align-items: end">
          <label>Status<br><select name="filter[status]">
            ${['', 'paid', 'pending', 'refunded', 'failed'].map((status) => `<option value="${status}"${selected(status, filter.status)}>${status || 'any'}</option>`).join('')}
          </select></label>
          <label>Amount ≥ (cents)<br><input name="filter[amount][gte]" size="8" value="${escape(filter.amount?.gte)}"></label>
          <label>Unshipped<br><select name="filter[shippedAt][isNull]">
            <option value="">any</option><option value="true"${selected('true', filter.shippedAt?.isNull)}>only unshipped</option><option value="false"${selected('false', filter.shippedAt?.isNull)}>only shipped</option>
          </select></label>
          <label>Search reference<br><input name="search" size="12" value="${escape(qs.search)}" placeholder="ORD-00042"></label>
          <label>Sort<br><select name="sort">
            ${SORTS.map(([value, label]) => `<option value="${value}"${selected(value, [qs.sort].flat().join(','))}>${label}</option>`).join('')}
          </select></label>
          <label>Per page<br><input name="paginate[first]" size="4" value="${escape(qs.paginate?.first ?? 25)}"></label>
          <button>Apply</button>
        </form>
        <p>JSON: <a href="/pagination/orders?sort=-amount&amp;paginate[first]=5">/pagination/orders?sort=-amount&amp;paginate[first]=5</a></p>`
      return layout('Keyset pagination', form + body)
    })
  },
}
