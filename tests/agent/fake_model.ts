import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'

/** One scripted model reply */
export interface FakeReply {
  /** Text deltas, in order */
  text?: string[]
  /** Tool calls; `input` is sent as JSON argument fragments of `fragmentSize` characters */
  toolCalls?: Array<{ id: string; name: string; input: unknown }>
  fragmentSize?: number
  /**
   * Usage as the wire format spells it (OpenAI `usage`, Anthropic
   * `message_start` usage plus `outputTokens` for `message_delta`); null sends none.
   */
  usage?: Record<string, unknown> | null
  /** Paces the text deltas at this many a second, by the clock (a late timer catches up) */
  perSecond?: number
  /**
   * Sends, instead of each delta's text, the machine's monotonic clock in
   * nanoseconds when it was written: a reader in another process on the same
   * machine subtracts it from its own `process.hrtime.bigint()` (benchmarks).
   */
  stamp?: boolean
  /** Sends this many text deltas, then waits for `release()` */
  stallAfter?: number
  /** Sends this many text deltas, then destroys the connection */
  cutAfter?: number
  /** Answers this HTTP status with a JSON error body (`errorMessage`) instead of a stream */
  status?: number
  errorMessage?: string
  /** Headers of that error answer, such as `retry-after-ms` */
  headers?: Record<string, string>
}

/** A request the fake received: path and parsed JSON body */
export interface FakeRequest {
  path: string
  body: any
}

const DEFAULT_OPENAI_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
const DEFAULT_ANTHROPIC_USAGE = { input_tokens: 10, output_tokens: 1, outputTokens: 5 }

/**
 * A language model API on loopback that speaks OpenAI chat-completions SSE
 * (`POST /v1/chat/completions`) and Anthropic Messages SSE
 * (`POST /v1/messages`), with replies scripted per request. The real
 * `@ai-sdk/openai-compatible` and `@ai-sdk/anthropic` providers talk to it.
 */
export class FakeModelServer {
  requests: FakeRequest[] = []
  #replies: FakeReply[] = []
  #server: Server
  #releases: Array<() => void> = []
  #stallWaiters: Array<() => void> = []
  #stalled = 0
  url = ''

  constructor() {
    this.#server = createServer((request, response) => {
      request.on('error', () => {})
      response.on('error', () => {})
      this.#handle(request, response).catch(() => response.destroy())
    })
    // Node's 5 s default races the client's reuse of an idle socket on a loaded machine
    // ("other side closed"); model APIs keep connections open far longer
    this.#server.keepAliveTimeout = 60_000
  }

  /** Queues replies, answered in order; with none left the fake says "ok" */
  reply(...replies: FakeReply[]) {
    this.#replies.push(...replies)
    return this
  }

  /** Resumes every stalled reply */
  release() {
    const releases = this.#releases
    this.#releases = []
    for (const release of releases) release()
  }

  /** Resolves once `count` replies in total have reached their stall point */
  async stalled(count = 1) {
    while (this.#stalled < count) {
      await new Promise<void>((resolve) => this.#stallWaiters.push(resolve))
    }
  }

  async start() {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
    return this
  }

  async close() {
    this.release()
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  async #handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}')
    const path = request.url ?? ''
    this.requests.push({ path, body })
    const reply = this.#replies.shift() ?? { text: ['ok'] }
    if (reply.status !== undefined && reply.status !== 200) {
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
      response.end(
        JSON.stringify({
          error: { message: reply.errorMessage ?? 'fake failure', type: 'server_error' },
        })
      )
      return
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    if (path.endsWith('/chat/completions')) {
      await this.#openai(reply, body, response)
    } else if (path.endsWith('/messages')) {
      await this.#anthropic(reply, response)
    } else {
      response.destroy()
    }
  }

  /** Sends the text deltas, honouring the stall and cut points; false when cut */
  async #deltas(reply: FakeReply, response: ServerResponse, send: (text: string) => void) {
    const started = performance.now()
    for (const [index, text] of (reply.text ?? []).entries()) {
      if (reply.perSecond) {
        const wait = started + (index * 1000) / reply.perSecond - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        if (response.destroyed) return false
      }
      if (reply.cutAfter === index) {
        response.destroy()
        return false
      }
      if (reply.stallAfter === index) await this.#stall(response)
      send(reply.stamp ? String(process.hrtime.bigint()) : text)
    }
    if (reply.stallAfter === (reply.text ?? []).length) await this.#stall(response)
    if (reply.cutAfter === (reply.text ?? []).length) {
      response.destroy()
      return false
    }
    return true
  }

  async #stall(response: ServerResponse) {
    this.#stalled++
    for (const waiter of this.#stallWaiters.splice(0)) waiter()
    await new Promise<void>((resolve) => {
      this.#releases.push(resolve)
      response.on('close', resolve)
    })
  }

  async #openai(reply: FakeReply, body: any, response: ServerResponse) {
    const base = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: 1,
      model: body.model,
    }
    const chunk = (choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}) =>
      response.write(
        `data: ${JSON.stringify({ ...base, choices: choice ? [{ index: 0, ...choice }] : [], ...extra })}\n\n`
      )
    chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null })
    const sent = await this.#deltas(reply, response, (text) =>
      chunk({ delta: { content: text }, finish_reason: null })
    )
    if (!sent) return
    const size = reply.fragmentSize ?? 7
    for (const [index, call] of (reply.toolCalls ?? []).entries()) {
      chunk({
        delta: {
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
        finish_reason: null,
      })
      const args = JSON.stringify(call.input)
      for (let offset = 0; offset < args.length; offset += size) {
        chunk({
          delta: {
            tool_calls: [{ index, function: { arguments: args.slice(offset, offset + size) } }],
          },
          finish_reason: null,
        })
      }
    }
    chunk({ delta: {}, finish_reason: reply.toolCalls?.length ? 'tool_calls' : 'stop' })
    if (body.stream_options?.include_usage && reply.usage !== null) {
      chunk(null, { usage: reply.usage ?? DEFAULT_OPENAI_USAGE })
    }
    response.end('data: [DONE]\n\n')
  }

  async #anthropic(reply: FakeReply, response: ServerResponse) {
    const event = (type: string, data: Record<string, unknown>) =>
      response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
    const { outputTokens, ...startUsage } = (reply.usage ?? DEFAULT_ANTHROPIC_USAGE) as Record<
      string,
      unknown
    >
    event('message_start', {
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: 'claude-fake',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: reply.usage === null ? { input_tokens: 0, output_tokens: 0 } : startUsage,
      },
    })
    let block = 0
    if (reply.text?.length) {
      event('content_block_start', { index: block, content_block: { type: 'text', text: '' } })
      const sent = await this.#deltas(reply, response, (text) =>
        event('content_block_delta', { index: block, delta: { type: 'text_delta', text } })
      )
      if (!sent) return
      event('content_block_stop', { index: block })
      block++
    }
    const size = reply.fragmentSize ?? 7
    for (const call of reply.toolCalls ?? []) {
      event('content_block_start', {
        index: block,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      })
      const args = JSON.stringify(call.input)
      for (let offset = 0; offset < args.length; offset += size) {
        event('content_block_delta', {
          index: block,
          delta: { type: 'input_json_delta', partial_json: args.slice(offset, offset + size) },
        })
      }
      event('content_block_stop', { index: block })
      block++
    }
    event('message_delta', {
      delta: {
        stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn',
        stop_sequence: null,
      },
      usage: { output_tokens: reply.usage === null ? 0 : (outputTokens ?? 5) },
    })
    event('message_stop', {})
    response.end()
  }
}
