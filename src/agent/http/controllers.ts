import type { HttpContext } from '@adonisjs/core/http'
import {
  AgentInvalidRequestException,
  AgentNotFoundException,
  AgentReplayGoneException,
  AgentTransientThreadException,
} from '../errors.ts'
import { attachmentIdsOf, deleteThreadAttachments } from '../attachments/prune.ts'
import type { AgentManager } from '../manager.ts'
import { dayIn } from '../quota/day.ts'
import type { RunRow, ThreadRow } from '../store/contract.ts'
import { formatFrame, streamRunLog } from './sse.ts'
import {
  parseChatRequest,
  parseDecision,
  parseId,
  parseMessageId,
  parseResumePoint,
  parseThreadPatch,
  parseThreadsPage,
} from './requests.ts'

async function manager(ctx: HttpContext): Promise<AgentManager> {
  return ctx.containerResolver.make('atrium.agent')
}

function summary(thread: ThreadRow) {
  return {
    id: thread.id,
    title: thread.title,
    defaultAgent: thread.defaultAgent,
    createdAt: thread.createdAt?.toISOString() ?? null,
    updatedAt: thread.updatedAt?.toISOString() ?? null,
  }
}

/** The closing frame of a run this process no longer (or never) holds frames of */
function terminalFrame(run: RunRow) {
  switch (run.status) {
    case 'done':
      return formatFrame({ event: 'done', data: {} })
    case 'aborted':
      return formatFrame({ event: 'done', data: { aborted: true } })
    case 'failed':
      return formatFrame({
        event: 'error',
        data: { code: run.errorCode ?? 'run_failed', message: 'The run failed' },
      })
    default:
      return formatFrame({
        event: 'error',
        data: { code: 'run_failed', message: 'The run is not reachable from this server' },
      })
  }
}

/**
 * `POST /agent/chat`: starts a turn and streams its frames. The SSE stream
 * only reads the run's event log.
 */
export async function chat(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const request = parseChatRequest(ctx.request.body(), agents.config)
  const { runId, threadId, log } = await agents.startChat(actor, request)
  await streamRunLog(ctx, log, {
    after: 0,
    heartbeatMs: agents.config.sse.heartbeatMs,
    headers: { 'X-Agent-Run-Id': runId, 'X-Agent-Thread-Id': threadId },
  })
}

/**
 * `GET /agent/chat/:runId/stream`: reconnects to a run. Replays exactly the
 * frames after `Last-Event-ID` (or `?after=`), then tails; a finished run
 * closes at once.
 */
export async function resume(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const runId = parseId(ctx.params.runId, 'run')
  const after = parseResumePoint(ctx.request.header('last-event-id'), ctx.request.qs().after)
  const { log, run } = await agents.runLog(actor, runId)
  if (log && after < log.firstKept - 1) {
    throw new AgentReplayGoneException(log.firstKept)
  }
  // The thread is not re-resolved on a resume: the meta frame carries the run only
  const meta = formatFrame({ event: 'meta', data: { runId } })
  await streamRunLog(ctx, log, {
    after,
    heartbeatMs: agents.config.sse.heartbeatMs,
    headers: { 'X-Agent-Run-Id': runId },
    preamble: log ? meta : meta + terminalFrame(run),
    skip: (frame) => frame.event === 'meta',
  })
}

/** `POST /agent/chat/:runId/cancel` */
export async function cancel(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  return agents.cancel(actor, parseId(ctx.params.runId, 'run'))
}

/** `GET /agent/agents` */
export async function catalog(ctx: HttpContext) {
  const agents = await manager(ctx)
  await agents.actor(ctx)
  return agents.catalog()
}

/** `GET /agent/threads`: the newest first, a page at a time (`limit`, `before`) */
export async function listThreads(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const threads = await agents.config.store.listThreads(
    actor.id,
    parseThreadsPage(ctx.request.qs())
  )
  if (!threads) {
    throw new AgentInvalidRequestException(
      '"before" must be the id of one of your threads',
      'before'
    )
  }
  return threads.map(summary)
}

