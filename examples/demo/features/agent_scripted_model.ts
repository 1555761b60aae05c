import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { scriptReply, type ScriptedReply } from './agent_script.ts'

/** The model id the scripted server reports, and the key of its demo price */
export const SCRIPTED_MODEL_ID = 'demo-scripted'

/** Larger requests are refused: the longest thread the demo keeps fits well below */
const MAX_BODY_BYTES = 4 * 1024 * 1024
/** Between deltas, so a person sees the answer stream and has time to press Cancel */
const DELTA_INTERVAL_MS = 30

/** A rough token count (4 characters a token), so the spend view has figures */
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

/**
 * The demo's default model: a server on a loopback port that speaks the
 * OpenAI chat-completions SSE wire format and answers from a script
 * (features/agent_script.ts), so the /agent page runs without an API key.
 * `@ai-sdk/openai-compatible` talks to it as to any OpenAI-compatible server.
 */
export class ScriptedModelServer {
  #server?: Server
  #started?: Promise<string>

  /** Starts once on 127.0.0.1 and a free port; resolves to the base URL (`…/v1`) */
  start(): Promise<string> {
    this.#started ??= new Promise((resolve, reject) => {
      const server = createServer((request, response) => {
        request.on('error', () => response.destroy())
        response.on('error', () => {})
        this.#handle(request, response).catch(() => response.destroy())
      })
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        this.#server = server
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`)
      })
    })
    return this.#started
  }

  /** Stops listening and drops open streams; a server never started has nothing to close */
  async close() {
    const server = this.#server
    if (!server) return
    this.#server = undefined
    this.#started = undefined
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  async #handle(request: IncomingMessage, response: ServerResponse) {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'Only POST /v1/chat/completions' } }))
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of request) {
      size += (chunk as Buffer).length
      if (size > MAX_BODY_BYTES) {
        response.writeHead(413, { 'content-type': 'application/json', 'connection': 'close' })
        response.end(JSON.stringify({ error: { message: 'Request too large' } }))
        return
      }
      chunks.push(chunk as Buffer)
    }
    let body: any
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      body = null
    }
    if (!body || typeof body !== 'object') {
      response.writeHead(400, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'Expected a JSON body' } }))
      return
    }
    await this.#stream(scriptReply(body), body, response)
  }

  /** Writes the reply as chat-completion chunks; stops when the client goes away */
  async #stream(reply: ScriptedReply, body: any, response: ServerResponse) {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    const base = { id: `chatcmpl-${randomUUID()}`, object: 'chat.completion.chunk', created: 0 }
    const send = (choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}) =>
      response.write(
        `data: ${JSON.stringify({
          ...base,
          model: SCRIPTED_MODEL_ID,
          choices: choice ? [{ index: 0, ...choice }] : [],
          ...extra,
        })}\n\n`
      )
    send({ delta: { role: 'assistant', content: '' }, finish_reason: null })
    for (const word of reply.text.match(/\S+\s*/g) ?? []) {
      if (response.destroyed) return
      send({ delta: { content: word }, finish_reason: null })
      await sleep(DELTA_INTERVAL_MS)
    }
    if (response.destroyed) return
    let output = reply.text
    if (reply.toolCall) {
      const args = JSON.stringify(reply.toolCall.input)
      output += args
      const call = { id: `call_${randomUUID()}`, type: 'function' }
      send({
        delta: {
          tool_calls: [
            { index: 0, ...call, function: { name: reply.toolCall.name, arguments: args } },
          ],
        },
        finish_reason: null,
      })
    }
    send({ delta: {}, finish_reason: reply.toolCall ? 'tool_calls' : 'stop' })
    if (body.stream_options?.include_usage) {
      const prompt = tokens(JSON.stringify(body.messages ?? []))
      const completion = tokens(output)
      send(null, {
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
        },
      })
    }
    response.end('data: [DONE]\n\n')
  }
}

/** The one scripted server of the demo process, started when config/agent.ts selects it */
export const scriptedModel = new ScriptedModelServer()
