import { escapeHtml } from './layout.ts'

/**
 * Display helpers of the demo pages. Each returns escaped HTML, so a page can
 * interpolate the result as is.
 */

const pad = (value: number) => String(value).padStart(2, '0')

/** Below this a number is read as epoch seconds (year 5138 in seconds, 1973 in ms) */
const SECONDS_BELOW = 1e11

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null
  if (value instanceof Date) return value
  if (typeof value === 'object' && 'toJSDate' in value && typeof value.toJSDate === 'function') {
    return value.toJSDate() as Date // a Luxon DateTime
  }
  const number =
    typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : Number.NaN
  if (Number.isFinite(number)) return new Date(number < SECONDS_BELOW ? number * 1000 : number)
  const parsed = new Date(String(value))
  return Number.isNaN(parsed.getTime()) ? null : parsed
}

/**
 * A moment as local `YYYY-MM-DD HH:mm:ss`, from a Date, a Luxon DateTime,
 * epoch milliseconds or seconds (numbers or digit strings, as SQLite returns
 * them) or an ISO string; '—' when empty, the raw value when unreadable.
 */
export function formatDate(value: unknown) {
  const date = toDate(value)
  if (!date) return value === null || value === undefined || value === '' ? '—' : escapeHtml(value)
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  // two spans: a narrow column may wrap between the day and the time, never inside either
  return `<time datetime="${date.toISOString()}"><span>${day}</span> <span>${time}</span></time>`
}

/** The locale each currency reads best in; others use en-US */
const LOCALES: Record<string, string> = { BRL: 'pt-BR', EUR: 'de-DE', GBP: 'en-GB', USD: 'en-US' }

/**
 * An amount in minor units (cents) with its ISO 4217 currency: BRL 2590 is
 * "R$ 25,90", EUR 1130 "11,30 €", JPY 500 "¥500". Without a currency (or
 * with one Intl does not know) the plain number and the code are shown.
 */
export function formatMoney(minor: unknown, currency: unknown) {
  if (minor === null || minor === undefined || minor === '') return '—'
  const amount = Number(minor)
  const code = typeof currency === 'string' ? currency.trim().toUpperCase() : ''
  if (!Number.isFinite(amount)) return escapeHtml(minor)
  if (/^[A-Z]{3}$/.test(code)) {
    try {
      const format = new Intl.NumberFormat(LOCALES[code] ?? 'en-US', {
        style: 'currency',
        currency: code,
      })
      const digits = format.resolvedOptions().maximumFractionDigits ?? 2
      return escapeHtml(format.format(amount / 10 ** digits))
    } catch {
      // an unknown code falls through to the plain form
    }
  }
  return escapeHtml(`${amount.toLocaleString('en-US')}${code ? ` ${code}` : ''} (minor units)`)
}

/**
 * JSON (a value, or a string holding JSON) as a collapsible block: the
 * first characters as summary, the whole of it pretty-printed inside.
 */
export function formatJson(value: unknown, summaryLength = 60) {
  if (value === null || value === undefined || value === '') return '—'
  let parsed = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      parsed = value
    }
  }
  const compact = typeof parsed === 'string' ? parsed : JSON.stringify(parsed)
  if (compact.length <= summaryLength) return `<code>${escapeHtml(compact)}</code>`
  const pretty = typeof parsed === 'string' ? parsed : JSON.stringify(parsed, null, 2)
  return `<details><summary><code>${escapeHtml(compact.slice(0, summaryLength))}…</code></summary><pre>${escapeHtml(pretty)}</pre></details>`
}

/** A whole number with thousands separators */
export function formatCount(value: number) {
  return value.toLocaleString('en-US')
}
