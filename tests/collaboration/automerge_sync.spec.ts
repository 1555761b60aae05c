/* eslint-disable @unicorn/no-await-expression-member -- tests read documents inline */
import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import { WebSocket } from 'ws'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'
import { upgradeStatus } from '../hostile/collaboration_helpers.ts'
import { allow, closeOf, setupCollabApp, tokenFor, waitFor } from './helpers.ts'
import { connectRepo, contentOf, openDoc, stopRetrying, storedDoc } from './automerge_helpers.ts'

test.group('Automerge engine (automerge-repo clients)', () => {
  test('two unmodified Repo clients sync through the app', async ({ assert }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase } = await setupCollabApp({ engine: 'automerge', storage })
    const alice = await openDoc(wsBase, 'notes/1')
    const bob = await openDoc(wsBase, 'notes/1', tokenFor('notes/1', 'u2'))
    assert.equal(alice.handle.documentId, automergeDocumentId('notes/1'))

    alice.handle.change((doc: any) => {
      doc.content = 'hello from alice'
    })
    await waitFor(() => contentOf(bob.handle).content === 'hello from alice', 5000, 'bob')
    bob.handle.change((doc: any) => {
      doc.items = ['from bob']
    })
    await waitFor(() => contentOf(alice.handle).items?.[0] === 'from bob', 5000, 'alice')

    await waitFor(
      async () => (await storedDoc(storage, 'notes/1'))?.items?.[0] === 'from bob',
      5000,
      'storage'
    )
    assert.equal((await storedDoc(storage, 'notes/1'))!.content, 'hello from alice')
  })

  test('a document declared on Automerge among Yjs ones is served by Automerge', async ({
    assert,
  }) => {
    const { wsBase, manager } = await setupCollabApp({
      documents: { 'todos/:id': { engine: 'automerge' } },
    })
    assert.equal(await manager.engineFor({ docName: 'todos/1' }), 'automerge')
    const client = await openDoc(wsBase, 'todos/1')
    client.handle.change((doc: any) => {
      doc.todos = [{ title: 'ship it', done: false }]
    })
    await waitFor(async () => {
      const result = await manager.withLiveDocument({
        docName: 'todos/1',
        run: (handle) => handle.doc().todos?.[0]?.title,
      })
      return result.live && result.value === 'ship it'
    })
  })

  test('a token for another document is refused before the upgrade', async ({ assert }) => {
    const { wsBase } = await setupCollabApp({ engine: 'automerge' })
    const status = await upgradeStatus(`${wsBase}/notes/2?token=${tokenFor('notes/1')}`)
    assert.equal(status, 401)
  })

  test('a socket opened for one document cannot find another', async ({ assert }) => {
    const { wsBase, manager } = await setupCollabApp({ engine: 'automerge' })
    // notes/secret exists and is open on the server
    const owner = await openDoc(wsBase, 'notes/secret')
    owner.handle.change((doc: any) => {
      doc.content = 'not for you'
    })
    await waitFor(async () => (await manager.getDocumentText({ docName: 'notes/secret' })) !== '')

    const intruder = connectRepo(wsBase, 'notes/public')
    await intruder.connected
    await intruder.repo.find(intruder.documentId as any)
    await assert.rejects(
      () => intruder.repo.find(automergeDocumentId('notes/secret') as any),
      /unavailable/
    )
  })

  test('authorize denying reading closes with 4003, a throwing rule with 4503', async ({
    assert,
  }) => {
    const { wsBase } = await setupCollabApp({
      engine: 'automerge',
      authorize: (_ctx, docName) => {
        if (docName === 'notes/broken') {
          throw new Error('rule failed')
        }
        return docName === 'notes/open' ? allow : { ...allow, canRead: false }
      },
    })
    const denied = await closeOf(`${wsBase}/notes/closed?token=${tokenFor('notes/closed')}`)
    assert.equal(denied.code, 4003)
    const failed = await closeOf(`${wsBase}/notes/broken?token=${tokenFor('notes/broken')}`)
    assert.equal(failed.code, 4503)
  })

  test("a read-only connection's changes are dropped; it still receives the writer's", async ({
    assert,
  }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase, manager } = await setupCollabApp({
      engine: 'automerge',
      storage,
      authorize: (ctx) =>
        'connection' in ctx && ctx.connection.userId === 'reader'
          ? { canRead: true, canWrite: false, canComment: true }
          : allow,
    })
    const writer = await openDoc(wsBase, 'notes/ro')
    const reader = await openDoc(wsBase, 'notes/ro', tokenFor('notes/ro', 'reader'))
    const third = await openDoc(wsBase, 'notes/ro', tokenFor('notes/ro', 'u3'))

    reader.handle.change((doc: any) => {
      doc.fromReader = 'should never spread'
    })
    // the marker is written after the reader's change: once everyone has it,
    // the reader's change had every chance to spread
    writer.handle.change((doc: any) => {
      doc.marker = 'after'
    })
    await waitFor(() => contentOf(third.handle).marker === 'after', 5000, 'third sees marker')
    await waitFor(() => contentOf(reader.handle).marker === 'after', 5000, 'reader sees marker')
    await waitFor(
      async () => (await storedDoc(storage, 'notes/ro'))?.marker === 'after',
      5000,
      'marker stored'
    )
    assert.isUndefined(contentOf(third.handle).fromReader)
    assert.isUndefined(contentOf(writer.handle).fromReader)
    const live = await manager.withLiveDocument({
      docName: 'notes/ro',
      run: (handle) => handle.doc().fromReader,
    })
    assert.deepEqual(live, { live: true, value: undefined })
    assert.isUndefined((await storedDoc(storage, 'notes/ro'))!.fromReader)
    // the reader keeps its own change locally, like a Yjs read-only client
    assert.equal(contentOf(reader.handle).fromReader, 'should never spread')
  })

  test('a message that is not CBOR closes the socket with 4400', async ({ assert }) => {
    const { wsBase } = await setupCollabApp({ engine: 'automerge' })
    const socket = new WebSocket(`${wsBase}/notes/bad?token=${tokenFor('notes/bad')}`)
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('open', resolve))
    const closed = new Promise<number>((resolve) => socket.once('close', resolve))
    socket.send(Buffer.from([0xff, 0xff, 0xff]))
    assert.equal(await closed, 4400)
  })

  test('a writer whose changes would take the document past maxDocumentBytes is closed with 4413; the document keeps what fit', async ({
    assert,
  }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase } = await setupCollabApp({
      engine: 'automerge',
      storage,
      limits: { maxDocumentBytes: 64 * 1024 },
    })
    const writer = await openDoc(wsBase, 'notes/cap')
    writer.handle.change((doc: any) => {
      doc.small = 'fits'
    })
    await waitFor(
      async () => (await storedDoc(storage, 'notes/cap'))?.small === 'fits',
      5000,
      'small change stored'
    )
    const closed = new Promise<number>((resolve) =>
      (writer.adapter.socket as any).once('close', (code: number) => resolve(code))
    )
    stopRetrying(writer)
    writer.handle.change((doc: any) => {
      // random text does not compress: well past 64 KiB in any encoding
      doc.big = randomBytes(96 * 1024).toString('base64')
    })
    assert.equal(await closed, 4413)

    const reader = await openDoc(wsBase, 'notes/cap', tokenFor('notes/cap', 'u2'))
    assert.equal(contentOf(reader.handle).small, 'fits')
    assert.isUndefined(contentOf(reader.handle).big)
    assert.isUndefined((await storedDoc(storage, 'notes/cap'))!.big)
  })

  test('a presence (ephemeral) message over maxAwarenessStateBytes closes with 4413 and reaches no peer', async ({
    assert,
  }) => {
    const { wsBase } = await setupCollabApp({ engine: 'automerge' })
    const sender = await openDoc(wsBase, 'notes/presence')
    const peer = await openDoc(wsBase, 'notes/presence', tokenFor('notes/presence', 'u2'))
    const received: unknown[] = []
    peer.handle.on('ephemeral-message', ({ message }) => received.push(message))

    sender.handle.broadcast({ cursor: 1 })
    await waitFor(() => received.length === 1, 5000, 'small presence relayed')

    const closed = new Promise<number>((resolve) =>
      (sender.adapter.socket as any).once('close', (code: number) => resolve(code))
    )
    stopRetrying(sender)
    sender.handle.broadcast({ name: 'x'.repeat(20 * 1024) })
    assert.equal(await closed, 4413)
    // a marker from the peer's side proves the relay had time to pass the big one on
    const third = await openDoc(wsBase, 'notes/presence', tokenFor('notes/presence', 'u3'))
    third.handle.broadcast({ marker: true })
    const isGoodbye = (message: any) => message?.__presence?.type === 'goodbye'
    await waitFor(() => received.some((message: any) => message.marker), 5000, 'marker relayed')
    assert.deepEqual(
      received.filter((message) => !isGoodbye(message)),
      [{ cursor: 1 }, { marker: true }]
    )
    // the closed sender's goodbye, sent by the server on its behalf
    assert.equal(received.filter(isGoodbye).length, 1)
  })

  test('a presence message reaches each other peer once and never comes back to its sender', async ({
    assert,
  }) => {
    const { wsBase } = await setupCollabApp({ engine: 'automerge' })
    const alice = await openDoc(wsBase, 'notes/echo')
    const bob = await openDoc(wsBase, 'notes/echo', tokenFor('notes/echo', 'u2'))
    const seenBy = { alice: [] as unknown[], bob: [] as unknown[] }
    alice.handle.on('ephemeral-message', ({ message }) => seenBy.alice.push(message))
    bob.handle.on('ephemeral-message', ({ message }) => seenBy.bob.push(message))

    // bob's repo forwards what it receives to its only peer, the server: that
    // copy must not be relayed to alice as a new message of bob's
    alice.handle.broadcast({ from: 'alice' })
    await waitFor(() => seenBy.bob.length === 1, 5000, 'bob has the message')
    // a marker from bob after it: once alice has it, an echo would have arrived before
    bob.handle.broadcast({ from: 'bob' })
    await waitFor(() => seenBy.alice.length > 0, 5000, 'alice has the marker')
    assert.deepEqual(seenBy.alice, [{ from: 'bob' }])
    alice.handle.broadcast({ from: 'alice', again: true })
    await waitFor(() => seenBy.bob.length === 2, 5000, 'bob has the second message')
    assert.deepEqual(seenBy.bob, [{ from: 'alice' }, { from: 'alice', again: true }])
  })
})
