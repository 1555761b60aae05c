/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { registerHooks } from 'node:module'
import { Redis } from 'ioredis'
import { createDatabase, createRedis, SERVICES } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import { PRESENCE_TTL_MS, PresenceRoster } from '../../src/collaboration/presence.ts'
import { assertCollaborationPackages } from '../../src/collaboration/boot.ts'
import { connectClient, setupCollabApp, tokenFor, waitFor } from './helpers.ts'

/**
 * Makes `specifiers` unresolvable while the test runs, as when the package
 * is not installed.
 */
function uninstall(specifiers: string[]) {
  const hooks = registerHooks({
    resolve(specifier, context, next) {
      if (specifiers.includes(specifier)) {
        throw Object.assign(new Error(`Cannot find package '${specifier}'`), {
          code: 'ERR_MODULE_NOT_FOUND',
        })
      }
      return next(specifier, context)
    },
  })
  return () => hooks.deregister()
}

test.group('Collaboration boot', () => {
  test('a missing optional package fails at boot in one line naming it and the install command', async ({
    assert,
    cleanup,
  }) => {
    cleanup(uninstall(['y-protocols/sync', 'ws']))
    await assert.rejects(
      () => setupCollabApp(),
      'Collaboration (config/collaboration.ts) needs "y-protocols", "ws", which are not installed. Run: npm install y-protocols ws'
    )
  })

  test('ioredis is required only for a presence roster on redisUrl', ({ assert }) => {
    const missing = (specifier: string) => {
      if (specifier === 'ioredis') throw new Error('not installed')
      return specifier
    }
    assert.doesNotThrow(() => assertCollaborationPackages(['yjs', 'ws'], missing))
    assert.throws(
      () => assertCollaborationPackages(['yjs', 'ioredis'], missing),
      /needs "ioredis", which is not installed. Run: npm install ioredis/
    )
  })

  test('an engine that does not exist fails at boot, naming the engines', async ({ assert }) => {
    await assert.rejects(
      () => setupCollabApp({ engine: 'quill' as any }),
      /"quill" is not an engine. Use "yjs", "automerge", "partykit", "partyserver"/
    )
  })

  test('relational storage without its tables fails at boot naming the migration; it never creates them', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await dropStubTables(db, 'collaboration')
    await assert.rejects(
      () => setupCollabApp({ storage: relationalStorage() }, { database: true }),
      /The collaboration tables collab_documents, collab_updates, collab_versions, collab_comments do not exist. Run "node ace migration:run"/
    )
    assert.isFalse(await db.connection().schema.hasTable('collab_documents'))

    await migrateStubs(db, 'collaboration')
    const { manager } = await setupCollabApp({ storage: relationalStorage() }, { database: true })
    await manager.config.storage.saveDocument('a/1', new Uint8Array([1, 2]))
    assert.deepEqual([...(await manager.config.storage.loadDocument('a/1'))!.state], [1, 2])
    await dropStubTables(db, 'collaboration')
  })

  test('the config resolves once: the binding and the routes share one storage', async ({
    assert,
  }) => {
    let built = 0
    const { manager, app } = await setupCollabApp({
      storage: {
        type: 'provider',
        resolver: async () => {
          built++
          const { InMemoryCollaborationStorage } =
            await import('../../src/collaboration/storage/memory.ts')
          return new InMemoryCollaborationStorage()
        },
      } as any,
    })
    assert.strictEqual(await app.container.make('atrium.collaboration'), manager)
    assert.equal(built, 1)
  })
})

test.group('Collaboration presence', () => {
  test('a named @adonisjs/redis connection carries the roster and stays open after close', async ({
    assert,
  }) => {
    const prefix = `atrium:test:collab:${randomUUID()}:`
    createRedis(prefix)
    const connection = new Redis({ ...SERVICES.redis, maxRetriesPerRequest: 1 })
    const asked: string[] = []
    const { manager, wsBase, close } = await setupCollabApp(
      { redis: 'main', redisPrefix: prefix },
      {
        // the shape of @adonisjs/redis' manager: connection(name).ioConnection
        bindings: {
          redis: {
            connection(name: string) {
              asked.push(name)
              return { ioConnection: connection }
            },
          },
        },
      }
    )
    const client = connectClient(wsBase, 'room/1', tokenFor('room/1', 'ann'))
    await client.synced
    await waitFor(async () => (await manager.listPresence({ docName: 'room/1' })).length === 1)
    assert.deepEqual(asked, ['main'])
    assert.deepEqual(
      (await manager.listPresence({ docName: 'room/1' })).map(({ userId }) => userId),
      ['ann']
    )
    await close()
    assert.equal(connection.status, 'ready')
    connection.disconnect()
  })

  test('"redis" without @adonisjs/redis fails at boot naming the fallback', async ({ assert }) => {
    await assert.rejects(
      () => setupCollabApp({ redis: 'main' }),
      /"redis: 'main'" in config\/collaboration.ts needs @adonisjs\/redis.*set "redisUrl" instead/
    )
  })

  test('a member without a heartbeat for the expiry is dropped from the list and from Redis', async ({
    assert,
  }) => {
    const prefix = `atrium:test:collab:${randomUUID()}:`
    const redis = createRedis(prefix)
    let now = 1_000_000
    const crashed = new PresenceRoster(redis, prefix, { now: () => now })
    const reader = new PresenceRoster(redis, prefix, { now: () => now })
    await crashed.join('doc/1', 'c1', { userId: 'ann' })
    await reader.join('doc/1', 'c2', { userId: 'bob' })
    assert.deepEqual((await reader.list('doc/1')).map(({ userId }) => userId).sort(), [
      'ann',
      'bob',
    ])

    // the crashed instance stops its heartbeat; the reader's connection refreshes
    now += PRESENCE_TTL_MS + 1
    await reader.join('doc/1', 'c2', { userId: 'bob' })
    assert.deepEqual(
      (await reader.list('doc/1')).map(({ userId }) => userId),
      ['bob']
    )
    assert.lengthOf(Object.keys(await redis.hgetall(`${prefix}presence:doc/1`)), 1)
    await reader.close()
    await crashed.close()
  })
})
