import { test } from '@japa/runner'
import type { AddressInfo } from 'node:net'
import { WebSocketServer } from 'ws'
import { Presence, Repo, type DocHandle } from '@automerge/automerge-repo'
import {
  BrowserWebSocketClientAdapter,
  WebSocketServerAdapter,
} from '@automerge/automerge-repo-network-websocket'
import { DocSession } from '../../src/collaboration/client/session.ts'
import { createAutomergeTransport } from '../../src/collaboration/client/automerge_transport.ts'
import type { CollabStatus } from '../../src/collaboration/client/types.ts'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'
import { setupCollabApp, tokenFor, waitFor } from './helpers.ts'

interface Todo {
  items: string[]
}

/**
 * The reference automerge-repo sync server (a `Repo` with its WebSocket
 * server adapter, no Atrium), with one document, recording the URL of every
 * socket it accepts. It checks no token: what this proves is that the
 * transport speaks the automerge-repo protocol and carries its token.
 */
async function referenceServer(cleanup: (fn: () => Promise<void>) => void) {
  const urls: string[] = []
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  wss.on('connection', (_socket, request) => urls.push(request.url ?? ''))
  await new Promise((resolve) => wss.once('listening', resolve))
  const repo = new Repo({ network: [new WebSocketServerAdapter(wss as any)] })
  const handle = repo.create<Todo>({ items: ['seeded'] })
  cleanup(async () => {
    await repo.shutdown()
    wss.close()
  })
  const port = (wss.address() as AddressInfo).port
  return { repo, handle, urls, wsUrl: `ws://127.0.0.1:${port}/collaboration/todo/1` }
}

test.group('Collaboration client | Automerge transport', (group) => {
  group.each.timeout(20_000)

  test('syncs an automerge-repo document both ways with the token in the URL', async ({
    assert,
    cleanup,
  }) => {
    const server = await referenceServer(cleanup)
    const session = new DocSession('todo/1', {
      createTransport: createAutomergeTransport(
        { Repo, BrowserWebSocketClientAdapter },
        { retryIntervalMs: 100 }
      ),
      initialTokens: {
        'todo/1': {
          token: 'first-token',
          wsUrl: server.wsUrl,
          engine: 'automerge',
          expiresAt: new Date(Date.now() + 300_000).toISOString(),
          documentId: server.handle.documentId,
        } as any,
      },
    })
    const statuses: CollabStatus[] = [session.getStatus()]
    session.subscribe(() => {
      if (statuses.at(-1) !== session.getStatus()) statuses.push(session.getStatus())
    })
    session.start()
    cleanup(async () => session.destroy())

    await waitFor(() => session.synced, 10_000, 'connected')
    assert.equal(session.engine, 'automerge')
    assert.isNotEmpty(server.urls)
    assert.deepEqual([...new Set(server.urls)], ['/collaboration/todo/1?token=first-token'])
    const handle = session.transport!.doc as DocHandle<Todo>
    assert.deepEqual(handle.doc()?.items, ['seeded'])

    handle.change((doc) => {
      doc.items.push('from the client')
    })
    await waitFor(() => server.handle.doc()?.items.length === 2, 5000, 'the server has the change')
    server.handle.change((doc) => {
      doc.items.push('from the server')
    })
    await waitFor(() => handle.doc()?.items.length === 3, 5000, 'the client has the change')
    assert.deepEqual(handle.doc()?.items, ['seeded', 'from the client', 'from the server'])
    assert.deepEqual(statuses, ['connecting', 'connected'])
  })

  test('a token without a documentId is an error naming it', async ({ assert, cleanup }) => {
    const session = new DocSession('todo/2', {
      createTransport: createAutomergeTransport({ Repo, BrowserWebSocketClientAdapter }),
      initialTokens: {
        'todo/2': {
          token: 't',
          wsUrl: 'ws://127.0.0.1:9/collaboration/todo/2',
          engine: 'automerge',
        },
      },
      baseUrl: 'http://127.0.0.1:9',
      maxBackoffMs: 50,
    })
    session.start()
    cleanup(async () => session.destroy())
    await waitFor(() => session.error !== null, 5000, 'an error')
    assert.match(session.error!.message, /names no Automerge document \(documentId\)/)
  })

  test('presence through the app: each session sees the other, and forgets it on destroy', async ({
    assert,
    cleanup,
  }) => {
    const { wsBase } = await setupCollabApp({ engine: 'automerge' })
    const docName = 'todos/presence'
    const open = (user: string) => {
      const session = new DocSession(docName, {
        createTransport: createAutomergeTransport(
          { Repo, BrowserWebSocketClientAdapter, Presence },
          { retryIntervalMs: 100 }
        ),
        initialTokens: {
          [docName]: {
            token: tokenFor(docName, user),
            wsUrl: `${wsBase}/${docName}`,
            engine: 'automerge',
            expiresAt: new Date(Date.now() + 300_000).toISOString(),
            documentId: automergeDocumentId(docName),
          } as any,
        },
      })
      session.start()
      cleanup(async () => session.destroy())
      return session
    }
    const names = (session: DocSession) =>
      [...(session.transport?.awareness?.getStates().values() ?? [])]
        .map((state) => state.user?.name)
        .sort()
        .join(',')

    const alice = open('alice')
    const bob = open('bob')
    await waitFor(() => Boolean(alice.transport?.awareness && bob.transport?.awareness), 10_000)
    alice.transport!.awareness!.setLocalStateField('user', { name: 'alice' })
    bob.transport!.awareness!.setLocalStateField('user', { name: 'bob' })
    await waitFor(() => names(alice) === 'alice,bob', 10_000, 'alice sees bob')
    await waitFor(() => names(bob) === 'alice,bob', 10_000, 'bob sees alice')

    let changes = 0
    alice.transport!.awareness!.on('change', () => changes++)
    bob.transport!.awareness!.setLocalStateField('user', { name: 'bob', color: '#1971c2' })
    await waitFor(
      () =>
        [...alice.transport!.awareness!.getStates().values()].some(
          (state) => state.user?.color === '#1971c2'
        ),
      10_000,
      'alice sees bob change'
    )
    assert.isAbove(changes, 0)

    // a goodbye, not the time to live: the peer is gone at once
    bob.destroy()
    await waitFor(() => names(alice) === 'alice', 10_000, 'alice forgets bob')
    assert.equal(alice.transport!.awareness!.getLocalState()?.user?.name, 'alice')
  })
})