/** `GET /agent/threads/:id` */
export async function showThread(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const thread = await agents.ownedThread(actor, parseId(ctx.params.id, 'thread'))
  const messages = await agents.storeOf(thread).listMessages(thread.id)
  return {
    ...summary(thread),
    ...(agents.isTransient(thread) ? { transient: true } : {}),
    messages: messages.map((message) => ({
      id: message.id,
      runId: message.runId,
      role: message.role,
      content: message.content,
      ...(message.toolCalls ? { toolCalls: message.toolCalls } : {}),
      ...(message.toolResults ? { toolResults: message.toolResults } : {}),
      ...(message.followUps ? { followUps: message.followUps } : {}),
      ...(message.attachments ? { attachments: message.attachments } : {}),
      createdAt: message.createdAt?.toISOString() ?? null,
    })),
  }
}

/** `PATCH /agent/threads/:id` */
export async function updateThread(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const thread = await agents.ownedThread(actor, parseId(ctx.params.id, 'thread'))
  const patch = parseThreadPatch(
    ctx.request.body(),
    agents.config.agents.map((agent) => agent.name)
  )
  await agents.storeOf(thread).updateThread(thread.id, patch)
  return { ok: true }
}

/** `DELETE /agent/threads/:id` (soft delete) */
export async function deleteThread(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const thread = await agents.ownedThread(actor, parseId(ctx.params.id, 'thread'))
  const threadStore = agents.storeOf(thread)
  const { staging } = agents.config.attachments
  // Read before the delete, while the thread is still the actor's
  const attachmentIds = staging?.delete
    ? attachmentIdsOf(await threadStore.listMessages(thread.id))
    : []
  await threadStore.softDeleteThread(thread.id)
  await deleteThreadAttachments(staging, agents.config.store, attachmentIds)
  return { ok: true }
}

/** `POST /agent/threads/:id/fork-from/:messageId`: a new thread branched at the message */
export async function forkThread(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const thread = await agents.ownedThread(actor, parseId(ctx.params.id, 'thread'))
  if (agents.isTransient(thread)) {
    throw new AgentTransientThreadException('Promote this transient thread before forking it')
  }
  const forked = await agents.config.store.forkFrom(thread, parseMessageId(ctx.params.messageId))
  if (!forked) throw new AgentNotFoundException('message')
  return summary(forked)
}

/**
 * `DELETE /agent/threads/:id/from/:messageId`: the message and every later
 * one, and the attachment files only they referenced
 */
export async function truncateThread(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const thread = await agents.ownedThread(actor, parseId(ctx.params.id, 'thread'))
  const threadStore = agents.storeOf(thread)
  const messageId = parseMessageId(ctx.params.messageId)
  const { staging } = agents.config.attachments
  // Read before the truncate; a message kept in this thread may carry the same file
  const history = staging?.delete ? await threadStore.listMessages(thread.id) : []
  const kept = new Set(attachmentIdsOf(history.filter((message) => message.id < messageId)))
  const dropped = attachmentIdsOf(history.filter((message) => message.id >= messageId))
  const truncated = await threadStore.truncateFrom(thread.id, messageId)
  if (!truncated) throw new AgentNotFoundException('message')
  await deleteThreadAttachments(
    staging,
    agents.config.store,
    [...new Set(dropped)].filter((id) => !kept.has(id))
  )
  return { ok: true }
}

/** `POST /agent/threads/:id/promote`: writes a transient thread with everything it holds */
export async function promoteThread(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  return agents.promote(actor, parseId(ctx.params.id, 'thread'))
}

/** `POST /agent/tool-call/approve` */
export async function approveToolCall(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const { toolCallId } = parseDecision(ctx.request.body(), false)
  return agents.decide(actor, toolCallId, true)
}

/** `POST /agent/tool-call/reject` */
export async function rejectToolCall(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const { toolCallId, reason } = parseDecision(ctx.request.body(), true)
  return agents.decide(actor, toolCallId, false, reason)
}

/** `GET /agent/quota/today`: only `usedTokens` goes over HTTP */
export async function quotaToday(ctx: HttpContext) {
  const agents = await manager(ctx)
  const actor = await agents.actor(ctx)
  const quota = agents.config.quota
  if (!quota) return { usedTokens: 0 }
  return { usedTokens: await quota.store.used(actor.id, dayIn(agents.config.quotaTimeZone)) }
}
