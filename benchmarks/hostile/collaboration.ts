/**
 * `npm run bench -- hostile`: a bystander HTTP route of the collaboration
 * server, idle and then while one writer floods updates and one read-only
 * viewer floods awareness (a 300,000-entry frame, then queries it never
 * reads), each reconnecting whenever the server closes it. Prints peak RSS
 * and HTTP p50/p99 beside the idle figures with the ratio (target: each
 * within 2x of idle), the server's event-loop delay, then the cost of
 * merging a burst of updates in chunks against one `Y.mergeUpdates` call.
 * Bounded: about 25 s (HOSTILE_BENCH_PHASE_MS sets each phase, 8000 ms).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { Agent, get } from 'node:http'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import * as Y from 'yjs'
import { mergeBounded } from '../../src/collaboration/engines/yjs/room_storage.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const PHASE_MS = Number(process.env.HOSTILE_BENCH_PHASE_MS ?? 8000)
const MiB = 1024 * 1024

function start(file: string, args: string[]): ChildProcess {
  return fork(fileURLToPath(new URL(file, import.meta.url)), args, {
    execArgv: ['--import=@poppinss/ts-exec', '--expose-gc'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production' },
  })
}

function output(child: ChildProcess, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let text = ''
    child.stdout!.on('data', (chunk) => {
      text += chunk
      const match = text.match(pattern)
      if (match) {
        resolve(match)
      }
    })
    child.once('exit', (code) => reject(new Error(`${child.spawnargs.at(-1)} exited with ${code}`)))
  })
}

let asks = 0
interface ServerSample {
  peak: number
  delayP99: number
  delayMax: number
}

function sampleServer(server: ChildProcess): Promise<ServerSample> {
  const id = ++asks
  return new Promise((resolve) => {
    const listener = (message: any) => {
      if (message?.id === id) {
        server.off('message', listener)
        resolve(message)
      }
    }
    server.on('message', listener)
    server.send({ cmd: 'peak', id })
  })
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

function request(port: number): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/bystander', agent }, (response) => {
      response.resume()
      response.on('end', () => resolve(performance.now() - started))
    }).on('error', reject)
  })
}

/** Bystander latencies, one request at a time with a 5 ms pause, for `ms` */
async function bystander(port: number, ms: number) {
  const latencies: number[] = []
  const until = performance.now() + ms
  while (performance.now() < until) {
    latencies.push(await request(port))
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return latencies
}

const server = start('./lib/server_process.ts', [])
try {
  const [, port] = await output(server, /PORT=(\d+)/)
  await bystander(Number(port), 1000)

  await sampleServer(server)
  const idle = await bystander(Number(port), PHASE_MS)
  const idleServer = await sampleServer(server)

  const attackers = ['updates', 'awareness'].map((kind) =>
    start('./lib/attacker.ts', [port, kind, String(PHASE_MS)])
  )
  const reports = attackers.map((attacker) => output(attacker, /^\{.*\}$/m))
  // the attack (and the measured phase) starts once both clients have prepared it
  await Promise.all(attackers.map((attacker) => output(attacker, /^READY$/m)))
  const attacked = await bystander(Number(port), PHASE_MS)
  const attackedServer = await sampleServer(server)
  const lines = await Promise.all(reports)
  const results = lines.map(([line]) => JSON.parse(line))

  const ratio = (a: number, b: number) => `${figure(b / a)}x`
  printTable(`Bystander route while two clients attack (${PHASE_MS / 1000} s each phase)`, [
    {
      figure: 'peak RSS',
      idle: figure(idleServer.peak / MiB, ' MiB'),
      attacked: figure(attackedServer.peak / MiB, ' MiB'),
      ratio: ratio(idleServer.peak, attackedServer.peak),
      target: '≤ 2x',
    },
    {
      figure: 'HTTP p50',
      idle: figure(percentile(idle, 50), ' ms'),
      attacked: figure(percentile(attacked, 50), ' ms'),
      ratio: ratio(percentile(idle, 50), percentile(attacked, 50)),
      target: '≤ 2x',
    },
    {
      figure: 'HTTP p99',
      idle: figure(percentile(idle, 99), ' ms'),
      attacked: figure(percentile(attacked, 99), ' ms'),
      ratio: ratio(percentile(idle, 99), percentile(attacked, 99)),
      target: '≤ 2x',
    },
    {
      figure: 'server event-loop delay p99',
      idle: figure(idleServer.delayP99, ' ms'),
      attacked: figure(attackedServer.delayP99, ' ms'),
      ratio: ratio(idleServer.delayP99, attackedServer.delayP99),
      target: '',
    },
    {
      figure: 'server event-loop delay max',
      idle: figure(idleServer.delayMax, ' ms'),
      attacked: figure(attackedServer.delayMax, ' ms'),
      ratio: ratio(idleServer.delayMax, attackedServer.delayMax),
      target: '',
    },
    {
      figure: 'requests served',
      idle: idle.length,
      attacked: attacked.length,
      ratio: ratio(idle.length, attacked.length),
      target: '',
    },
  ])
  printTable(
    'Attackers (each reconnects as soon as it is closed)',
    results.map((result) => ({
      'client': result.kind,
      'connections': result.connections,
      'messages sent': result.sent,
      'close codes': Object.entries(result.closes)
        .map(([code, count]) => `${code} ×${count}`)
        .join(', '),
    }))
  )
} finally {
  server.kill('SIGKILL')
  agent.destroy()
}

// what one writer's burst costs to merge: chunked against one call. One call
// on the 20,000 updates took 16.3 s, so the baseline runs on 5,000
function burst(count: number) {
  const doc = new Y.Doc()
  const updates: Uint8Array[] = []
  doc.on('update', (update: Uint8Array) => updates.push(update))
  for (let index = 0; index < count; index++) {
    doc.getText('content').insert(index, 'x')
  }
  return updates
}
function time(run: () => unknown) {
  const started = performance.now()
  run()
  return performance.now() - started
}
const small = burst(5000)
const large = burst(20_000)
printTable('Merging one burst of small updates', [
  {
    'updates': '5,000',
    'in chunks (ms)': figure(time(() => mergeBounded(small))),
    'one call (ms)': figure(time(() => Y.mergeUpdates(small))),
  },
  {
    'updates': '20,000',
    'in chunks (ms)': figure(time(() => mergeBounded(large))),
    'one call (ms)': 'not run (16.3 s in issue 9)',
  },
])
process.exit(0)
