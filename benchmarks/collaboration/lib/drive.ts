/**
 * Offered load for the collaboration benchmark: writers at a steady rate,
 * observers timing each delivery.
 */
import type * as Y from 'yjs'
import { now, sleep, type BenchClient } from './harness.ts'

/**
 * Writers set their own map key to a timestamp; observers measure how long
 * each value took to arrive. Returns latencies (ms) and the achieved rate.
 */
export async function drive(
  clients: BenchClient[],
  observers: BenchClient[],
  rate: number,
  durationMs: number,
  warmupMs = 500
) {
  const latencies: number[] = []
  let measuring = false
  const handlers = observers.map((observer) => {
    const map = observer.doc.getMap('m')
    const handler = (event: Y.YMapEvent<unknown>) => {
      // an observer's own writes are not deliveries
      if (!measuring || event.transaction.local) {
        return
      }
      const at = now()
      for (const key of event.keysChanged) {
        const value = map.get(key)
        if (typeof value === 'number') {
          latencies.push(at - value)
        }
      }
    }
    map.observe(handler)
    return () => map.unobserve(handler)
  })
  const keys = clients.map((_, index) => `w${index}`)
  let sent = 0
  let cursor = 0
  const start = now()
  let measuredSent = 0
  let measureStart = 0
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = now() - start
      if (!measuring && elapsed >= warmupMs) {
        measuring = true
        measureStart = now()
        measuredSent = sent
      }
      const due = Math.floor((rate * elapsed) / 1000) - sent
      for (let index = 0; index < due; index++) {
        const client = clients[cursor]
        client.doc.getMap('m').set(keys[cursor], now())
        cursor = (cursor + 1) % clients.length
        sent++
      }
      if (elapsed >= warmupMs + durationMs) {
        clearInterval(timer)
        resolve()
      }
    }, 5)
  })
  const achieved = ((sent - measuredSent) * 1000) / (now() - measureStart)
  await sleep(300)
  measuring = false
  handlers.forEach((off) => off())
  return { latencies, achieved, sent }
}

export function closeAll(clients: BenchClient[]) {
  clients.forEach((client) => client.close())
}
