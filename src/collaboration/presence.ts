import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { importOptional } from '../shared/optional_import.ts'
import { reportCollaborationError } from './observability.ts'
import type { PresenceMember } from './types.ts'

/** How long a member stays listed without a heartbeat */
export const PRESENCE_TTL_MS = 30_000
const HEARTBEAT_MS = 10_000

/**
 * Cross-instance roster of who is connected to which document, in one Redis
 * hash per document. Each connection is its own field (`<instance>:<conn>`),
 * so a second tab never evicts the first; fields carry an expiry refreshed by
 * a heartbeat, so a crashed instance's members fade out after 30 s.
 */
export class PresenceRoster {
  readonly instanceId = randomUUID()
  #redis: Redis
  #prefix: string
  #local = new Map<string, { docName: string; member: PresenceMember }>()
  #heartbeat?: NodeJS.Timeout
  #ownsConnection: boolean
  #now: () => number

  /**
   * A roster on a connection the app owns (an `@adonisjs/redis` connection):
   * closing the roster leaves it open.
   */
  constructor(
    redis: Redis,
    prefix: string,
    options: { ownsConnection?: boolean; now?: () => number } = {}
  ) {
    this.#redis = redis
    this.#prefix = prefix
    this.#ownsConnection = options.ownsConnection ?? false
    this.#now = options.now ?? Date.now
    this.#heartbeat = setInterval(() => this.#refresh(), HEARTBEAT_MS)
    this.#heartbeat.unref()
  }

  /**
   * A roster on its own connection to `url` (the `redisUrl` fallback), closed
   * with the roster.
   */
  static async connect(url: string, prefix: string) {
    const { Redis: Client } = await importOptional<typeof import('ioredis')>(
      'ioredis',
      '"redisUrl" in config/collaboration.ts'
    )
    const redis = new Client(url, { maxRetriesPerRequest: 2 })
    redis.on('error', (error) =>
      reportCollaborationError({ scope: 'storage', operation: 'presence.redis', error })
    )
    return new PresenceRoster(redis, prefix, { ownsConnection: true })
  }

  #key(docName: string) {
    return `${this.#prefix}presence:${docName}`
  }

  #field(connectionId: string) {
    return `${this.instanceId}:${connectionId}`
  }

  async join(docName: string, connectionId: string, member: PresenceMember) {
    this.#local.set(connectionId, { docName, member })
    await this.#write(docName, connectionId, member)
  }

  async #write(docName: string, connectionId: string, member: PresenceMember) {
    const key = this.#key(docName)
    try {
      await this.#redis
        .multi()
        .hset(
          key,
          this.#field(connectionId),
          JSON.stringify({ ...member, expiresAt: this.#now() + PRESENCE_TTL_MS })
        )
        .pexpire(key, PRESENCE_TTL_MS * 2)
        .exec()
    } catch (error) {
      reportCollaborationError({ scope: 'storage', operation: 'presence.join', docName, error })
    }
  }

  async leave(docName: string, connectionId: string) {
    this.#local.delete(connectionId)
    try {
      await this.#redis.hdel(this.#key(docName), this.#field(connectionId))
    } catch (error) {
      reportCollaborationError({ scope: 'storage', operation: 'presence.leave', docName, error })
    }
  }

  async #refresh() {
    for (const [connectionId, { docName, member }] of this.#local) {
      await this.#write(docName, connectionId, member)
    }
  }

  /**
   * Members connected to the document on any instance, one per user.
   */
  async list(docName: string): Promise<PresenceMember[]> {
    const key = this.#key(docName)
    const fields = await this.#redis.hgetall(key)
    const now = this.#now()
    const members = new Map<string, PresenceMember>()
    const expired: string[] = []
    for (const [field, value] of Object.entries(fields)) {
      try {
        const { expiresAt, ...member } = JSON.parse(value)
        if (expiresAt < now) {
          expired.push(field)
        } else if (!members.has(member.userId)) {
          members.set(member.userId, member)
        }
      } catch {
        expired.push(field)
      }
    }
    if (expired.length) {
      await this.#redis.hdel(key, ...expired).catch(() => {})
    }
    return [...members.values()]
  }

  /**
   * Removes this instance's members and stops the heartbeat.
   */
  async close() {
    clearInterval(this.#heartbeat)
    const byDoc = new Map<string, string[]>()
    for (const [connectionId, { docName }] of this.#local) {
      byDoc.set(docName, [...(byDoc.get(docName) ?? []), this.#field(connectionId)])
    }
    this.#local.clear()
    for (const [docName, fields] of byDoc) {
      await this.#redis.hdel(this.#key(docName), ...fields).catch(() => {})
    }
    if (this.#ownsConnection) {
      this.#redis.disconnect()
    }
  }
}
