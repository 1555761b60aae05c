import * as Y from 'yjs'
import {
  ClusterMessage,
  type ClusterLink,
  type ClusterLinkListener,
  type ClusterMessageKind,
} from '../../cluster/redis_cluster.ts'
import { reportCollaborationError } from '../../observability.ts'
import { mergeBounded } from './room_storage.ts'
import { LOAD_ORIGIN, REMOTE_ORIGIN, type YjsRoom } from './room.ts'

/** y-protocols drops a client silent this long; a live one renews every 15 s */
const REMOTE_PRESENCE_MS = 30_000
const EXPIRE_EVERY_MS = 10_000
/** An empty Yjs update: nothing to send */
const EMPTY_UPDATE_BYTES = 2

function runFlush(binding: YjsClusterBinding) {
  binding.flush()
}

/**
 * Shares one open Yjs document with the other app instances that have it
 * open: this instance's updates go out once per event-loop turn (merged),
 * theirs are applied here without being stored again (their instance stores
 * them), presence is relayed both ways, and a document that opens (or a
 * Redis connection that comes back) asks the others for what it misses.
 */
export class YjsClusterBinding implements ClusterLinkListener {
  #pending: Uint8Array[] = []
  #flushScheduled = false
  #expiry: NodeJS.Timeout

  constructor(
    readonly room: YjsRoom,
    readonly link: ClusterLink
  ) {
    room.awareness.tracksLocal = true
    room.doc.on('update', this.#onUpdate)
    room.onAwarenessBroadcast = this.#publishAwareness
    this.#expiry = setInterval(
      () => room.expireRemoteAwareness(REMOTE_PRESENCE_MS),
      EXPIRE_EVERY_MS
    ).unref()
    link.attach(this)
    this.resync()
  }

  #onUpdate = (update: Uint8Array, origin: unknown) => {
    if (origin === REMOTE_ORIGIN || origin === LOAD_ORIGIN) {
      return
    }
    this.#pending.push(update)
    if (!this.#flushScheduled) {
      this.#flushScheduled = true
      setImmediate(runFlush, this)
    }
  }

  flush() {
    this.#flushScheduled = false
    const updates = this.#pending
    this.#pending = []
    if (updates.length) {
      this.link.publish(
        ClusterMessage.update,
        updates.length === 1 ? updates[0] : mergeBounded(updates)
      )
    }
  }

  #publishAwareness = () => {
    const update = this.room.awareness.takeLocalOutgoing()
    if (update) {
      this.link.publish(ClusterMessage.awareness, update)
    }
  }

  receive(kind: ClusterMessageKind, payload: Uint8Array) {
    try {
      if (kind === ClusterMessage.update) {
        Y.applyUpdate(this.room.doc, payload, REMOTE_ORIGIN)
      } else if (kind === ClusterMessage.awareness) {
        this.room.applyRemoteAwareness(payload)
      } else if (kind === ClusterMessage.syncRequest) {
        const missing = Y.encodeStateAsUpdate(this.room.doc, payload)
        if (missing.byteLength > EMPTY_UPDATE_BYTES) {
          this.link.publish(ClusterMessage.update, missing)
        }
        // the instance that asked has not seen this one's presence yet
        const presence = this.room.awareness.localSnapshot()
        if (presence) {
          this.link.publish(ClusterMessage.awareness, presence)
        }
      }
    } catch (error) {
      reportCollaborationError({
        scope: 'storage',
        operation: 'cluster.receive',
        docName: this.room.name,
        error,
      })
    }
  }

  /** Asks the other instances for every update this document lacks */
  resync() {
    this.link.publish(ClusterMessage.syncRequest, Y.encodeStateVector(this.room.doc))
  }

  close() {
    this.flush()
    clearInterval(this.#expiry)
    this.room.doc.off('update', this.#onUpdate)
    this.room.onAwarenessBroadcast = undefined
    return this.link.close()
  }
}
