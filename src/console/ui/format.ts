/** Display helpers shared by the screens */

export function time(ms: number) {
  return new Date(ms).toLocaleTimeString()
}

export function dateTime(ms: number) {
  return new Date(ms).toLocaleString()
}

export function duration(ms: number | null | undefined) {
  if (ms === null || ms === undefined) return ''
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`
  return `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`
}

export function json(value: unknown) {
  return JSON.stringify(value, null, 2)
}

export function statusClass(status: number | null) {
  if (status === null) return ''
  if (status >= 500) return 'bad'
  if (status >= 400) return 'warn'
  return 'ok'
}
