/** A person's decision on a tool call */
export interface ApprovalDecision {
  approved: boolean
  reason?: string
}

/**
 * Runs waiting for a decision on one of their tool calls, by run and
 * tool-call id. The decision itself is the store's conditional update; this
 * only wakes the run that waits in this process.
 */
export class ApprovalWaiters {
  #waiting = new Map<string, (decision: ApprovalDecision) => void>()

  /** Resolves with the decision, or rejects when the run is cancelled */
  wait(runId: string, toolCallId: string, signal: AbortSignal): Promise<ApprovalDecision> {
    const key = `${runId}\u0000${toolCallId}`
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.delete(key)
        reject(signal.reason ?? new Error('aborted'))
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      this.#waiting.set(key, (decision) => {
        signal.removeEventListener('abort', onAbort)
        this.#waiting.delete(key)
        resolve(decision)
      })
    })
  }

  /** Wakes the waiting run; false when no run of this process waits for the call */
  resolve(runId: string, toolCallId: string, decision: ApprovalDecision) {
    const waiter = this.#waiting.get(`${runId}\u0000${toolCallId}`)
    waiter?.(decision)
    return waiter !== undefined
  }
}
