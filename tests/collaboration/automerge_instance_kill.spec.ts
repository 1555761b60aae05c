import { randomUUID } from 'node:crypto'
import * as A from '@automerge/automerge'
import type { DocHandle, DocumentId } from '@automerge/automerge-repo'
import { getActiveTest, test } from '@japa/runner'
import { exited, startChildServer } from './child_server.ts'
import { createDatabase, createRedis, SERVICES } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { setupCollabApp, tokenFor, waitFor } from './helpers.ts'
import { connectRepo, contentOf, openDoc, stopRetrying, storedDoc } from './automerge_helpers.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'

/*
 * An Automerge instance of a multiInstance deployment killed with SIGKILL
 * while clients on it and on a surviving instance edit: the killed instance
 * runs in a child process whose storage never completes a write, so what it
 * received is kept only if it reached the survivor.
 */

const DOC = 'notes/killed'

async function deployment() {
  const db = await createDatabase()
  await migrateStubs(db, 'collaboration')
  getActiveTest()!.cleanup(() => dropStubTables(db, 'collaboration'))
  const redisPrefix = `atrium:test:cluster:${randomUUID()}:`
  createRedis(redisPrefix)
  const survivor = await setupCollabApp(
    {
      engine: 'automerge',
      redisUrl: `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`,
      redisPrefix,
      multiInstance: true,
      debounce: 60_000,
      storage: relationalStorage({ db }),
    },
    { database: true }
  )
  return { db, redisPrefix, survivor }
}

/** A client that writes `<name><n>` keys, one every few milliseconds, until stopped */
function typist(name: string, handle: DocHandle<any>) {
  let count = 0
  const timer = setInterval(() => {
    handle.change((doc: any) => {
      doc[`${name}${count}`] = count
    })
    count++
  }, 10)
  return {
    get count() {
      return count
    },
    stop: () => clearInterval(timer),
  }
}

const keysOf = (content: Record<string, unknown>, name: string) =>
  Object.keys(content).filter((key) => key.startsWith(name) && /^\d+$/.test(key.slice(name.length)))

test.group('Collaboration | Automerge instance killed across instances', () => {
  test('an instance killed while clients on both edit: survivors keep editing, nothing the survivor had is lost', async ({
    assert,
    cleanup,
    fs,
  }) => {
    const { db, redisPrefix, survivor } = await deployment()
    const killed = await startChildServer('cluster_server.ts', [
      fs.basePath,
      redisPrefix,
      'automerge',
    ])
    cleanup(() => {
      killed.child.kill('SIGKILL')
    })
    // the survivor creates the document: the other instance's writes never complete
    const bob = await openDoc(survivor.wsBase, DOC, tokenFor(DOC, 'bob'))
    const dave = await openDoc(survivor.wsBase, DOC, tokenFor(DOC, 'dave'))
    const alice = await openDoc(killed.wsBase, DOC, tokenFor(DOC, 'alice'))
    const carol = await openDoc(killed.wsBase, DOC, tokenFor(DOC, 'carol'))

    const typing = [
      typist('alice', alice.handle),
      typist('carol', carol.handle),
      typist('bob', bob.handle),
      typist('dave', dave.handle),
    ]
    cleanup(() => typing.forEach((client) => client.stop()))
    // the kill comes mid-typing, once edits from the doomed instance have crossed
    await waitFor(
      () =>
        keysOf(contentOf(bob.handle), 'alice').length >= 10 &&
        keysOf(contentOf(bob.handle), 'carol').length >= 10,
      10_000,
      "the killed instance's clients to reach the survivor"
    )
    stopRetrying(alice)
    stopRetrying(carol)
    const gone = exited(killed.child)
    killed.child.kill('SIGKILL')
    assert.equal(await gone, 'SIGKILL')
    // what the survivor holds once the other is dead is what it acknowledged
    const acknowledged = A.toJS(
      A.load<Record<string, number>>(await survivor.manager.getDocumentState({ docName: DOC }))
    )
    const [aliceTyping, carolTyping, bobTyping, daveTyping] = typing
    carolTyping.stop()
    await carol.close()

    // Alice's client fails over to the survivor with its document, still typing
    const bobAtKill = bobTyping.count
    const failover = connectRepo(survivor.wsBase, DOC, tokenFor(DOC, 'alice'))
    await failover.connected
    const moved = failover.repo.import<any>(A.save(alice.handle.doc()), {
      docId: failover.documentId as DocumentId,
    })
    aliceTyping.stop()
    await alice.close()
    const aliceAgain = typist('again', moved)
    cleanup(() => aliceAgain.stop())
    await waitFor(
      () =>
        keysOf(contentOf(bob.handle), 'again').length >= 10 && bobTyping.count >= bobAtKill + 10,
      10_000,
      'the survivors to keep editing'
    )
    aliceAgain.stop()
    bobTyping.stop()
    daveTyping.stop()
    const converged = () => {
      const heads = A.getHeads(bob.handle.doc()).sort().join()
      return (
        A.getHeads(dave.handle.doc()).sort().join() === heads &&
        A.getHeads(moved.doc()).sort().join() === heads
      )
    }
    await waitFor(converged, 10_000, 'the survivors to converge')

    await survivor.close()
    const stored = (await storedDoc(relationalStorage({ db }), DOC))!
    assert.isAtLeast(keysOf(acknowledged, 'alice').length, 10)
    assert.isAtLeast(keysOf(acknowledged, 'carol').length, 10)
    for (const key of Object.keys(acknowledged)) {
      assert.property(stored, key, `${key}, acknowledged before the kill`)
    }
    // everything the survivors wrote, the failed-over client's whole document included
    assert.deepEqual(stored, contentOf(bob.handle))
    assert.deepEqual(contentOf(moved), stored)
    assert.lengthOf(keysOf(stored, 'bob'), bobTyping.count)
    assert.lengthOf(keysOf(stored, 'dave'), daveTyping.count)
  }).timeout(60_000)
})
