/**
 * The agent gateway's routes as the page calls them: JSON helpers, and a
 * reader of the server-sent events `POST /agent/chat` answers with.
 */

/** The governance API's prefix (`dashboard.path` in config/agent.ts) */
export const GOVERNANCE = '/ai-gateway/api'

export interface ThreadSummary {
  id: string
  title: string | null
  updatedAt: string | null
}

export interface ThreadMessage {
  id: number
  runId: string | null
  role: 'user' | 'assistant' | 'tool'
  content: string
  toolCalls?: Array<{ toolCallId: string; toolName: string; input: unknown }>
  toolResults?: Array<{ toolCallId: string; toolName: string; output: unknown }>
}

export interface ThreadDetail extends ThreadSummary {
  messages: ThreadMessage[]
}

/** One frame of a run's stream */
export interface StreamFrame {
  event: string
  data: any
}

/** Fetches JSON; a non-2xx answer throws with the gateway's error message */
export async function json<T>(url: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(url, {
    ...init,
    headers: { 'accept': 'application/json', 'content-type': 'application/json', ...init.headers },
  })
  if (!response.ok) {
    const body = await response.json().catch(() => null)
    throw new Error(body?.errors?.[0]?.message ?? `${url} answered ${response.status}`)
  }
  return response.status === 204 ? (undefined as T) : ((await response.json()) as T)
}

/** POSTs a JSON body */
export function post<T>(url: string, body: unknown = {}) {
  return json<T>(url, { method: 'POST', body: JSON.stringify(body) })
}

/** Parses one SSE block (`event:`, `data:` lines); comments and ids are skipped */
function parseBlock(block: string): StreamFrame | null {
  let event = 'message'
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim()
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
  }
  if (!data.length) return null
  try {
    return { event, data: JSON.parse(data.join('\n')) }
  } catch {
    return null
  }
}

/**
 * Starts a turn (`POST /agent/chat`) and calls `onFrame` for each frame
 * until the stream ends.
 */
export async function streamChat(body: Record<string, unknown>, onFrame: (f: StreamFrame) => void) {
  const response = await fetch('/agent/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept': 'text/event-stream' },
    body: JSON.stringify(body),
  })
  if (!response.ok || !response.body) {
    const error = await response.json().catch(() => null)
    throw new Error(error?.errors?.[0]?.message ?? `The chat answered ${response.status}`)
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value.replace(/\r\n/g, '\n')
    let end
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = parseBlock(buffer.slice(0, end))
      buffer = buffer.slice(end + 2)
      if (frame) onFrame(frame)
    }
  }
}
