/**
 * Time to first delta: a chat turn through the gateway (HTTP, actor, thread
 * and run rows, the event log, SSE framing) beside a direct AI SDK
 * `streamText` against the same loopback fake model, on SQLite. Both are
 * read by one client in a child process, as a remote client would read
 * them, from its request to the first text delta of a three-delta reply.
 */
import { fileURLToPath } from 'node:url'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { agentDatabase, fakeModelProcess, gatewayApp } from '../lib/agent_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const WARMUP = 20
const REPLY = { text: ['Hello', ' there', '!'] }

const database = await agentDatabase()
// The model API and the client each run in a process of their own, as they do in production
const fake = await fakeModelProcess(REPLY, (RUNS + WARMUP) * 4 + 10)
const modelUrl = fake.url
const http = await gatewayApp(database, modelUrl)

/** The reader, in its own process (benchmarks/lib/agent_ttfd_client.ts) */
const client = fork(fileURLToPath(new URL('../lib/agent_ttfd_client.ts', import.meta.url)), {
  execArgv: ['--import=@poppinss/ts-exec'],
})
await once(client, 'message')

/** Asks the client for one turn */
async function turn(
  request: { kind: 'gateway'; url: string } | { kind: 'direct'; modelUrl: string }
) {
  client.send(request)
  const [answer] = (await once(client, 'message')) as [{ ms?: number; error?: string }]
  if (answer.error !== undefined) throw new Error(`client: ${answer.error}`)
  return answer.ms!
}

/** Milliseconds from the client's request to the first delta frame; the rest is drained */
const gatewayTurn = () => turn({ kind: 'gateway', url: http.url })

/** The same reply read straight through the AI SDK, from the same client process */
const directTurn = () => turn({ kind: 'direct', modelUrl })

async function measure(oneTurn: () => Promise<number>) {
  for (let index = 0; index < WARMUP; index++) await oneTurn()
  const values: number[] = []
  for (let index = 0; index < RUNS; index++) values.push(await oneTurn())
  return values
}

try {
  // Interleaved halves so a noisy moment colours both sides alike
  const direct = [...(await measure(directTurn))]
  const gateway = [...(await measure(gatewayTurn))]
  direct.push(...(await measure(directTurn)))
  gateway.push(...(await measure(gatewayTurn)))
  const row = (name: string, values: number[]) => ({
    path: name,
    p50: figure(percentile(values, 50), ' ms'),
    p99: figure(percentile(values, 99), ' ms'),
  })
  printTable(
    `Time to first delta, ${RUNS * 2} turns each (SQLite, OpenAI wire on loopback; the client and the model API each in a process of their own)`,
    [
      row('AI SDK streamText (baseline)', direct),
      row('gateway POST /agent/chat', gateway),
      {
        path: 'ratio gateway / baseline',
        p50: figure(percentile(gateway, 50) / percentile(direct, 50), 'x'),
        p99: figure(percentile(gateway, 99) / percentile(direct, 99), 'x'),
      },
    ]
  )
} finally {
  client.kill()
  await http.close()
  fake.close()
  await database.remove()
}
