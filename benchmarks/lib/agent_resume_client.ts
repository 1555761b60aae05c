/**
 * The reconnecting reader of benchmarks/agent/resume.ts, in a process of its
 * own so the time to the first replayed frame is what a remote client sees,
 * not the time the gateway's process takes to free its event loop. Asked
 * over IPC to resume a run after `lastEventId`, it answers the frames read and
 * the milliseconds to the first and to the last.
 */
import { performance } from 'node:perf_hooks'
import { SseReader } from '../../tests/sse_client.ts'

interface Job {
  url: string
  runId: string
  lastEventId: string
}

process.on('message', async ({ url, runId, lastEventId }: Job) => {
  try {
    const start = performance.now()
    const response = await fetch(`${url}/agent/chat/${runId}/stream`, {
      headers: { 'x-actor-id': 'bench', 'last-event-id': lastEventId },
    })
    const replay = new SseReader(response)
    const first = await replay.next()
    const firstMs = performance.now() - start
    const frames = [first!, ...(await replay.rest())]
    process.send!({ frames, firstMs, allMs: performance.now() - start })
  } catch (error) {
    process.send!({ error: (error as Error).message })
  }
})
process.send!({ ready: true })
