import { randomUUID } from 'node:crypto'
import debug from './debug.ts'
import { AgentInvalidRequestException, AgentNothingToRegenerateException } from './errors.ts'
import type { ChatRequest } from './manager.ts'
import type { ModelMessage } from './model/port.ts'
import { historyOf, userMessageOf } from './prompt.ts'
import type {
  AgentStore,
  MessageAttachment,
  ThreadRow,
  ThreadStore,
  TurnStart,
} from './store/contract.ts'
import type { TransientThreads } from './transient/registry.ts'
import type { AgentActor } from './types.ts'

/** A turn's thread, where its rows go, and when they are stored */
export interface StartedTurn {
  thread: ThreadRow
  store: ThreadStore
  /** The conversation the model is sent, when known before the turn's rows are stored */
  history?: ModelMessage[]
  /**
   * Settles once the turn's rows are stored: until then the run writes
   * nothing and nobody else learns of it. Rejects when they could not be.
   */
  stored: Promise<void>
}

/** The `stored` of a turn whose rows were written before it started */
export const STORED = Promise.resolve()

/**
 * What a turn writes before anyone reads it: the thread when new, the run
 * and the question (or, on a regenerate, the truncated thread and the run).
 *
 * A stored thread's plain turn goes through the store's `startTurn` when it
 * has one: one transaction, so a failure leaves no thread or run without its
 * question. It is not waited for here: the history is known without it (a
 * stored thread's messages, read first, then the question), so the model
 * call goes out while an asynchronous driver commits, and `stored` says when
 * the rows are there.
 */
export async function startTurn(
  stores: { store: AgentStore; transient: TransientThreads },
  actor: AgentActor,
  request: ChatRequest,
  existing: ThreadRow | null,
  run: { id: string; agentName: string },
  attachments: MessageAttachment[] | undefined
): Promise<StartedTurn> {
  const { store, transient } = stores
  const inStore = existing ? !transient.get(existing.id) : !request.transient
  if (inStore && !request.regenerate && store.startTurn) {
    const now = new Date()
    const thread: ThreadRow = existing ?? {
      id: randomUUID(),
      actorRef: actor.id,
      title: titleOf(request.message!),
      defaultAgent: null,
      createdAt: now,
      updatedAt: now,
    }
    const earlier = existing ? historyOf(await store.listMessages(existing.id)) : []
    const turn: TurnStart = {
      thread,
      newThread: !existing,
      run: { id: run.id, actorRef: actor.id, agentName: run.agentName },
      question: { content: request.message!, attachments },
    }
    const stored = store.startTurn(turn)
    // handled by the caller, which awaits it once the run has started
    stored.catch(() => {})
    const question = userMessageOf(request.message!, attachments?.length ? attachments : null)
    return { thread, store, history: [...earlier, question], stored }
  }
  const { thread, store: threadStore } = existing
    ? { thread: existing, store: transient.get(existing.id) ?? store }
    : await newThread(stores, actor, request)
  const row = { id: run.id, threadId: thread.id, actorRef: actor.id, agentName: run.agentName }
  if (request.regenerate) {
    await truncateForRegenerate(threadStore, thread, request.message)
    await threadStore.createRun(row)
  } else {
    await threadStore.createRun(row)
    await threadStore.appendMessage({
      threadId: thread.id,
      runId: run.id,
      role: 'user',
      content: request.message!,
      attachments,
    })
  }
  return { thread, store: threadStore, stored: STORED }
}

/** A new thread's title: the question's first 80 characters on one line */
function titleOf(message: string) {
  return message.replace(/\s+/g, ' ').trim().slice(0, 80) || null
}

/** The thread of a chat that names none: stored, or transient when asked */
async function newThread(
  stores: { store: AgentStore; transient: TransientThreads },
  actor: AgentActor,
  request: ChatRequest
): Promise<{ thread: ThreadRow; store: ThreadStore }> {
  const title = titleOf(request.message!)
  if (request.transient) {
    const opened = stores.transient.open(actor.id, title)
    return { thread: opened.thread, store: opened }
  }
  const thread = await stores.store.createThread({ actorRef: actor.id, title })
  return { thread, store: stores.store }
}

/**
 * Drops everything after the thread's last user message, which the new run
 * answers. A `message` sent along must be that question: a client never
 * believes a new question was answered when the stored one was.
 */
async function truncateForRegenerate(store: ThreadStore, thread: ThreadRow, message?: string) {
  const history = await store.listMessages(thread.id)
  const question = history.findLast((row) => row.role === 'user')
  if (!question) throw new AgentNothingToRegenerateException()
  if (message !== undefined && message !== question.content) {
    throw new AgentInvalidRequestException(
      '"message" of a regenerate must be the thread\'s last user message, or be left out',
      'message'
    )
  }
  const firstDropped = history.find((row) => row.id > question.id)
  if (firstDropped) await store.truncateFrom(thread.id, firstDropped.id)
  debug('thread %s: regenerating after message %d', thread.id, question.id)
}
