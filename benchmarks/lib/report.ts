/**
 * Small helpers every benchmark shares: timing a function, percentiles and a
 * printed table where each figure sits beside its baseline and their ratio.
 */
import { performance } from 'node:perf_hooks'

export interface Sample {
  /** Milliseconds per run, one entry per measured run */
  durations: number[]
}

/**
 * Runs `fn` `warmup` times unmeasured, then `runs` times measured.
 */
export async function sample(
  fn: () => unknown | Promise<unknown>,
  { runs = 20, warmup = 3 }: { runs?: number; warmup?: number } = {}
): Promise<Sample> {
  for (let index = 0; index < warmup; index++) {
    await fn()
  }
  const durations: number[] = []
  for (let index = 0; index < runs; index++) {
    const start = performance.now()
    await fn()
    durations.push(performance.now() - start)
  }
  return { durations }
}

/**
 * The p-th percentile (0 to 100) of a list of numbers.
 */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) {
    return Number.NaN
  }
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]
}

export const median = (values: number[]) => percentile(values, 50)

/**
 * Formats a number for a table: three significant digits, thousands separated.
 */
export function figure(value: number, unit = ''): string {
  if (!Number.isFinite(value)) {
    return 'n/a'
  }
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })}${unit}`
}

/**
 * Prints rows as an aligned table under a title.
 */
export function printTable(title: string, rows: Record<string, string | number>[]) {
  console.log(`\n${title}`)
  if (rows.length === 0) {
    console.log('  (no rows)')
    return
  }
  const columns = Object.keys(rows[0])
  const cells = rows.map((row) => columns.map((column) => String(row[column] ?? '')))
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((row) => row[index].length))
  )
  const line = (values: string[]) =>
    '  ' + values.map((value, index) => value.padEnd(widths[index])).join('  ')
  console.log(line(columns))
  console.log(line(widths.map((width) => '-'.repeat(width))))
  cells.forEach((row) => console.log(line(row)))
}
