import { randomUUID } from 'node:crypto'
import * as Y from 'yjs'
import { WebSocket } from 'ws'
import { WebsocketProvider } from 'y-websocket'
import { getActiveTest, test } from '@japa/runner'
import { exited, startChildServer } from './child_server.ts'
import { createDatabase, createRedis, SERVICES } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { connectClient, setupCollabApp, tokenFor, waitFor } from './helpers.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import type { CollaborationStorage } from '../../src/collaboration/types.ts'

/*
 * Several app instances serving the same documents (multiInstance): real
 * apps, one relational database, updates and presence through the local
 * Redis, real y-websocket clients.
 */

const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`

async function sharedDeployment() {
  const db = await createDatabase()
  await migrateStubs(db, 'collaboration')
  getActiveTest()!.cleanup(() => dropStubTables(db, 'collaboration'))
  const redisPrefix = `atrium:test:cluster:${randomUUID()}:`
  createRedis(redisPrefix)
  const config = {
    redisUrl: REDIS_URL,
    redisPrefix,
    multiInstance: true,
    debounce: 60_000,
  }
  const instance = (storage: CollaborationStorage = relationalStorage({ db })) =>
    setupCollabApp({ ...config, storage }, { database: true })
  return { db, redisPrefix, instance }
}

function textOf(state: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  return doc.getText('content').toString()
}

async function storedText(storage: CollaborationStorage, docName: string) {
  const stored = await storage.loadDocument(docName)
  const doc = new Y.Doc()
  for (const part of [stored?.state, ...(stored?.updates ?? [])]) {
    if (part?.byteLength) {
      Y.applyUpdate(doc, part)
    }
  }
  return doc.getText('content').toString()
}

/** A relational storage whose log appends wait until the test releases them */
function heldLogStorage(storage: CollaborationStorage) {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const held = new Proxy(storage, {
    get(target, property) {
      if (property === 'appendUpdate') {
        return async (docName: string, update: Uint8Array) => {
          await released
          return target.appendUpdate!(docName, update)
        }
      }
      const value = Reflect.get(target, property)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { storage: held, release }
}

function startChildInstance(directory: string, redisPrefix: string) {
  return startChildServer('cluster_server.ts', [directory, redisPrefix])
}

test.group('Collaboration | documents across app instances (Redis)', () => {
  test('clients on two instances edit one document live: concurrent edits converge and presence crosses', async ({
    assert,
  }) => {
    const { instance } = await sharedDeployment()
    const first = await instance()
    const second = await instance()
    const alice = connectClient(first.wsBase, 'notes/1', tokenFor('notes/1', 'alice'))
    const bob = connectClient(second.wsBase, 'notes/1', tokenFor('notes/1', 'bob'))
    await Promise.all([alice.synced, bob.synced])

    for (let index = 0; index < 20; index++) {
      alice.text.insert(alice.text.length, `a${index} `)
      bob.text.insert(0, `b${index} `)
    }
    const converged = () =>
      alice.text.toString() === bob.text.toString() && alice.text.length === 40 * 4 - 20
    await waitFor(converged, 10_000, 'both clients to converge')
    for (let index = 0; index < 20; index++) {
      assert.include(bob.text.toString(), `a${index} `)
      assert.include(alice.text.toString(), `b${index} `)
    }

    alice.provider.awareness.setLocalStateField('user', { name: 'Alice' })
    await waitFor(
      () => bob.provider.awareness.getStates().get(alice.doc.clientID)?.user?.name === 'Alice',
      5000,
      "Alice's presence on the other instance"
    )
    // Bob's client relays Alice's state back to its instance: it stays Alice's
    alice.provider.disconnect()
    await waitFor(
      () => !bob.provider.awareness.getStates().has(alice.doc.clientID),
      5000,
      "Alice's presence to leave the other instance"
    )
  })

  test('an instance that opens the document later gets the edits the first has not stored yet', async ({
    assert,
  }) => {
    const { db, instance } = await sharedDeployment()
    const held = heldLogStorage(relationalStorage({ db }))
    const first = await instance(held.storage)
    const second = await instance()

    const alice = connectClient(first.wsBase, 'notes/2', tokenFor('notes/2', 'alice'))
    await alice.synced
    alice.text.insert(0, 'not stored yet')
    await waitFor(() => first.manager.openDocuments().includes('notes/2'))
    assert.equal(await storedText(relationalStorage({ db }), 'notes/2'), '')

    const bob = connectClient(second.wsBase, 'notes/2', tokenFor('notes/2', 'bob'))
    await bob.synced
    await waitFor(
      () => bob.text.toString() === 'not stored yet',
      5000,
      'the sync between instances'
    )
    held.release()
  })

  test('compacting on one instance keeps what another appended to the log', async ({ assert }) => {
    const { db, instance } = await sharedDeployment()
    const first = await instance()
    const second = await instance()
    const alice = connectClient(first.wsBase, 'notes/3', tokenFor('notes/3', 'alice'))
    const bob = connectClient(second.wsBase, 'notes/3', tokenFor('notes/3', 'bob'))
    await Promise.all([alice.synced, bob.synced])
    alice.text.insert(0, 'alice ')
    await waitFor(() => bob.text.toString() === 'alice ')
    // another instance's log row the second instance has not seen: its compaction must keep it
    const storage = relationalStorage({ db })
    await storage.appendUpdate(
      'notes/3',
      (() => {
        const other = new Y.Doc()
        other.getText('content').insert(0, 'logged elsewhere ')
        return Y.encodeStateAsUpdate(other)
      })()
    )
    await second.manager.flush()
    bob.text.insert(bob.text.length, 'bob')
    await waitFor(() => alice.text.toString().endsWith('bob'), 5000, 'the edit through the second')
    await second.manager.flush()
    assert.include(await storedText(storage, 'notes/3'), 'logged elsewhere')
    assert.include(await storedText(storage, 'notes/3'), 'alice bob')
  })

  test('two instances compacting a new document at once both succeed and keep both states', async ({
    assert,
  }) => {
    const { db } = await sharedDeployment()
    const texts = ['first ', 'second ', 'third ']
    const states = texts.map((text) => {
      const doc = new Y.Doc()
      doc.getText('content').insert(0, text)
      return Y.encodeStateAsUpdate(doc)
    })
    // each round races on a new document: the window where no row exists to lock
    for (let round = 0; round < 20; round++) {
      const docName = `race/${round}`
      await Promise.all(
        states.map((state) =>
          relationalStorage({ db }).compactDocument(docName, state, Y.mergeUpdates)
        )
      )
      const stored = await storedText(relationalStorage({ db }), docName)
      for (const text of texts) assert.include(stored, text, `round ${round}`)
    }
  })

  test('an instance killed with clients on both: the survivor keeps serving and stores what reached it', async ({
    assert,
    cleanup,
    fs,
  }) => {
    const { db, redisPrefix, instance } = await sharedDeployment()
    const killed = await startChildInstance(fs.basePath, redisPrefix)
    cleanup(() => {
      killed.child.kill('SIGKILL')
    })
    const survivor = await instance()
    const alice = connectClient(killed.wsBase, 'notes/4', tokenFor('notes/4', 'alice'))
    const bob = connectClient(survivor.wsBase, 'notes/4', tokenFor('notes/4', 'bob'))
    await Promise.all([alice.synced, bob.synced])

    alice.text.insert(0, 'alice ')
    // the killed instance never completes a log append: only the survivor can store this
    await waitFor(() => bob.text.toString() === 'alice ', 5000, 'the edit to reach the survivor')
    const gone = exited(killed.child)
    killed.child.kill('SIGKILL')
    assert.equal(await gone, 'SIGKILL')
    alice.provider.disconnect()

    bob.text.insert(bob.text.length, 'bob')
    // Alice's client fails over to the surviving instance with its document
    const failover = new WebsocketProvider(survivor.wsBase, 'notes/4', alice.doc, {
      WebSocketPolyfill: WebSocket as any,
      params: { token: tokenFor('notes/4', 'alice') },
      disableBc: true,
    })
    cleanup(() => failover.destroy())
    alice.text.insert(alice.text.length, ' again')
    await waitFor(
      () => alice.text.toString() === bob.text.toString() && bob.text.toString().includes('again'),
      5000,
      'the failover to converge'
    )
    await survivor.close()
    const stored = await storedText(relationalStorage({ db }), 'notes/4')
    assert.equal(stored, bob.text.toString())
    assert.include(stored, 'alice ')
    assert.include(stored, 'bob')
    assert.equal(textOf(Y.encodeStateAsUpdate(alice.doc)), stored)
  }).timeout(30_000)

  test('multiInstance needs Redis and a shared storage with a log, named at boot', async ({
    assert,
  }) => {
    await assert.rejects(
      () =>
        setupCollabApp({ multiInstance: true, storage: relationalStorage() }, { database: true }),
      /"multiInstance" in config\/collaboration.ts fans documents out through Redis: set redis: 'main'/
    )
    await assert.rejects(
      () =>
        setupCollabApp({
          multiInstance: true,
          redisUrl: REDIS_URL,
          storage: new InMemoryCollaborationStorage(),
        }),
      /needs a storage every instance shares/
    )
    await assert.rejects(
      () =>
        setupCollabApp({
          multiInstance: true,
          redisUrl: REDIS_URL,
          documents: { 'boards/:id': { engine: 'automerge' } },
        }),
      /"multiInstance" in config\/collaboration.ts needs a storage every instance shares/
    )
    await assert.rejects(
      () => setupCollabApp({ multiInstance: true, redisUrl: REDIS_URL }),
      /"multiInstance" in config\/collaboration.ts needs a storage every instance shares, with an update log: set storage: relationalStorage\(\)/
    )
  })
})
