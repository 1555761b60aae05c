import type { HttpContext } from '@adonisjs/core/http'
import { AgentInvalidRequestException } from '../errors.ts'
import type { DayWindow } from '../governance/insights.ts'
import type { AgentManager } from '../manager.ts'

export const MAX_LIMIT = 200

/** Longest `from`..`to` window of the aggregate routes, both days counted */
export const MAX_RANGE_DAYS = 366

/** Days of the window when neither `from` nor `to` is given: today and the 29 before */
export const DEFAULT_RANGE_DAYS = 30

const DAY = /^\d{4}-\d{2}-\d{2}$/
const DAY_MS = 86_400_000

/** A positive integer query parameter up to `max`, or its default */
export function integer(value: unknown, name: string, fallback: number, max: number) {
  if (value === undefined || value === '') return fallback
  const number = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isInteger(number) || number < 1 || number > max) {
    throw new AgentInvalidRequestException(`"${name}" must be an integer from 1 to ${max}`, name)
  }
  return number
}

/** A real calendar day as `YYYY-MM-DD` */
export function day(value: unknown, name: string) {
  const date = typeof value === 'string' && DAY.test(value) ? new Date(`${value}T00:00:00Z`) : null
  if (!date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    throw new AgentInvalidRequestException(`"${name}" must be a day as YYYY-MM-DD`, name)
  }
  return value as string
}

/** The day `days` after `dayText`; 400 naming `name` when it leaves the years 0000 to 9999 */
function shift(dayText: string, days: number, name: string) {
  const shifted = new Date(Date.parse(`${dayText}T00:00:00Z`) + days * DAY_MS).toISOString()
  // past 9999 or before 0000 the ISO year takes a sign and six digits: no YYYY-MM-DD day
  if (!DAY.test(shifted.slice(0, 10))) {
    throw new AgentInvalidRequestException(
      `"${name}" leaves no ${DEFAULT_RANGE_DAYS}-day window within the years 0000 to 9999: give both "from" and "to"`,
      name
    )
  }
  return shifted.slice(0, 10)
}

/**
 * `from` and `to` of the aggregate routes, UTC days, both included. Without
 * either, the last 30 days up to today; with one, 30 days from or up to it.
 */
export function dayWindow(query: Record<string, unknown>, now = new Date()): DayWindow {
  const from = query.from === undefined ? undefined : day(query.from, 'from')
  const to = query.to === undefined ? undefined : day(query.to, 'to')
  const today = now.toISOString().slice(0, 10)
  const toDay = to ?? (from ? shift(from, DEFAULT_RANGE_DAYS - 1, 'from') : today)
  const fromDay = from ?? shift(toDay, 1 - DEFAULT_RANGE_DAYS, 'to')
  if (fromDay > toDay) {
    throw new AgentInvalidRequestException(`"from" (${fromDay}) is after "to" (${toDay})`, 'from')
  }
  const span = (Date.parse(toDay) - Date.parse(fromDay)) / DAY_MS + 1
  if (span > MAX_RANGE_DAYS) {
    throw new AgentInvalidRequestException(
      `"from" to "to" spans ${span} days: at most ${MAX_RANGE_DAYS}`,
      'from'
    )
  }
  return { fromDay, toDay }
}

export async function manager(ctx: HttpContext): Promise<AgentManager> {
  return ctx.containerResolver.make('atrium.agent')
}
