import { test } from '@japa/runner'
import type { HttpContext } from '@adonisjs/core/http'
import { setupCollabApp, SECRET, tokenFor, waitFor } from './helpers.ts'
import { CollabClient } from '../../src/collaboration/client/client.ts'
import { DocSession } from '../../src/collaboration/client/session.ts'
import {
  CollabRestError,
  createComment,
  createVersion,
  deleteComment,
  fetchToken,
  listComments,
  listVersions,
  resolveComment,
  restoreVersion,
} from '../../src/collaboration/client/rest.ts'
import type { CollabClientConfig, CollabStatus } from '../../src/collaboration/client/types.ts'

const readers: Record<string, { canRead: boolean; canWrite: boolean; canComment: boolean }> = {
  alice: { canRead: true, canWrite: true, canComment: true },
  bob: { canRead: true, canWrite: true, canComment: true },
  reader: { canRead: true, canWrite: false, canComment: false },
}
const nobody = { canRead: false, canWrite: false, canComment: false }

/**
 * An app whose REST routes know the caller from `x-user`, and a client
 * config per user, as a browser page would have.
 */
async function setupClientApp() {
  const app = await setupCollabApp({
    routes: {
      resolveUser: (ctx: HttpContext) => {
        const id = ctx.request.header('x-user')
        return id ? { id, name: `User ${id}` } : null
      },
    },
    authorize: (ctx: any) =>
      readers[ctx.request?.header?.('x-user') ?? ctx.connection?.userId] ?? nobody,
  })
  const configFor = (user: string, extra: CollabClientConfig = {}): CollabClientConfig => ({
    baseUrl: app.url,
    getHeaders: () => ({ 'x-user': user }),
    maxBackoffMs: 200,
    ...extra,
  })
  return { ...app, configFor }
}

/** A session started for the test, destroyed when it ends */
function openSession(
  docName: string,
  config: CollabClientConfig,
  cleanup: (fn: () => void) => void
) {
  const session = new DocSession(docName, config)
  const statuses: CollabStatus[] = [session.getStatus()]
  session.subscribe(() => {
    if (statuses.at(-1) !== session.getStatus()) statuses.push(session.getStatus())
  })
  session.start()
  cleanup(() => session.destroy())
  return { session, statuses, text: session.doc.getText('content') }
}

test.group('Collaboration client | REST', () => {
  test('token, comments and versions round-trip through the routes', async ({ assert }) => {
    const { configFor, manager } = await setupClientApp()
    const alice = configFor('alice')
    const docName = 'rest/notes'

    const token = await fetchToken(alice, docName)
    assert.equal(token.engine, 'yjs')
    assert.match(token.wsUrl, /^ws:\/\/127\.0\.0\.1:\d+\/collaboration\/rest\/notes$/)
    assert.isAbove(Date.parse(token.expiresAt!), Date.now())

    const created = await createComment(alice, {
      docName,
      space: 'margin',
      anchor: { kind: 'text-range', start: 0, end: 5, selectedText: 'Hello' },
      body: 'Shorter?',
    })
    assert.equal(created.userId, 'alice')
    assert.equal(created.authorName, 'User alice')
    const listed = await listComments(alice, docName, { space: 'margin' })
    assert.deepEqual(
      listed.map((comment) => comment.body),
      ['Shorter?']
    )
    assert.deepEqual(await listComments(alice, docName, { space: 'other' }), [])
    const resolved = await resolveComment(alice, docName, created.id)
    assert.isString(resolved.resolvedAt)
    const reopened = await resolveComment(alice, docName, created.id, false)
    assert.isNull(reopened.resolvedAt)
    assert.isUndefined(await deleteComment(alice, docName, created.id))
    assert.deepEqual(await listComments(alice, docName), [])

    const version = await createVersion(alice, docName, 'empty')
    assert.equal(version.label, 'empty')
    assert.equal(version.createdBy, 'alice')
    const versions = await listVersions(alice, docName)
    assert.deepEqual(
      versions.map((entry) => entry.id),
      [version.id]
    )
    assert.isUndefined(await restoreVersion(alice, docName, version.id))
    // the restore snapshots the replaced state first
    assert.lengthOf(await manager.listVersions({ docName }), 2)
  })

  test('a refused call throws CollabRestError with the status and the JSON body', async ({
    assert,
  }) => {
    const { configFor } = await setupClientApp()
    const error = await createVersion(configFor('reader'), 'rest/locked').catch((e) => e)
    assert.instanceOf(error, CollabRestError)
    assert.equal(error.status, 403)
    assert.equal(error.code, 'E_COLLAB_FORBIDDEN')
    assert.match(error.message, /Creating versions of "rest\/locked" is not allowed/)
    assert.equal((error.body as any).errors[0].code, 'E_COLLAB_FORBIDDEN')

    const anonymous = await fetchToken(
      { ...configFor('x'), getHeaders: undefined },
      'rest/a'
    ).catch((e) => e)
    assert.instanceOf(anonymous, CollabRestError)
    assert.equal(anonymous.status, 401)
  })
})

