/**
 * Quota race: 50 turns of one actor sent at once against a daily limit that
 * admits 10 model calls (each reserves 100 tokens before it calls the model
 * and the fake bills exactly 100), through HTTP, with the quota in SQL
 * (SQLite) and in Redis. What must hold: the tokens used never exceed the
 * limit by more than one step's reservation; printed with how many turns were
 * answered and refused, and how long the 50 took.
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { quotas } from '../../src/agent/main.ts'
import type { AgentConfigInput } from '../../src/agent/main.ts'
import { SERVICES } from '../../tests/helpers.ts'
import { SseReader } from '../../tests/sse_client.ts'
import { agentDatabase, fakeModelProcess, gatewayApp } from '../lib/agent_app.ts'
import { figure, printTable } from '../lib/report.ts'

const TURNS = 50
const RESERVE = 100
const LIMIT = 10 * RESERVE
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5)
const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`
const USAGE = { prompt_tokens: 60, completion_tokens: 40, total_tokens: RESERVE }

const database = await agentDatabase()
const fake = await fakeModelProcess()

/** 50 turns of a new actor at once; what they ended with and what the quota says */
async function race(url: string) {
  const actor = { 'x-actor-id': `racer-${randomUUID()}` }
  await fake.reply(...Array.from({ length: TURNS }, () => ({ text: ['ok'], usage: USAGE })))
  const start = performance.now()
  const outcomes = await Promise.all(
    Array.from({ length: TURNS }, async (_, index) => {
      const response = await fetch(`${url}/agent/chat`, {
        method: 'POST',
        headers: { ...actor, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `turn ${index}` }),
      })
      const frames = await new SseReader(response).rest()
      const last = frames.at(-1)
      return last?.event === 'error' ? (last.data.code as string) : (last?.event ?? 'none')
    })
  )
  const ms = performance.now() - start
  const today = await fetch(`${url}/agent/quota/today`, { headers: actor })
  const quota = (await today.json()) as { usedTokens: number }
  return {
    answered: outcomes.filter((outcome) => outcome === 'done').length,
    refused: outcomes.filter((outcome) => outcome === 'quota_exceeded').length,
    used: quota.usedTokens,
    ms,
  }
}

async function measure(name: string, config: Partial<AgentConfigInput>) {
  const http = await gatewayApp(database, fake.url, { quotaReserveTokens: RESERVE, ...config })
  try {
    await race(http.url) // warm-up
    const runs = []
    for (let repeat = 0; repeat < REPEATS; repeat++) runs.push(await race(http.url))
    const worst = Math.max(...runs.map((run) => run.used))
    return {
      'store': name,
      'answered / refused': runs.map((run) => `${run.answered}/${run.refused}`).join(', '),
      'used tokens (limit 1,000)': runs.map((run) => run.used).join(', '),
      'worst over the limit': `${worst - LIMIT} (allowed ${RESERVE})`,
      '50 turns took': runs.map((run) => figure(run.ms, ' ms')).join(', '),
      worst,
    }
  } finally {
    await http.close()
  }
}

try {
  const rows = [
    await measure('SQL (SQLite)', { quotaLimitTokens: LIMIT }),
    await measure('Redis', {
      quota: quotas.redis({
        url: REDIS_URL,
        prefix: `atrium:agent:bench:${randomUUID()}:`,
        limitTokens: LIMIT,
      }),
    }),
  ]
  printTable(
    `Quota race: ${TURNS} concurrent turns of one actor against a limit admitting 10, ${REPEATS} runs per store`,
    rows.map(({ worst: _worst, ...row }) => row)
  )
  if (rows.some((row) => row.worst > LIMIT + RESERVE)) {
    console.error('  the limit was exceeded by more than one reservation')
    process.exitCode = 1
  }
} finally {
  fake.close()
  await database.remove()
}
