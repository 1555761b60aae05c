import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import debug from '../debug.ts'
import { importOptional } from '../../shared/optional_import.ts'
import { reportCollaborationError } from '../observability.ts'

/**
 * What one instance tells the others about a document it has open. The
 * engine gives each kind its meaning; the cluster only carries bytes.
 */
export const ClusterMessage = {
  /** A document update that instance applied */
  update: 0,
  /** A presence (awareness) frame of that instance's clients */
  awareness: 1,
  /** "Send me what I miss": the payload is the sender's state vector */
  syncRequest: 2,
  /** An Automerge document's peer frame (hello, bye, sync, presence) */
  automerge: 3,
} as const

const LAST_KIND = ClusterMessage.automerge

export type ClusterMessageKind = (typeof ClusterMessage)[keyof typeof ClusterMessage]

const INSTANCE_ID_BYTES = 16
const HEADER_BYTES = INSTANCE_ID_BYTES + 1

/** What an engine attaches to the link of one open document */
export interface ClusterLinkListener {
  /** `from` is the sending instance's id */
  receive(kind: ClusterMessageKind, payload: Uint8Array, from: Buffer): void
  /** The link missed messages (Redis reconnected): ask the others again */
  resync(): void
}

/**
 * One open document's channel: messages published by this instance reach
 * every other instance that has the document open.
 */
export class ClusterLink {
  #listener?: ClusterLinkListener
  /** Messages that arrived before the document finished loading */
  #early: Array<[ClusterMessageKind, Uint8Array, Buffer]> | null = []

  constructor(
    readonly docName: string,
    readonly cluster: DocumentCluster
  ) {}

  /** Starts delivering, with whatever arrived while the document loaded */
  attach(listener: ClusterLinkListener) {
    this.#listener = listener
    const early = this.#early ?? []
    this.#early = null
    for (const [kind, payload, from] of early) {
      listener.receive(kind, payload, from)
    }
  }

  deliver(kind: ClusterMessageKind, payload: Uint8Array, from: Buffer) {
    if (this.#early) {
      // bounded by what other instances send during one document load
      if (this.#early.length < 10_000) {
        this.#early.push([kind, payload, from])
      }
      return
    }
    this.#listener?.receive(kind, payload, from)
  }

  resync() {
    this.#listener?.resync()
  }

  publish(kind: ClusterMessageKind, payload: Uint8Array) {
    this.cluster.publish(this.docName, kind, payload)
  }

  close() {
    this.#listener = undefined
    return this.cluster.release(this)
  }
}

/**
 * Shares open documents between app instances through Redis pub/sub: one
 * channel per document, subscribed while the document is open here. Each
 * message carries the sending instance's id, so an instance ignores its own.
 */
export class DocumentCluster {
  readonly instanceId = randomBytes(INSTANCE_ID_BYTES)
  #publisher: Redis
  #subscriber: Redis
  #prefix: string
  #ownsPublisher: boolean
  #links = new Map<string, ClusterLink>()
  #connectedOnce = false

  constructor(publisher: Redis, prefix: string, options: { ownsPublisher?: boolean } = {}) {
    this.#publisher = publisher
    this.#prefix = prefix
    this.#ownsPublisher = options.ownsPublisher ?? false
    // a subscribed connection can do nothing else: the app's connection keeps publishing
    // no ready check: its INFO is refused once the connection has subscribed
    this.#subscriber = publisher.duplicate({ enableReadyCheck: false })
    this.#subscriber.on('error', (error) =>
      reportCollaborationError({ scope: 'storage', operation: 'cluster.subscribe', error })
    )
    this.#subscriber.on('messageBuffer', (channel: Buffer, message: Buffer) =>
      this.#onMessage(channel.toString(), message)
    )
    this.#subscriber.on('ready', () => {
      // after a reconnect every open document may have missed updates
      if (this.#connectedOnce) {
        for (const link of this.#links.values()) {
          link.resync()
        }
      }
      this.#connectedOnce = true
    })
  }

  /** A cluster on its own connections to `url` (the `redisUrl` fallback) */
  static async connect(url: string, prefix: string) {
    const { Redis: Client } = await importOptional<typeof import('ioredis')>(
      'ioredis',
      '"multiInstance" with "redisUrl" in config/collaboration.ts'
    )
    const publisher = new Client(url, { maxRetriesPerRequest: 2 })
    publisher.on('error', (error) =>
      reportCollaborationError({ scope: 'storage', operation: 'cluster.publish', error })
    )
    return new DocumentCluster(publisher, prefix, { ownsPublisher: true })
  }

  #channel(docName: string) {
    return `${this.#prefix}doc:${docName}`
  }

  /**
   * Subscribes to a document's channel before it is loaded, so nothing sent
   * between the load and the subscription is missed.
   */
  async open(docName: string): Promise<ClusterLink> {
    if (this.#links.has(docName)) {
      throw new Error(`The cluster link of "${docName}" is already open`)
    }
    const link = new ClusterLink(docName, this)
    this.#links.set(docName, link)
    try {
      await this.#subscriber.subscribe(this.#channel(docName))
    } catch (error) {
      this.#links.delete(docName)
      throw error
    }
    return link
  }

  async release(link: ClusterLink) {
    if (this.#links.get(link.docName) !== link) {
      return
    }
    this.#links.delete(link.docName)
    await this.#subscriber.unsubscribe(this.#channel(link.docName)).catch((error) => {
      reportCollaborationError({
        scope: 'storage',
        operation: 'cluster.unsubscribe',
        docName: link.docName,
        error,
      })
    })
  }

  publish(docName: string, kind: ClusterMessageKind, payload: Uint8Array) {
    const message = Buffer.allocUnsafe(HEADER_BYTES + payload.byteLength)
    this.instanceId.copy(message, 0)
    message[INSTANCE_ID_BYTES] = kind
    message.set(payload, HEADER_BYTES)
    // the update is already stored by this instance: a failed publish delays
    // the other instances until their next resync, it loses nothing
    this.#publisher.publish(this.#channel(docName), message).catch((error: Error) => {
      reportCollaborationError({ scope: 'storage', operation: 'cluster.publish', docName, error })
    })
  }

  #onMessage(channel: string, message: Buffer) {
    if (message.byteLength < HEADER_BYTES || !channel.startsWith(`${this.#prefix}doc:`)) {
      return
    }
    if (message.subarray(0, INSTANCE_ID_BYTES).equals(this.instanceId)) {
      return
    }
    const link = this.#links.get(channel.slice(this.#prefix.length + 4))
    const kind = message[INSTANCE_ID_BYTES] as ClusterMessageKind
    if (!link || kind > LAST_KIND) {
      return
    }
    link.deliver(kind, message.subarray(HEADER_BYTES), message.subarray(0, INSTANCE_ID_BYTES))
  }

  async close() {
    this.#links.clear()
    this.#subscriber.disconnect()
    if (this.#ownsPublisher) {
      await this.#publisher.quit().catch(() => this.#publisher.disconnect())
    }
    debug('cluster closed')
  }
}
