/**
 * The reader of benchmarks/agent/relay.ts, in a process of its own so the
 * gateway never shares its event loop with its clients. Asked over IPC to
 * open `streams` streams at once, through the gateway (`POST /agent/chat`,
 * read as a browser reads SSE) or straight through the AI SDK to the fake
 * model, it reads every delta, whose text is the monotonic clock of the
 * model's write (the fake's `stamp`), and answers per stream the delivery
 * delays and the delta rate. `{ streaming: true }` goes out once every stream
 * has delivered its first delta; only the deltas after that moment count in
 * the delays (the relay of flowing streams, not the queue of turns starting).
 */
import { performance } from 'node:perf_hooks'
import { streamText } from 'ai'
import { fakeModel } from './agent_app.ts'

type Job =
  | { kind: 'gateway'; url: string; streams: number }
  | { kind: 'direct'; modelUrl: string; streams: number }

interface StreamFigures {
  /** Milliseconds from the model's write of each delta to its arrival here */
  delays: number[]
  /** Deltas a second between the first and the last delta */
  rate: number
}

/** Reads one stream; `onDelta` gets each delta's stamp */
type Reader = (onDelta: (stamp: string) => void) => Promise<void>

async function readStream(
  read: Reader,
  firstDelta: () => void,
  counting: () => boolean
): Promise<StreamFigures> {
  const delays: number[] = []
  let deltas = 0
  let first = Number.NaN
  let last = Number.NaN
  await read((stamp) => {
    const now = process.hrtime.bigint()
    if (counting()) delays.push(Number(now - BigInt(stamp)) / 1e6)
    deltas++
    last = performance.now()
    if (Number.isNaN(first)) {
      first = last
      firstDelta()
    }
  })
  const rate = deltas > 1 ? ((deltas - 1) * 1000) / (last - first) : Number.NaN
  return { delays, rate }
}

function gatewayReader(url: string, actor: string): Reader {
  return async (onDelta) => {
    const response = await fetch(`${url}/agent/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-actor-id': actor },
      body: JSON.stringify({ message: 'stream' }),
    })
    if (response.status !== 200) throw new Error(`POST /agent/chat answered ${response.status}`)
    const decoder = new TextDecoder()
    let buffered = ''
    for await (const chunk of response.body!) {
      buffered += decoder.decode(chunk, { stream: true })
      let end = buffered.indexOf('\n\n')
      while (end !== -1) {
        const frame = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        end = buffered.indexOf('\n\n')
        const data = frame.split('\n').find((line) => line.startsWith('data: '))
        if (!data) continue
        if (frame.includes('event: error')) throw new Error(`run failed: ${data}`)
        const parsed = JSON.parse(data.slice(6))
        if (typeof parsed.delta === 'string') onDelta(parsed.delta)
      }
    }
  }
}

function directReader(modelUrl: string): Reader {
  const model = fakeModel(modelUrl)
  return async (onDelta) => {
    const result = streamText({ model, prompt: 'stream', maxRetries: 0 })
    for await (const part of result.stream) {
      if (part.type === 'text-delta') onDelta((part as { text: string }).text)
    }
  }
}

process.on('message', async (job: Job) => {
  try {
    let started = 0
    const firstDelta = () => {
      if (++started === job.streams) process.send!({ streaming: true })
    }
    const counting = () => started === job.streams
    const streams = await Promise.all(
      Array.from({ length: job.streams }, (_, index) =>
        readStream(
          job.kind === 'gateway'
            ? gatewayReader(job.url, `bench-${index}`)
            : directReader(job.modelUrl),
          firstDelta,
          counting
        )
      )
    )
    process.send!({ streams })
  } catch (error) {
    process.send!({ error: (error as Error).message })
  }
})
process.send!({ ready: true })
