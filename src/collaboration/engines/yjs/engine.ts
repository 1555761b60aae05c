import * as Y from 'yjs'
import type { WebSocket } from 'ws'
import debug from '../../debug.ts'
import { reportCollaborationError } from '../../observability.ts'
import { CLOSE_CODES } from '../../server/close_codes.ts'
import { guardOf } from '../../server/connection.ts'
import type { CollabEngine, CollabEngineHost, CollabSession } from '../engine.ts'
import type { LiveDocumentResult } from '../../types.ts'
import { diffStrings, docFromState, flatten, replaceDocContent, textOfDoc } from './content.ts'
import { LOAD_ORIGIN, YjsRoom } from './room.ts'
import { YjsClusterBinding } from './cluster_binding.ts'

/** Origin of a version restore */
const RESTORE_ORIGIN = Symbol('atrium:collab:restore')

/**
 * The Yjs engine: documents served with the y-websocket protocol
 * (y-protocols sync and awareness), one frame per batch of updates.
 */
export class YjsEngine implements CollabEngine {
  readonly name = 'yjs' as const
  #host: CollabEngineHost
  #rooms = new Map<string, Promise<YjsRoom>>()
  #open = new Map<string, YjsRoom>()
  #closing = false

  constructor(host: CollabEngineHost) {
    this.#host = host
  }