test.group('Collaboration client | DocSession', (group) => {
  group.each.timeout(20_000)

  test('connects, reports synced once the server state is applied, and converges', async ({
    assert,
    cleanup,
  }) => {
    const { configFor, manager } = await setupClientApp()
    const docName = 'session/converge'
    const a = openSession(docName, configFor('alice'), cleanup)
    assert.equal(a.session.getStatus(), 'connecting')
    assert.isFalse(a.session.synced)
    await waitFor(() => a.session.synced, 5000, 'alice synced')
    assert.equal(a.session.getStatus(), 'connected')
    assert.equal(a.session.engine, 'yjs')
    a.text.insert(0, 'from alice')

    const b = openSession(docName, configFor('bob'), cleanup)
    // synced means the server's state is applied: bob has alice's text the moment it is true
    await waitFor(() => b.session.synced, 5000, 'bob synced')
    assert.equal(b.text.toString(), 'from alice')
    assert.deepEqual(b.statuses, ['connecting', 'connected'])
    b.text.insert(b.text.length, ' and bob')
    await waitFor(() => a.text.toString() === 'from alice and bob', 5000, 'alice sees bob')
    await waitFor(
      async () => (await manager.getDocumentText({ docName })) === 'from alice and bob',
      5000,
      'server text'
    )
  })

  test('stop keeps the document and its offline edits; start sends them', async ({
    assert,
    cleanup,
  }) => {
    const { configFor } = await setupClientApp()
    const docName = 'session/offline'
    const a = openSession(docName, configFor('alice'), cleanup)
    const b = openSession(docName, configFor('bob'), cleanup)
    await waitFor(() => a.session.synced && b.session.synced, 5000, 'both synced')

    a.session.stop()
    assert.equal(a.session.getStatus(), 'disconnected')
    assert.isFalse(a.session.synced)
    assert.isNull(a.session.transport)
    a.text.insert(0, 'offline edit')
    b.text.insert(0, 'online edit ')
    await waitFor(() => b.text.toString() === 'online edit ', 5000, 'bob alone')

    a.session.start()
    a.session.start()
    await waitFor(() => a.session.synced, 5000, 'alice back')
    await waitFor(() => b.text.toString() === a.text.toString(), 5000, 'converged')
    assert.include(b.text.toString(), 'offline edit')
    assert.include(b.text.toString(), 'online edit')
  })

  test('retain holds the session, the last release stops it, destroy evicts it', async ({
    assert,
    cleanup,
  }) => {
    const { configFor } = await setupClientApp()
    const client = new CollabClient(configFor('alice'))
    cleanup(() => client.destroy())
    const session = client.session('session/refs')
    assert.strictEqual(client.session('session/refs'), session)

    const releaseFirst = session.retain()
    const releaseSecond = session.retain()
    assert.equal(session.refCount, 2)
    await waitFor(() => session.synced, 5000, 'synced')
    releaseFirst()
    releaseFirst()
    assert.equal(session.refCount, 1)
    assert.equal(session.getStatus(), 'connected')
    releaseSecond()
    assert.equal(session.refCount, 0)
    assert.equal(session.getStatus(), 'disconnected')
    assert.isFalse(session.isDestroyed)

    session.doc.getText('content').insert(0, 'kept')
    session.destroy()
    assert.isTrue(session.isDestroyed)
    assert.throws(() => session.start(), /destroyed/)
    const fresh = client.session('session/refs')
    assert.notStrictEqual(fresh, session)
    assert.equal(fresh.doc.getText('content').toString(), '')
  })

  test('a denied document ends in error with the endpoint 403', async ({ assert, cleanup }) => {
    const { configFor } = await setupClientApp()
    const denied = openSession('session/denied', configFor('mallory'), cleanup)
    await waitFor(() => denied.session.getStatus() === 'error', 5000, 'error')
    assert.instanceOf(denied.session.error, CollabRestError)
    assert.equal((denied.session.error as CollabRestError).status, 403)
    assert.isFalse(denied.session.synced)
  })

  test('initialTokens serve the first connection; an expired one falls back to the endpoint', async ({
    assert,
    cleanup,
  }) => {
    const { configFor } = await setupClientApp()
    const docName = 'session/initial'
    const pre = {
      token: tokenFor(docName, 'alice'),
      wsUrl: `${configFor('alice').baseUrl!.replace('http', 'ws')}/collaboration/session/initial`,
      engine: 'yjs' as const,
      expiresAt: new Date(Date.now() + 300_000).toISOString(),
    }
    const given = openSession(
      docName,
      configFor('alice', { initialTokens: { [docName]: pre } }),
      cleanup
    )
    await waitFor(() => given.session.synced, 5000, 'synced with the initial token')
    assert.equal(given.session.tokens.fetched, 0)
    assert.strictEqual(given.session.tokens.current, pre)

    const expired = { ...pre, expiresAt: new Date(Date.now() - 1000).toISOString() }
    const fallback = openSession(
      docName,
      configFor('bob', { initialTokens: { [docName]: expired, other: { bad: 1 } as any } }),
      cleanup
    )
    await waitFor(() => fallback.session.synced, 5000, 'synced with a fetched token')
    assert.equal(fallback.session.tokens.fetched, 1)
    assert.notEqual(fallback.session.tokens.current!.token, pre.token)
  })

  test('a short-lived token is renewed before it expires, without a disconnect', async ({
    assert,
    cleanup,
  }) => {
    const { configFor } = await setupClientApp()
    const docName = 'session/refresh'
    const ttl = 3
    const pre = {
      token: tokenFor(docName, 'alice', { secret: SECRET, ttl }),
      wsUrl: `${configFor('alice').baseUrl!.replace('http', 'ws')}/collaboration/${docName}`,
      engine: 'yjs' as const,
      expiresAt: new Date(Date.now() + ttl * 1000).toISOString(),
    }
    const a = openSession(
      docName,
      configFor('alice', { initialTokens: { [docName]: pre } }),
      cleanup
    )
    await waitFor(() => a.session.synced, 5000, 'synced')
    await waitFor(() => a.session.tokens.fetched === 1, 8000, 'renewed')
    assert.notEqual(a.session.tokens.current!.token, pre.token)
    assert.deepEqual(a.statuses, ['connecting', 'connected'])

    // once the first token has expired, a dropped socket reconnects with the new one
    await waitFor(() => Date.now() > Date.parse(pre.expiresAt), 5000, 'first token expired')
    ;(a.session.transport as any).reconnect()
    await waitFor(() => a.session.getStatus() !== 'connected', 5000, 'dropped')
    await waitFor(() => a.session.synced, 5000, 'reconnected')
    assert.deepEqual(a.statuses, [
      'connecting',
      'connected',
      'disconnected',
      'connecting',
      'connected',
    ])
  })

  test('a token the server refuses is replaced from the endpoint; a denied one is final', async ({
    assert,
    cleanup,
  }) => {
    const { configFor } = await setupClientApp()
    const docName = 'session/refused'
    const forged = (user: string) => ({
      token: tokenFor(docName, user, { secret: 'not-the-server-secret' }),
      wsUrl: `${configFor(user).baseUrl!.replace('http', 'ws')}/collaboration/${docName}`,
      engine: 'yjs' as const,
      expiresAt: new Date(Date.now() + 300_000).toISOString(),
    })
    const alice = openSession(
      docName,
      configFor('alice', { initialTokens: { [docName]: forged('alice') } }),
      cleanup
    )
    await waitFor(() => alice.session.synced, 8000, 'synced with a fetched token')
    assert.equal(alice.session.tokens.fetched, 1)

    const mallory = openSession(
      docName,
      configFor('mallory', { initialTokens: { [docName]: forged('mallory') } }),
      cleanup
    )
    await waitFor(() => mallory.session.getStatus() === 'error', 8000, 'error')
    assert.instanceOf(mallory.session.error, CollabRestError)
    assert.equal((mallory.session.error as CollabRestError).status, 403)
    assert.notInclude(mallory.statuses, 'connected')
  })

  test('while the app stops, the routes answer 503 with Connection: close and a session asks for one token, not one per attempt', async ({
    assert,
    cleanup,
  }) => {
    const { configFor, manager, server, url } = await setupClientApp()
    const docName = 'session/shutdown'
    const alice = openSession(docName, configFor('alice'), cleanup)
    await waitFor(() => alice.session.synced, 5000, 'synced')
    let tokenRequests = 0
    server!.on('request', (request) => {
      if (request.url?.startsWith('/collaboration/token')) tokenRequests++
    })

    // the service closes first, then the HTTP server: in between, the app still answers
    await manager.close()
    const response = await fetch(`${url}/collaboration/token?doc=${docName}`, {
      headers: { 'x-user': 'alice' },
    })
    assert.equal(response.status, 503)
    assert.equal(response.headers.get('connection'), 'close')
    const body = (await response.json()) as { errors: { code: string }[] }
    assert.equal(body.errors[0].code, 'E_COLLAB_SHUTTING_DOWN')

    // the upgrades it refuses back off; the endpoint was asked once for the whole outage
    const provider = (alice.session.transport as any).provider
    await waitFor(() => provider.wsUnsuccessfulReconnects >= 5, 10_000, 'five refused upgrades')
    assert.equal(tokenRequests, 2)
    assert.notEqual(alice.session.getStatus(), 'error')
  }).timeout(30_000)
})
