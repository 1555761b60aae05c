import { AgentConfigException } from '../errors.ts'

const formatters = new Map<string, Intl.DateTimeFormat>()

/** A day formatter for the zone, or a boot error naming the option when the zone is unknown */
export function assertTimeZone(timeZone: unknown, option: string, file: string) {
  if (typeof timeZone !== 'string' || !timeZone) {
    throw new AgentConfigException(
      `Invalid "${option}" in ${file}: expected an IANA time zone such as 'UTC' or 'America/Sao_Paulo', received ${JSON.stringify(timeZone)}`
    )
  }
  try {
    formatterFor(timeZone)
  } catch {
    throw new AgentConfigException(
      `Unknown time zone ${JSON.stringify(timeZone)} in "${option}" of ${file}. Use an IANA name such as 'UTC', 'Europe/Paris' or 'America/Sao_Paulo' (Intl.supportedValuesOf('timeZone') lists them)`
    )
  }
  return timeZone
}

function formatterFor(timeZone: string) {
  let formatter = formatters.get(timeZone)
  if (!formatter) {
    // en-CA formats a date as YYYY-MM-DD; the parts are read anyway, not the string
    formatter = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    })
    formatters.set(timeZone, formatter)
  }
  return formatter
}

/** The last day computed per zone, and the UTC minute it was computed for */
const lastDays = new Map<string, { minute: number; day: string }>()

/**
 * The calendar day (`YYYY-MM-DD`) of `now` in the zone. `formatToParts` cost
 * a turn about 0.1 ms, so the answer is kept for the rest of its UTC minute:
 * zone offsets since 1972 are whole minutes (Monrovia kept -0:44:30 until
 * then), so a local day never ends inside one.
 */
export function dayIn(timeZone: string, now = new Date()) {
  const minute = Math.floor(now.getTime() / 60_000)
  const last = lastDays.get(timeZone)
  if (last?.minute === minute) return last.day
  const parts: Record<string, string> = {}
  for (const part of formatterFor(timeZone).formatToParts(now)) parts[part.type] = part.value
  const day = `${parts.year}-${parts.month}-${parts.day}`
  lastDays.set(timeZone, { minute, day })
  return day
}
