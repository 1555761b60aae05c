import { parseAttachments } from '../attachments/requests.ts'
import type { ResolvedAttachments } from '../attachments/config.ts'
import { AgentInvalidRequestException, AgentNotFoundException } from '../errors.ts'
import type { ChatRequest } from '../manager.ts'
import type { ThreadPage } from '../store/contract.ts'
import { MAX_LIMIT, integer } from './dashboard_params.ts'

const ID = /^[a-zA-Z0-9-]{1,64}$/

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * PostgreSQL text cannot hold U+0000, so a stored NUL fails the write with a
 * 500: it is refused on every database alike, as a 400 naming the field.
 */
export function assertNoNul(value: string, field: string) {
  if (value.includes('\u0000')) {
    throw new AgentInvalidRequestException(`"${field}" must not contain a NUL character`, field)
  }
}

/**
 * Validates a `POST /agent/chat` body; every refusal is a 400 (413 for an
 * attachment over `maxBytes`) naming the field.
 */
export function parseChatRequest(
  body: unknown,
  limits: {
    maxMessageLength: number
    maxPageContextBytes: number
    attachments: ResolvedAttachments
  }
): ChatRequest {
  const { maxMessageLength, maxPageContextBytes } = limits
  if (!isObject(body)) {
    throw new AgentInvalidRequestException('Expected a JSON object body')
  }
  const { message, threadId, agent, regenerate, transient, pageContext } = body
  if (regenerate !== undefined && typeof regenerate !== 'boolean') {
    throw new AgentInvalidRequestException('"regenerate" must be a boolean', 'regenerate')
  }
  if (transient !== undefined && typeof transient !== 'boolean') {
    throw new AgentInvalidRequestException('"transient" must be a boolean', 'transient')
  }
  // A regenerate answers the thread's stored question: its text may be left out
  if (!(regenerate === true && message === undefined)) {
    if (typeof message !== 'string' || !message.trim()) {
      throw new AgentInvalidRequestException('"message" must be a non-empty string', 'message')
    }
    if (message.length > maxMessageLength) {
      throw new AgentInvalidRequestException(
        `"message" is longer than ${maxMessageLength} characters`,
        'message'
      )
    }
    assertNoNul(message, 'message')
  }
  if (threadId !== undefined && (typeof threadId !== 'string' || !ID.test(threadId))) {
    throw new AgentInvalidRequestException('"threadId" must be a thread id', 'threadId')
  }
  if (regenerate === true && threadId === undefined) {
    throw new AgentInvalidRequestException(
      '"regenerate" needs the "threadId" of the thread whose last answer is regenerated',
      'threadId'
    )
  }
  if (agent !== undefined && (typeof agent !== 'string' || agent.length > 100)) {
    throw new AgentInvalidRequestException('"agent" must be an agent name', 'agent')
  }
  if (pageContext !== undefined && pageContext !== null) {
    if (!isObject(pageContext)) {
      throw new AgentInvalidRequestException('"pageContext" must be a JSON object', 'pageContext')
    }
    if (Buffer.byteLength(JSON.stringify(pageContext)) > maxPageContextBytes) {
      throw new AgentInvalidRequestException(
        `"pageContext" is larger than ${maxPageContextBytes} bytes of JSON`,
        'pageContext'
      )
    }
  }
  const attachments = parseAttachments(body.attachments, limits.attachments, regenerate === true)
  return {
    message: message as string | undefined,
    threadId: threadId as string | undefined,
    agent: agent as string | undefined,
    regenerate: regenerate === true,
    transient: transient === true,
    pageContext: isObject(pageContext) ? pageContext : undefined,
    attachments,
  }
}

/** `PATCH /agent/threads/:id`: `defaultAgent` changes only when the key is present */
export function parseThreadPatch(body: unknown, agents: string[]) {
  if (!isObject(body)) {
    throw new AgentInvalidRequestException('Expected a JSON object body')
  }
  const patch: { title?: string; defaultAgent?: string | null } = {}
  if (body.title !== undefined) {
    if (typeof body.title !== 'string' || !body.title.trim() || body.title.length > 200) {
      throw new AgentInvalidRequestException('"title" must be 1 to 200 characters', 'title')
    }
    assertNoNul(body.title, 'title')
    patch.title = body.title.trim()
  }
  if ('defaultAgent' in body) {
    const value = body.defaultAgent
    if (value !== null && (typeof value !== 'string' || !agents.includes(value))) {
      throw new AgentInvalidRequestException(
        `"defaultAgent" must be null or one of ${agents.join(', ')}`,
        'defaultAgent'
      )
    }
    patch.defaultAgent = value as string | null
  }
  return patch
}

/** The sequence a resume starts after: `Last-Event-ID`, else `?after=`, else 0 */
export function parseResumePoint(header: string | undefined, query: unknown): number {
  const invalid = () =>
    new AgentInvalidRequestException(
      'Last-Event-ID (or ?after=, given once) must be a frame sequence number',
      header === undefined ? 'after' : 'Last-Event-ID'
    )
  // a repeated or bracketed ?after= is no resume point: replaying from 0 would pass it as one
  if (header === undefined && query !== undefined && typeof query !== 'string') throw invalid()
  const raw = header ?? (query as string | undefined)
  if (raw === undefined || raw === '') return 0
  if (!/^\d{1,15}$/.test(raw.trim())) throw invalid()
  return Number(raw.trim())
}

/** A route id that cannot be one of ours is unknown: 404 before the store is asked */
export function parseId(value: unknown, resource: 'thread' | 'run'): string {
  if (typeof value !== 'string' || !ID.test(value)) {
    throw new AgentNotFoundException(resource)
  }
  return value
}

/** Threads a page of `GET /agent/threads` holds unless `limit` says otherwise */
const THREADS_PAGE = 100

/** `GET /agent/threads` query: `limit` (100, at most 200) and `before`, a thread id */
export function parseThreadsPage(query: Record<string, unknown>): ThreadPage {
  const limit = integer(query.limit, 'limit', THREADS_PAGE, MAX_LIMIT)
  const before = query.before
  if (before === undefined || before === '') return { limit }
  if (typeof before !== 'string' || !ID.test(before)) {
    throw new AgentInvalidRequestException('"before" must be a thread id', 'before')
  }
  return { limit, before }
}

/** `POST /agent/tool-call/approve` and `/reject` bodies */
export function parseDecision(body: unknown, withReason: boolean) {
  if (!isObject(body)) {
    throw new AgentInvalidRequestException('Expected a JSON object body')
  }
  const { toolCallId, reason } = body
  if (typeof toolCallId !== 'string' || !toolCallId || toolCallId.length > 191) {
    throw new AgentInvalidRequestException('"toolCallId" must be a tool call id', 'toolCallId')
  }
  assertNoNul(toolCallId, 'toolCallId')
  if (withReason && reason !== undefined && (typeof reason !== 'string' || reason.length > 2000)) {
    throw new AgentInvalidRequestException(
      '"reason" must be a string of at most 2000 characters',
      'reason'
    )
  }
  if (withReason && typeof reason === 'string') assertNoNul(reason, 'reason')
  return { toolCallId, reason: withReason ? (reason as string | undefined) : undefined }
}

/** A message id in a route: digits only, else 404 */
export function parseMessageId(value: unknown): number {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) {
    throw new AgentNotFoundException('message')
  }
  return Number(value)
}