  async #load(docName: string): Promise<YjsRoom> {
    // subscribed before the load, so no other instance's update falls between
    const link = await this.#host.cluster?.open(docName)
    try {
      const room = await this.#loadRoom(docName)
      if (link) {
        room.cluster = new YjsClusterBinding(room, link)
      }
      return room
    } catch (error) {
      await link?.close()
      throw error
    }
  }

  async #loadRoom(docName: string): Promise<YjsRoom> {
    const doc = new Y.Doc()
    const stored = await this.#host.storage.loadDocument(docName)
    let initialBytes = 0
    if (stored) {
      initialBytes =
        stored.state.byteLength +
        (stored.updates ?? []).reduce((sum, update) => sum + update.byteLength, 0)
      doc.transact(() => {
        if (stored.state.byteLength) {
          Y.applyUpdate(doc, stored.state)
        }
        for (const update of stored.updates ?? []) {
          Y.applyUpdate(doc, update)
        }
      }, LOAD_ORIGIN)
    } else {
      let seeded = false
      try {
        const seed = await this.#host.seed(docName)
        if (seed instanceof Uint8Array) {
          if (seed.byteLength) {
            Y.applyUpdate(doc, seed, LOAD_ORIGIN)
            seeded = true
          }
        } else if (seed instanceof Y.Doc) {
          Y.applyUpdate(doc, Y.encodeStateAsUpdate(seed), LOAD_ORIGIN)
          seeded = true
        }
      } catch (error) {
        reportCollaborationError({ scope: 'storage', operation: 'load', docName, error })
      }
      if (seeded) {
        // persisted before anyone is served, so the seed runs once per document
        try {
          const state = Y.encodeStateAsUpdate(doc)
          initialBytes = state.byteLength
          await this.#host.storage.saveDocument(docName, state)
        } catch (error) {
          reportCollaborationError({ scope: 'storage', operation: 'saveDocument', docName, error })
        }
      }
    }
    const room = new YjsRoom(docName, doc, this, this.#host, initialBytes)
    this.#open.set(docName, room)
    debug('loaded "%s"', docName)
    return room
  }

  /**
   * The room of a document, loading it once however many callers ask at once.
   */
  async acquire(docName: string): Promise<YjsRoom> {
    for (;;) {
      let pending = this.#rooms.get(docName)
      if (!pending) {
        pending = this.#load(docName)
        this.#rooms.set(docName, pending)
        pending.catch(() => this.#rooms.delete(docName))
      }
      const room = await pending
      if (!room.unloading) {
        return room
      }
      await room.unloading
    }
  }

  /**
   * Unloads a room nobody uses any more, after its final flush.
   */
  release(room: YjsRoom) {
    if (!room.idle || room.unloading || this.#closing) {
      return
    }
    room.unloading = (async () => {
      try {
        await room.flush()
      } catch {
        // reported by the storage; the room stays loaded with its changes,
        // retried with backoff, and unloads after the first successful save
        room.unloading = undefined
        return
      }
      if (!room.idle) {
        room.unloading = undefined
        return
      }
      this.#rooms.delete(room.name)
      this.#open.delete(room.name)
      room.destroy()
      debug('unloaded "%s"', room.name)
    })()
  }

  async #withRoom<T>(docName: string, run: (room: YjsRoom) => T | Promise<T>): Promise<T> {
    const room = await this.acquire(docName)
    room.holds++
    try {
      return await run(room)
    } finally {
      room.holds--
      this.release(room)
    }
  }

  handleConnection(socket: WebSocket, session: CollabSession) {
    this.acquire(session.docName).then(
      (room) => {
        if (socket.readyState !== 1 || guardOf(socket).closed) {
          this.release(room)
          return
        }
        room.join(socket, session)
      },
      (error) => {
        reportCollaborationError({
          scope: 'storage',
          operation: 'loadDocument',
          docName: session.docName,
          error,
        })
        guardOf(socket).close(CLOSE_CODES.internalError, 'document could not be loaded')
      }
    )
  }

  hasLiveDocument(docName: string) {
    return this.#open.has(docName)
  }

  async withLiveDocument<T>(
    docName: string,
    run: (doc: Y.Doc) => T | Promise<T>
  ): Promise<LiveDocumentResult<T>> {
    const room = this.#open.get(docName)
    if (!room || room.unloading) {
      return { live: false, reason: 'not-loaded' }
    }
    room.holds++
    try {
      return { live: true, value: await run(room.doc) }
    } finally {
      room.holds--
      this.release(room)
    }
  }

  async getDocumentState(docName: string): Promise<Uint8Array> {
    // a room being unloaded still holds the whole document until its final
    // save succeeds; storage may not have all of it yet
    const room = this.#open.get(docName)
    if (room) {
      return Y.encodeStateAsUpdate(room.doc)
    }
    const stored = await this.#host.storage.loadDocument(docName)
    if (!stored) {
      return Y.encodeStateAsUpdate(new Y.Doc())
    }
    const parts = [stored.state, ...(stored.updates ?? [])].filter((part) => part.byteLength)
    return parts.length ? Y.mergeUpdates(parts) : Y.encodeStateAsUpdate(new Y.Doc())
  }

  textOf(state: Uint8Array) {
    const doc = docFromState(state)
    try {
      return textOfDoc(doc)
    } finally {
      doc.destroy()
    }
  }

  async applyState(docName: string, state: Uint8Array) {
    await this.#withRoom(docName, async (room) => {
      Y.applyUpdate(room.doc, state)
      await room.flush()
    })
  }

  async replaceContent(docName: string, state: Uint8Array) {
    const target = docFromState(state)
    try {
      await this.#withRoom(docName, async (room) => {
        replaceDocContent(room.doc, target, RESTORE_ORIGIN)
        await room.flush()
      })
    } finally {
      target.destroy()
    }
  }

  diff(a: Uint8Array, b: Uint8Array) {
    const left = docFromState(a)
    const right = docFromState(b)
    try {
      return diffStrings(flatten(left), flatten(right))
    } finally {
      left.destroy()
      right.destroy()
    }
  }

  openDocuments() {
    return [...this.#open.keys()]
  }

  /**
   * Awareness entries of a document (for tests and the presence roster).
   */
  connectionCount(docName: string) {
    return this.#open.get(docName)?.connections.size ?? 0
  }

  /**
   * Flushes every open document; rejects with the first failure once every
   * flush has settled (each failure is reported and retried).
   */
  async flushAll() {
    const results = await Promise.allSettled([...this.#open.values()].map((room) => room.flush()))
    const failed = results.find((result) => result.status === 'rejected')
    if (failed) {
      throw failed.reason
    }
  }

  /**
   * Flushes, closes every socket and unloads every document. Rejects, after
   * all of that, when a document could not be stored.
   */
  async close() {
    this.#closing = true
    const rooms = [...this.#open.values()]
    let failure: unknown
    try {
      await this.flushAll()
    } catch (error) {
      failure = error
    }
    for (const room of rooms) {
      for (const connection of room.connections) {
        connection.guard.close(CLOSE_CODES.goingAway, 'server shutting down')
      }
      room.destroy()
    }
    this.#open.clear()
    this.#rooms.clear()
    if (failure) {
      throw failure
    }
  }
}
