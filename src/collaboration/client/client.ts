import { DocSession, type DocSessionOptions } from './session.ts'
import type { CollabClientConfig } from './types.ts'

/**
 * The sessions of one app: one `DocSession` per document name, shared by
 * every component that opens it, evicted when destroyed.
 */
export class CollabClient {
  readonly config: CollabClientConfig
  #sessions = new Map<string, DocSession>()

  constructor(config: CollabClientConfig = {}) {
    this.config = config
  }

  /** The session of `docName`, created (not started) on first use */
  session(docName: string, options: Omit<DocSessionOptions, 'onDestroy'> = {}): DocSession {
    let session = this.#sessions.get(docName)
    if (!session || session.isDestroyed) {
      session = new DocSession(docName, this.config, {
        ...options,
        onDestroy: (destroyed) => {
          if (this.#sessions.get(docName) === destroyed) this.#sessions.delete(docName)
        },
      })
      this.#sessions.set(docName, session)
    }
    return session
  }

  /** Destroys every session */
  destroy() {
    for (const session of [...this.#sessions.values()]) session.destroy()
    this.#sessions.clear()
  }
}
