/**
 * Time to first delta: a chat turn through the gateway (HTTP, actor, thread
 * and run rows, the daily quota's reservation, the event log, SSE framing)
 * beside a direct AI SDK `streamText` against the same loopback fake model,
 * on each database of `BENCH_DB` (SQLite by default; `sqlite,pg`). Both are
 * read by one client in a child process, as a remote client would read
 * them, from its request to the first text delta of a three-delta reply.
 */
import { fileURLToPath } from 'node:url'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { agentDatabase, fakeModelProcess, gatewayApp } from '../lib/agent_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const RUNS = Number(process.env.BENCH_RUNS ?? 400)
/** Turns per path before any is measured: the AI SDK's stream code needs hundreds to be optimised */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200)
/** Turns per path in one block; blocks alternate so a noisy moment colours both paths alike */
const BLOCK = 25
const REPLY = { text: ['Hello', ' there', '!'] }
const dialects = (process.env.BENCH_DB ?? 'sqlite').split(',') as Array<'sqlite' | 'pg'>
/** The SQL quota store on the same database, as `quotaLimitTokens` sets it; `BENCH_QUOTA=off` leaves it out */
const QUOTA = process.env.BENCH_QUOTA !== 'off'

/** The reader, in its own process (benchmarks/lib/agent_ttfd_client.ts) */
const client = fork(fileURLToPath(new URL('../lib/agent_ttfd_client.ts', import.meta.url)), {
  execArgv: ['--import=@poppinss/ts-exec'],
})
await once(client, 'message')

/** Asks the client for one turn: milliseconds from its request to the first delta */
async function turn(
  request: { kind: 'gateway'; url: string } | { kind: 'direct'; modelUrl: string }
) {
  client.send(request)
  const [answer] = (await once(client, 'message')) as [{ ms?: number; error?: string }]
  if (answer.error !== undefined) throw new Error(`client: ${answer.error}`)
  return answer.ms!
}

async function turns(oneTurn: () => Promise<number>, count: number) {
  const values: number[] = []
  for (let index = 0; index < count; index++) values.push(await oneTurn())
  return values
}

async function measure(dialect: 'sqlite' | 'pg') {
  if (dialect !== 'sqlite' && dialect !== 'pg')
    throw new Error(`BENCH_DB: unsupported "${dialect}"`)
  const database = await agentDatabase(dialect)
  // The model API runs in a process of its own, as it does in production
  const fake = await fakeModelProcess(REPLY, (RUNS + WARMUP) * 2 + 10)
  // a limit no turn reaches: every turn holds and settles its reservation
  const http = await gatewayApp(database, fake.url, QUOTA ? { quotaLimitTokens: 1e12 } : {})
  /** The whole gateway; the rest of the stream is drained */
  const gatewayTurn = () => turn({ kind: 'gateway', url: http.url })
  /** The same reply read straight through the AI SDK, from the same client process */
  const directTurn = () => turn({ kind: 'direct', modelUrl: fake.url })
  try {
    await turns(directTurn, WARMUP)
    await turns(gatewayTurn, WARMUP)
    const direct: number[] = []
    const gateway: number[] = []
    // The added time of each pair of blocks, to show how much one block's moment moves it
    const addedPerPair: number[] = []
    for (let measured = 0; measured < RUNS; measured += BLOCK) {
      const count = Math.min(BLOCK, RUNS - measured)
      const directBlock = await turns(directTurn, count)
      const gatewayBlock = await turns(gatewayTurn, count)
      direct.push(...directBlock)
      gateway.push(...gatewayBlock)
      addedPerPair.push(percentile(gatewayBlock, 50) - percentile(directBlock, 50))
    }
    const row = (name: string, values: number[]) => ({
      path: name,
      p50: figure(percentile(values, 50), ' ms'),
      p99: figure(percentile(values, 99), ' ms'),
    })
    printTable(
      `Time to first delta on ${dialect}${QUOTA ? ' with the SQL quota' : ''}, ${RUNS} turns each after ${WARMUP} unmeasured, in alternating blocks of ${BLOCK} (OpenAI wire on loopback; the client and the model API each in a process of their own)`,
      [
        row('AI SDK streamText (baseline)', direct),
        row('gateway POST /agent/chat', gateway),
        {
          path: 'added by the gateway (target 2 ms, 5 ms)',
          p50: figure(percentile(gateway, 50) - percentile(direct, 50), ' ms'),
          p99: figure(percentile(gateway, 99) - percentile(direct, 99), ' ms'),
        },
        {
          path: 'ratio gateway / baseline',
          p50: figure(percentile(gateway, 50) / percentile(direct, 50), 'x'),
          p99: figure(percentile(gateway, 99) / percentile(direct, 99), 'x'),
        },
      ]
    )
    console.log(
      `  added p50 per pair of blocks: min ${figure(Math.min(...addedPerPair), ' ms')}, median ${figure(percentile(addedPerPair, 50), ' ms')}, max ${figure(Math.max(...addedPerPair), ' ms')}`
    )
  } finally {
    await http.close()
    fake.close()
    await database.remove()
  }
}

try {
  for (const dialect of dialects) await measure(dialect)
} finally {
  client.kill()
}
