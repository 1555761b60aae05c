/**
 * The collaboration server under attack, in its own process so its memory
 * is measured alone: Atrium with the default limits, in-memory storage, and
 * a bystander route `GET /bystander`. Prints PORT=<n>; samples its RSS every
 * 20 ms and answers IPC `peak` with the highest sample since the last ask,
 * and its event-loop delay (p99, max) over the same time.
 */
import { createServer } from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import { normalizeConfig } from '../../../src/collaboration/define_config.ts'
import { CollaborationManager } from '../../../src/collaboration/manager.ts'
import { InMemoryCollaborationStorage } from '../../../src/collaboration/storage/memory.ts'

const manager = await CollaborationManager.create(
  normalizeConfig({
    tokenSecret: 'bench-secret',
    storage: new InMemoryCollaborationStorage(),
    authorize: (ctx: any) => ({
      canRead: true,
      canWrite: ctx.connection?.userId !== 'viewer',
      canComment: false,
    }),
  })
)
const server = createServer((request, response) => {
  if (request.url === '/bystander') {
    response.end(JSON.stringify({ ok: true, documents: manager.openDocuments().length }))
    return
  }
  response.statusCode = 404
  response.end()
})
manager.attach(server)

let peak = 0
// the server's own event-loop delay: what a blocking merge or decode costs,
// apart from the CPU the attackers take from the machine
const delay = monitorEventLoopDelay({ resolution: 5 })
delay.enable()
setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss())
}, 20).unref()

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT=${(server.address() as AddressInfo).port}\n`)
})

process.on('message', (message: any) => {
  if (message?.cmd === 'peak') {
    const rss = process.memoryUsage.rss()
    process.send!({
      id: message.id,
      peak: Math.max(peak, rss),
      rss,
      delayMax: delay.max / 1e6,
      delayP99: delay.percentile(99) / 1e6,
    })
    peak = rss
    delay.reset()
  }
})
