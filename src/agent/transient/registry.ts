import { randomUUID } from 'node:crypto'
import { AgentNotImplementedException, AgentTransientThreadException } from '../errors.ts'
import type { AgentStore, ToolCallRow } from '../store/contract.ts'
import { TransientThread } from './thread.ts'

/** Bounds on what transient threads may hold in the memory of one process */
export const TRANSIENT_LIMITS = {
  /** Open transient threads of one actor */
  perActor: 10,
  /** Open transient threads of the process, all actors together */
  total: 1000,
  /** Messages of one transient thread (a turn beyond it answers 409) */
  messages: 200,
  /** A thread with no request for this long, and no run streaming, is forgotten */
  idleMs: 60 * 60 * 1000,
}

/**
 * The transient threads of this process, by id. They live in memory until
 * they are promoted, deleted, or left idle past `idleMs`.
 */
export class TransientThreads {
  #store: AgentStore
  #limits: typeof TRANSIENT_LIMITS
  #threads = new Map<string, TransientThread>()

  constructor(store: AgentStore, limits = TRANSIENT_LIMITS) {
    this.#store = store
    this.#limits = limits
  }

  /** A new transient thread of the actor, within the limits */
  open(actorRef: string, title: string | null): TransientThread {
    const store = this.#store
    if (!store.transient) {
      throw new AgentNotImplementedException(
        'The agent store does not keep transient threads: "transient" chats are not served'
      )
    }
    this.#sweep()
    const owned = [...this.#threads.values()].filter((item) => item.thread.actorRef === actorRef)
    if (owned.length >= this.#limits.perActor) {
      throw new AgentTransientThreadException(
        `This actor holds ${this.#limits.perActor} transient threads: promote or delete one first`
      )
    }
    if (this.#threads.size >= this.#limits.total) {
      throw new AgentTransientThreadException(
        'This server holds its maximum of transient threads: retry later, or chat without "transient"'
      )
    }
    const now = new Date()
    const thread = new TransientThread(
      store as AgentStore & { transient: NonNullable<AgentStore['transient']> },
      { id: randomUUID(), actorRef, title, defaultAgent: null, createdAt: now, updatedAt: now },
      this.#limits.messages
    )
    this.#threads.set(thread.thread.id, thread)
    return thread
  }

  /** An open transient thread, or undefined (never one, promoted, deleted or expired) */
  get(threadId: string): TransientThread | undefined {
    const thread = this.#threads.get(threadId)
    if (thread && this.#gone(thread)) {
      this.#threads.delete(threadId)
      return undefined
    }
    return thread
  }

  /** Forgets a thread once it is promoted or deleted */
  forget(threadId: string) {
    this.#threads.delete(threadId)
  }

  /** A run of a transient thread, or null */
  async findRun(runId: string) {
    for (const thread of this.#threads.values()) {
      const run = await thread.findRun(runId)
      if (run) return run
    }
    return null
  }

  /** Tool calls with this id in any transient thread, each with its thread */
  async findToolCalls(toolCallId: string) {
    const found: Array<{ thread: TransientThread; row: ToolCallRow }> = []
    for (const thread of this.#threads.values()) {
      for (const row of await thread.findToolCallsById(toolCallId)) found.push({ thread, row })
    }
    return found
  }

  #gone(thread: TransientThread) {
    if (thread.state === 'closed') return true
    return (
      thread.state === 'open' &&
      !thread.running &&
      Date.now() - thread.lastUsedAt > this.#limits.idleMs
    )
  }

  #sweep() {
    for (const [id, thread] of this.#threads) {
      if (this.#gone(thread)) this.#threads.delete(id)
    }
  }
}
