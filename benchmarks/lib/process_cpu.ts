/**
 * CPU time of other processes on this machine, read from Linux's /proc, so a
 * benchmark can say where each request's CPU went: the app, the load
 * generator, a stand-in for a remote API, the database server. Elsewhere
 * (no /proc) every figure is undefined.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Linux reports utime and stime in clock ticks of 10 ms (USER_HZ is 100 everywhere Node runs) */
const MICROS_PER_TICK = 10_000

/** utime + stime of one process in µs, or undefined when it cannot be read */
export function processCpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name (field 2) may hold spaces; the fields after its ')' are fixed
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * MICROS_PER_TICK
  } catch {
    return undefined
  }
}

/** The pids whose command name is one of `names` (e.g. every PostgreSQL backend) */
export function pidsNamed(names: string[]): number[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  const pids: number[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim()))
        pids.push(Number(entry))
    } catch {
      // the process ended between the listing and the read
    }
  }
  return pids
}

/**
 * CPU of a group of processes found anew at each reading (database servers
 * start a backend per connection), in µs, keyed by pid so a backend that
 * appears or ends mid-run only counts while it is seen.
 */
export function groupCpu(find: () => number[]): Map<number, number> {
  const readings = new Map<number, number>()
  for (const pid of find()) {
    const micros = processCpuMicros(pid)
    if (micros !== undefined) readings.set(pid, micros)
  }
  return readings
}

/** CPU spent between two `groupCpu` readings, by the processes in both */
export function groupCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0
  for (const [pid, micros] of after) {
    const start = before.get(pid)
    spent += micros - (start ?? micros)
  }
  return spent
}
