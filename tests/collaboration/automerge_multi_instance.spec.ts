/* eslint-disable @unicorn/no-await-expression-member -- tests read stored documents inline */
import { randomBytes, randomUUID } from 'node:crypto'
import * as A from '@automerge/automerge'
import { Repo, type DocumentId } from '@automerge/automerge-repo'
import { getActiveTest, test } from '@japa/runner'
import { createDatabase, createRedis, SERVICES } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { allow, setupCollabApp, tokenFor, waitFor } from './helpers.ts'
import { contentOf, openDoc, storedDoc } from './automerge_helpers.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import type { CollaborationStorage } from '../../src/collaboration/types.ts'
import {
  ClusterLink,
  type ClusterMessageKind,
  type DocumentCluster,
} from '../../src/collaboration/cluster/redis_cluster.ts'
import { AutomergeClusterAdapter } from '../../src/collaboration/engines/automerge/cluster_adapter.ts'
import { genesisState } from '../../src/collaboration/engines/automerge/content.ts'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'

/*
 * Automerge documents served by several app instances (multiInstance):
 * real apps, one relational database, the local Redis, unmodified
 * automerge-repo clients over real WebSockets.
 */

const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`

async function sharedDeployment(extra: Record<string, unknown> = {}) {
  const db = await createDatabase()
  await migrateStubs(db, 'collaboration')
  getActiveTest()!.cleanup(() => dropStubTables(db, 'collaboration'))
  const redisPrefix = `atrium:test:cluster:${randomUUID()}:`
  createRedis(redisPrefix)
  const config = {
    engine: 'automerge' as const,
    redisUrl: REDIS_URL,
    redisPrefix,
    multiInstance: true,
    debounce: 60_000,
    ...extra,
  }
  const instance = (storage: CollaborationStorage = relationalStorage({ db })) =>
    setupCollabApp({ ...config, storage }, { database: true })
  return { db, instance }
}

/** Storage whose writes wait until the test releases them: nothing reaches the database */
function heldStorage(storage: CollaborationStorage) {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const held = new Proxy(storage, {
    get(target, property) {
      if (property === 'appendUpdate' || property === 'compactDocument') {
        return async (...args: any[]) => {
          await released
          return (target as any)[property](...args)
        }
      }
      const value = Reflect.get(target, property)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { storage: held, release }
}

function textOf(handle: { doc(): any }) {
  return String(handle.doc()?.content ?? '')
}

test.group('Collaboration | Automerge documents across app instances (Redis)', () => {
  test('clients on two instances edit one document: concurrent edits converge, presence crosses', async ({
    assert,
  }) => {
    const { db, instance } = await sharedDeployment()
    const first = await instance()
    const second = await instance()
    const alice = await openDoc(first.wsBase, 'notes/1', tokenFor('notes/1', 'alice'))
    const bob = await openDoc(second.wsBase, 'notes/1', tokenFor('notes/1', 'bob'))

    alice.handle.change((doc: any) => {
      doc.content = ''
    })
    await waitFor(() => typeof bob.handle.doc().content === 'string', 5000, 'the text on B')
    for (let index = 0; index < 20; index++) {
      alice.handle.change((doc: any) =>
        A.splice(doc, ['content'], doc.content.length, 0, `a${index} `)
      )
      bob.handle.change((doc: any) => A.splice(doc, ['content'], 0, 0, `b${index} `))
    }
    await waitFor(
      () =>
        textOf(alice.handle) === textOf(bob.handle) && textOf(bob.handle).length === 40 * 4 - 20,
      10_000,
      'both clients to converge'
    )
    for (let index = 0; index < 20; index++) {
      assert.include(textOf(bob.handle), `a${index} `)
      assert.include(textOf(alice.handle), `b${index} `)
    }

    // presence (automerge-repo ephemeral messages) crosses, under the sender's own id
    const heard: Array<{ senderId: string; message: any }> = []
    bob.handle.on('ephemeral-message', ({ senderId, message }) => heard.push({ senderId, message }))
    alice.handle.broadcast({ cursor: 7 })
    await waitFor(() => heard.some(({ message }) => message?.cursor === 7), 5000, 'presence on B')
    const aliceId = heard.find(({ message }) => message?.cursor === 7)!.senderId
    assert.match(aliceId, /^atrium-/)
    // a closed tab's goodbye reaches the other instance's clients too
    await alice.close()
    await waitFor(
      () =>
        heard.some(
          ({ senderId, message }) => senderId === aliceId && message?.__presence?.type === 'goodbye'
        ),
      5000,
      "Alice's goodbye on B"
    )

    await first.manager.flush()
    await second.manager.flush()
    const stored = await storedDoc(relationalStorage({ db }), 'notes/1')
    assert.equal(stored!.content, textOf(bob.handle))
  })

  test('an instance that opens the document later gets the changes the first has not stored yet', async ({
    assert,
  }) => {
    const { db, instance } = await sharedDeployment()
    // stored before: the first instance then only writes what its client changes
    await relationalStorage({ db }).saveDocument('notes/2', genesisState('notes/2'))
    const held = heldStorage(relationalStorage({ db }))
    // released even when an assertion fails: the apps' close waits for the held writes
    try {
      const first = await instance(held.storage)
      const second = await instance()
      const alice = await openDoc(first.wsBase, 'notes/2', tokenFor('notes/2', 'alice'))
      alice.handle.change((doc: any) => {
        doc.content = 'not stored yet'
      })
      await waitFor(async () => {
        const live = await first.manager.withLiveDocument({
          docName: 'notes/2',
          run: (handle) => handle.doc().content,
        })
        return live.live && live.value === 'not stored yet'
      })
      assert.isUndefined((await storedDoc(relationalStorage({ db }), 'notes/2'))?.content)

      const bob = await openDoc(second.wsBase, 'notes/2', tokenFor('notes/2', 'bob'))
      await waitFor(
        () => textOf(bob.handle) === 'not stored yet',
        5000,
        'the sync between instances'
      )
    } finally {
      held.release()
    }
  })

  test('a late joiner on B loads what was stored through A', async ({ assert }) => {
    const { db, instance } = await sharedDeployment()
    const first = await instance()
    const second = await instance()
    const alice = await openDoc(first.wsBase, 'notes/3', tokenFor('notes/3', 'alice'))
    alice.handle.change((doc: any) => {
      doc.content = 'written via A'
    })
    await waitFor(
      async () =>
        (await storedDoc(relationalStorage({ db }), 'notes/3'))?.content === 'written via A',
      5000,
      'the store'
    )
    await alice.close()
    await waitFor(() => !first.manager.openDocuments().includes('notes/3'), 5000, 'the unload')

    const bob = await openDoc(second.wsBase, 'notes/3', tokenFor('notes/3', 'bob'))
    await waitFor(() => textOf(bob.handle) === 'written via A', 5000, 'the load on B')
    assert.deepEqual(second.manager.openDocuments(), ['notes/3'])
  })

  test("a read-only connection on B cannot change A's document", async ({ assert }) => {
    const { db, instance } = await sharedDeployment({
      authorize: (ctx: any) =>
        'connection' in ctx && ctx.connection.userId === 'reader'
          ? { canRead: true, canWrite: false, canComment: true }
          : allow,
    })
    const first = await instance()
    const second = await instance()
    const writer = await openDoc(first.wsBase, 'notes/4', tokenFor('notes/4', 'writer'))
    const reader = await openDoc(second.wsBase, 'notes/4', tokenFor('notes/4', 'reader'))
    const watcher = await openDoc(second.wsBase, 'notes/4', tokenFor('notes/4', 'watcher'))

    reader.handle.change((doc: any) => {
      doc.fromReader = 'should never spread'
    })
    // written after the reader's change: once everyone has it, the reader's had every chance
    writer.handle.change((doc: any) => {
      doc.marker = 'after'
    })
    await waitFor(() => contentOf(reader.handle).marker === 'after', 5000, 'the reader')
    await waitFor(() => contentOf(watcher.handle).marker === 'after', 5000, 'the watcher')
    await first.manager.flush()
    await second.manager.flush()
    assert.isUndefined(contentOf(writer.handle).fromReader)
    assert.isUndefined(contentOf(watcher.handle).fromReader)
    for (const app of [first, second]) {
      const live = await app.manager.withLiveDocument({
        docName: 'notes/4',
        run: (handle) => handle.doc().fromReader,
      })
      assert.deepEqual(live, { live: true, value: undefined })
    }
    const stored = await storedDoc(relationalStorage({ db }), 'notes/4')
    assert.equal(stored!.marker, 'after')
    assert.isUndefined(stored!.fromReader)
  })

  test('versions made on one instance restore on the other, for clients of both', async ({
    assert,
  }) => {
    const { instance } = await sharedDeployment()
    const first = await instance()
    const second = await instance()
    const alice = await openDoc(first.wsBase, 'notes/5', tokenFor('notes/5', 'alice'))
    const bob = await openDoc(second.wsBase, 'notes/5', tokenFor('notes/5', 'bob'))
    alice.handle.change((doc: any) => {
      doc.content = 'version one'
    })
    await waitFor(() => textOf(bob.handle) === 'version one', 5000, 'the first edit on B')
    const version = await first.manager.versions.create('notes/5', 'alice', 'one')

    bob.handle.change((doc: any) => {
      doc.content = 'version two'
      doc.extra = true
    })
    await waitFor(() => textOf(alice.handle) === 'version two', 5000, 'the second edit on A')
    await second.manager.versions.restore('notes/5', version.id, 'bob')
    await waitFor(
      () => textOf(alice.handle) === 'version one' && textOf(bob.handle) === 'version one',
      5000,
      'the restore on both'
    )
    assert.isUndefined(contentOf(alice.handle).extra)
    // the restore snapshotted "version two" first, on B, after A's version
    const versions = await first.manager.versions.list('notes/5')
    assert.deepEqual(
      versions.map((listed) => listed.label),
      ['restored from #1', 'one']
    )
  })

  test('an instance that restarts loses nothing: its clients come back to what both wrote', async ({
    assert,
  }) => {
    const { db, instance } = await sharedDeployment()
    const first = await instance()
    let second = await instance()
    const alice = await openDoc(first.wsBase, 'notes/6', tokenFor('notes/6', 'alice'))
    const bob = await openDoc(second.wsBase, 'notes/6', tokenFor('notes/6', 'bob'))
    alice.handle.change((doc: any) => {
      doc.fromAlice = 'a'
    })
    bob.handle.change((doc: any) => {
      doc.fromBob = 'b'
    })
    await waitFor(() => contentOf(alice.handle).fromBob === 'b', 5000, 'B to A')
    await waitFor(() => contentOf(bob.handle).fromAlice === 'a', 5000, 'A to B')

    await bob.close()
    await second.close()
    // A keeps serving while B is down
    alice.handle.change((doc: any) => {
      doc.whileDown = true
    })
    second = await instance()
    const again = await openDoc(second.wsBase, 'notes/6', tokenFor('notes/6', 'bob'))
    await waitFor(() => contentOf(again.handle).whileDown === true, 5000, 'the restarted B')
    assert.equal(contentOf(again.handle).fromAlice, 'a')
    assert.equal(contentOf(again.handle).fromBob, 'b')

    await first.close()
    await second.close()
    const stored = await storedDoc(relationalStorage({ db }), 'notes/6')
    assert.include(stored!, { fromAlice: 'a', fromBob: 'b', whileDown: true })
  })
})

/**
 * Instances whose cluster is an in-process bus that can lose messages (as
 * Redis pub/sub does while a connection is down), each with a server repo
 * without clients and the cluster adapter on its document.
 */
function lossyCluster(docName: string) {
  const bus = { dropping: false, links: [] as Array<{ id: Buffer; link: ClusterLink }> }
  const member = () => {
    const id = randomBytes(16)
    const cluster = {
      publish(_docName: string, kind: ClusterMessageKind, payload: Uint8Array) {
        if (bus.dropping) {
          return
        }
        for (const other of bus.links) {
          if (!other.id.equals(id)) {
            setImmediate(() => other.link.deliver(kind, Buffer.from(payload), id))
          }
        }
      },
      release: async () => {},
    }
    const link = new ClusterLink(docName, cluster as unknown as DocumentCluster)
    const adapter = new AutomergeClusterAdapter(id, {
      relayEphemeral: () => {},
      maxEphemeralBytes: 1024,
    })
    const repo = new Repo({ network: [] })
    getActiveTest()!.cleanup(() => repo.shutdown())
    const handle = repo.import<any>(genesisState(docName), {
      docId: automergeDocumentId(docName) as DocumentId,
    })
    handle.doneLoading()
    bus.links.push({ id, link })
    adapter.attach(handle.documentId, link, handle)
    return { handle, link }
  }
  return { bus, member }
}

test.group('Collaboration | Automerge cluster adapter', () => {
  test('changes lost on the way heal when the link resyncs, concurrent ones included', async ({
    assert,
  }) => {
    const { bus, member } = lossyCluster('notes/heal')
    const first = member()
    const second = member()
    first.handle.change((doc: any) => {
      doc.shared = 'before'
    })
    await waitFor(() => contentOf(second.handle).shared === 'before', 5000, 'the first sync')

    bus.dropping = true
    first.handle.change((doc: any) => {
      doc.fromFirst = 'lost once'
    })
    second.handle.change((doc: any) => {
      doc.fromSecond = 'lost too'
    })
    // both changes went out (at the end of their event loop turn), and were lost
    await new Promise((resolve) => setTimeout(resolve, 400))
    assert.isUndefined(contentOf(second.handle).fromFirst)
    assert.isUndefined(contentOf(first.handle).fromSecond)

    bus.dropping = false
    // what the cluster does when its Redis connection is ready again
    second.link.resync()
    await waitFor(
      () =>
        contentOf(second.handle).fromFirst === 'lost once' &&
        contentOf(first.handle).fromSecond === 'lost too',
      5000,
      'both instances to heal'
    )
    assert.deepEqual(contentOf(first.handle), contentOf(second.handle))
  })
})
