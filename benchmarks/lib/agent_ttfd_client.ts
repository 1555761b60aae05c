/**
 * The client side of benchmarks/agent/ttfd.ts, in a child process so that
 * what it measures is what a remote client sees: the gateway's process never
 * shares its event loop with the reader. Asked over IPC for one turn at a
 * time, it answers the milliseconds from its request to the first text delta.
 *
 * - `{ kind: 'gateway', url }`: `POST /agent/chat` read as a browser reads SSE;
 * - `{ kind: 'direct', modelUrl }`: AI SDK `streamText` straight to the fake model.
 */
import { performance } from 'node:perf_hooks'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { streamText } from 'ai'

type Turn = { kind: 'gateway'; url: string } | { kind: 'direct'; modelUrl: string }

async function gatewayTurn(url: string) {
  const start = performance.now()
  const response = await fetch(`${url}/agent/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-actor-id': 'bench' },
    body: JSON.stringify({ message: 'hi' }),
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let first = Number.NaN
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    if (Number.isNaN(first) && text.includes('"delta"')) first = performance.now() - start
  }
  return first
}

const models = new Map<string, ReturnType<ReturnType<typeof createOpenAICompatible>>>()

async function directTurn(modelUrl: string) {
  let model = models.get(modelUrl)
  if (!model) {
    model = createOpenAICompatible({
      name: 'fake',
      baseURL: `${modelUrl}/v1`,
      apiKey: 'test-key',
      includeUsage: true,
    })('fake-model')
    models.set(modelUrl, model)
  }
  const start = performance.now()
  const result = streamText({ model, prompt: 'hi', maxRetries: 0 })
  let first = Number.NaN
  for await (const part of result.stream) {
    if (part.type === 'text-delta' && Number.isNaN(first)) first = performance.now() - start
  }
  return first
}

process.on('message', async (turn: Turn) => {
  try {
    const ms =
      turn.kind === 'gateway' ? await gatewayTurn(turn.url) : await directTurn(turn.modelUrl)
    process.send!({ ms })
  } catch (error) {
    process.send!({ error: (error as Error).message })
  }
})
process.send!({ ready: true })
