/* eslint-disable @unicorn/no-await-expression-member -- tests read close codes and responses inline */
import { test } from '@japa/runner'
import * as Y from 'yjs'
import { CLOSE_CODES } from '../../src/collaboration/manager.ts'
import { DEFAULT_LIMITS } from '../../src/collaboration/limits.ts'
import { onCollaborationError } from '../../src/collaboration/observability.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import type { CollaborationStorage } from '../../src/collaboration/types.ts'
import {
  connectClient,
  storedText,
  tokenFor,
  waitFor,
  withoutLog,
} from '../collaboration/helpers.ts'
import { createDatabase } from '../helpers.ts'
import { migrateStubs } from '../migration_stubs.ts'
import { rawClient, setupHostileApp, updateMessage } from './collaboration_helpers.ts'

const WRITES = new Set(['saveDocument', 'compactDocument', 'appendUpdate'])

/**
 * The real relational storage, whose writes fail while `down()` is true (the
 * database refusing them, as MariaDB refuses a packet over max_allowed_packet).
 */
function faulty(storage: CollaborationStorage, down: () => boolean): CollaborationStorage {
  return new Proxy(storage, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof value !== 'function') {
        return value
      }
      return (...args: unknown[]) => {
        if (down() && WRITES.has(String(property))) {
          return Promise.reject(new Error(`${String(property)} refused: storage down`))
        }
        return value.apply(target, args)
      }
    },
  })
}

/**
 * The relational storage on the selected database, with fresh tables (its own
 * Lucid connection: the storage outlives nothing of a previous test's app).
 */
async function freshStorage() {
  const db = await createDatabase()
  await migrateStubs(db, 'collaboration')
  return relationalStorage({ db })
}

test.group('Hostile conditions: storage', () => {
  test('a flush that cannot store rejects and is reported; the engine retries until it stores', async ({
    assert,
  }) => {
    let down = false
    const storage = faulty(await freshStorage(), () => down)
    const reported: string[] = []
    const off = onCollaborationError((event) => reported.push(`${event.scope}:${event.operation}`))
    try {
      const { wsBase, manager } = await setupHostileApp({ storage })
      const client = connectClient(wsBase, 'store/1')
      await client.synced
      client.text.insert(0, 'first')
      await waitFor(async () => (await storedText(storage, 'store/1')) === 'first')

      down = true
      client.text.insert(5, ' second')
      await waitFor(async () =>
        (await manager.getDocumentText({ docName: 'store/1' })).endsWith('second')
      )
      await assert.rejects(
        () => manager.flush(),
        /Could not store collaboration document "store\/1"/
      )
      assert.include(reported, 'storage:saveDocument')

      // nobody calls flush again: the retry stores the edit once storage is back
      down = false
      await waitFor(
        async () => (await storedText(storage, 'store/1')) === 'first second',
        5000,
        'the retry'
      )
      client.text.insert(12, ' third')
      await waitFor(async () =>
        (await manager.getDocumentText({ docName: 'store/1' })).endsWith('third')
      )
      await manager.flush()
      assert.equal(await storedText(storage, 'store/1'), 'first second third')
    } finally {
      down = false
      off()
    }
  })

  test('a failed compaction is retried without another edit', async ({ assert }) => {
    let failures = 2
    const real = await freshStorage()
    const storage = faulty(real, () => failures > 0)
    const off = onCollaborationError(() => failures--)
    try {
      // no update log: only the compaction stores
      const { wsBase } = await setupHostileApp({ storage: withoutLog(storage) })
      const client = connectClient(wsBase, 'store/2')
      await client.synced
      client.text.insert(0, 'eventually stored')
      await waitFor(
        async () => (await storedText(real, 'store/2')) === 'eventually stored',
        5000,
        'two failed compactions, then a retry'
      )
      assert.equal(failures, 0)
    } finally {
      failures = 0
      off()
    }
  })

  test('an update past maxDocumentBytes closes with 4413; the stored document stays whole', async ({
    assert,
  }) => {
    const storage = await freshStorage()
    const { wsBase, manager, bystander } = await setupHostileApp({
      storage,
      limits: { maxDocumentBytes: 64 * 1024 },
    })
    const peer = connectClient(wsBase, 'cap/1', tokenFor('cap/1', 'peer'))
    await peer.synced
    peer.text.insert(0, 'kept')

    const attacker = rawClient(`${wsBase}/cap/1?token=${tokenFor('cap/1', 'attacker')}`)
    await attacker.opened
    const big = new Y.Doc()
    big.getText('content').insert(0, 'z'.repeat(100 * 1024))
    attacker.socket.send(updateMessage(Y.encodeStateAsUpdate(big)))
    assert.equal((await attacker.closed).code, CLOSE_CODES.tooLarge)

    peer.text.insert(4, ' and later')
    await waitFor(
      async () => (await manager.getDocumentText({ docName: 'cap/1' })) === 'kept and later'
    )
    await manager.flush()
    assert.equal(await storedText(storage, 'cap/1'), 'kept and later')
    assert.equal(await bystander(), '200 still here')
  })

  test('a document grown in 1 MiB edits stops at the default cap, and all of it is stored', async ({
    assert,
  }) => {
    const storage = await freshStorage()
    const { wsBase, manager } = await setupHostileApp({ storage })
    const writer = rawClient(`${wsBase}/cap/2?token=${tokenFor('cap/2')}`)
    await writer.opened
    const source = new Y.Doc()
    source.on('update', (update: Uint8Array) => writer.socket.send(updateMessage(update)))
    const text = source.getText('content')
    const limit = DEFAULT_LIMITS.maxDocumentBytes / (1024 * 1024) + 2
    for (let index = 0; index < limit && writer.socket.readyState === 1; index++) {
      text.insert(text.length, String(index % 10).repeat(1024 * 1024))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.equal((await writer.closed).code, CLOSE_CODES.tooLarge)
    const live = await manager.getDocumentText({ docName: 'cap/2' })
    assert.isAbove(live.length, 0)
    await manager.flush()
    assert.equal((await storedText(storage, 'cap/2'))?.length, live.length)
  })

  test('a document storage cannot load closes with 4500 and is reported', async ({ assert }) => {
    const reported: string[] = []
    const off = onCollaborationError((event) => reported.push(event.operation))
    try {
      const storage = await freshStorage()
      const broken = new Proxy(storage, {
        get(target, property, receiver) {
          if (property === 'loadDocument') {
            return () => Promise.reject(new Error('table locked'))
          }
          const value = Reflect.get(target, property, receiver)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
      const { wsBase } = await setupHostileApp({ storage: broken })
      const client = rawClient(`${wsBase}/load/1?token=${tokenFor('load/1')}`)
      await client.opened
      assert.equal((await client.closed).code, CLOSE_CODES.internalError)
      assert.include(reported, 'loadDocument')
    } finally {
      off()
    }
  })
})
