/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import * as A from '@automerge/automerge'
import type { HttpContext } from '@adonisjs/core/http'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'
import type { CollaborationConfigInput } from '../../src/collaboration/types.ts'
import { createDatabase } from '../helpers.ts'
import { migrateStubs } from '../migration_stubs.ts'
import { setupCollabApp, tokenFor, waitFor } from './helpers.ts'
import { connectRepoTo, contentOf, openDoc, storedDoc } from './automerge_helpers.ts'

const permissions: Record<string, { canRead: boolean; canWrite: boolean; canComment: boolean }> = {
  writer: { canRead: true, canWrite: true, canComment: true },
  reader: { canRead: true, canWrite: false, canComment: false },
}

const WORKER_SECRET = 'room-worker-secret'

/**
 * An app serving Automerge documents from the relational storage of the
 * run's database, with users named by the `x-user` header.
 */
async function setupAutomergeApp(extra: CollaborationConfigInput = {}) {
  const db = await createDatabase()
  await migrateStubs(db, 'collaboration')
  const app = await setupCollabApp(
    {
      engine: 'automerge',
      storage: relationalStorage(),
      debounce: 60_000,
      hosted: { roomHost: 'rooms.test', workerSecret: WORKER_SECRET },
      ...extra,
      routes: {
        resolveUser: (ctx: HttpContext) => {
          const id = ctx.request.header('x-user')
          return id ? { id, name: `User ${id}` } : null
        },
      },
      authorize: (ctx: any) => {
        const id = ctx.request?.header?.('x-user') ?? ctx.connection?.userId
        return permissions[id] ?? { canRead: false, canWrite: false, canComment: false }
      },
    },
    { database: true }
  )
  const call = (method: string, path: string, user?: string, body?: unknown, headers = {}) =>
    fetch(`${app.url}/collaboration${path}`, {
      method,
      headers: {
        ...(user ? { 'x-user': user } : {}),
        ...(body !== undefined && !(body instanceof Uint8Array)
          ? { 'content-type': 'application/json' }
          : {}),
        ...headers,
      },
      body:
        body === undefined ? undefined : body instanceof Uint8Array ? body : JSON.stringify(body),
    }) as Promise<Omit<Response, 'json'> & { json(): Promise<any> }>
  return { ...app, call }
}

test.group('Automerge engine: versions and REST routes', () => {
  test('GET /token names the engine and document id; a Repo connects with it', async ({
    assert,
  }) => {
    const { call, url } = await setupAutomergeApp()
    const response = await call('GET', '/token?doc=todos/1', 'writer')
    assert.equal(response.status, 200)
    const info = await response.json()
    assert.equal(info.engine, 'automerge')
    assert.equal(info.documentId, automergeDocumentId('todos/1'))
    assert.equal(info.wsUrl, `${url.replace('http', 'ws')}/collaboration/todos/1`)

    const client = connectRepoTo(info.wsUrl, info.token)
    await client.connected
    const handle = await client.repo.find<any>(`automerge:${info.documentId}` as any)
    handle.change((doc: any) => {
      doc.todos = ['write the docs']
    })
    await waitFor(async () => {
      const state = await call('GET', '/state?doc=todos/1', 'reader')
      const doc = A.load<any>(new Uint8Array(await state.arrayBuffer()))
      return doc.todos?.[0] === 'write the docs'
    })
  })

  test('a version is a head; restoring it brings deleted content back as a new change', async ({
    assert,
  }) => {
    const { call, manager, wsBase } = await setupAutomergeApp()
    const client = await openDoc(wsBase, 'v/1', tokenFor('v/1', 'writer'))
    client.handle.change((doc: any) => {
      doc.content = 'first draft'
      doc.todos = [{ title: 'keep me' }]
    })
    await waitFor(async () => (await manager.getDocumentText({ docName: 'v/1' })) === 'first draft')

    assert.equal((await call('POST', '/versions', 'reader', { docName: 'v/1' })).status, 403)
    const created = await call('POST', '/versions', 'writer', { docName: 'v/1', label: 'one' })
    assert.equal(created.status, 201)
    const version = await created.json()
    assert.deepInclude(version, { seq: 1, label: 'one', createdBy: 'writer' })
    const snapshot = A.load(
      await manager.getVersionState({ docName: 'v/1', versionId: version.id })
    )
    assert.deepEqual(A.getHeads(snapshot), [version.id])

    client.handle.change((doc: any) => {
      A.splice(doc, ['content'], 0, 6)
      doc.todos.deleteAt(0)
    })
    await waitFor(async () => (await manager.getDocumentText({ docName: 'v/1' })) === 'draft')
    const historyBefore = A.getHistory(client.handle.doc()).length

    const restored = await call('POST', '/versions/restore', 'writer', {
      docName: 'v/1',
      versionId: version.id,
    })
    assert.equal(restored.status, 204)
    await waitFor(() => contentOf(client.handle).content === 'first draft', 5000, 'client')
    assert.deepEqual(contentOf(client.handle).todos, [{ title: 'keep me' }])
    // new changes on top of the deletion, not a rewind
    assert.isAbove(A.getHistory(client.handle.doc()).length, historyBefore)

    const page = await call('GET', '/versions?doc=v/1&page=1&size=1', 'reader')
    const [latest] = await page.json()
    assert.equal(latest.label, 'restored from #1')
    assert.match(latest.id, /^[0-9a-f]{64}$/)
    const diff = await manager.diffVersions({ docName: 'v/1', aId: version.id, bId: latest.id })
    assert.deepEqual(diff, { added: 0, removed: 6 })

    await waitFor(
      async () => (await storedDoc(manager.config.storage, 'v/1'))?.content === 'first draft',
      5000,
      'stored'
    )
  })

  test('/state takes Automerge bytes from the worker and merges them', async ({ assert }) => {
    const { call, manager } = await setupAutomergeApp()
    const current = A.load<any>(await manager.getDocumentState({ docName: 'w/1' }))
    const edited = A.change(A.clone(current), (doc: any) => {
      doc.content = 'from the worker ✓'
    })
    const headers = { 'content-type': 'application/octet-stream' }
    const bad = await call('POST', '/state?doc=w/1', undefined, A.save(edited), {
      ...headers,
      'x-collab-worker-secret': 'guess',
    })
    assert.equal(bad.status, 403)
    const good = await call('POST', '/state?doc=w/1', undefined, A.save(edited), {
      ...headers,
      'x-collab-worker-secret': WORKER_SECRET,
    })
    assert.equal(good.status, 204)
    assert.equal(await manager.getDocumentText({ docName: 'w/1' }), 'from the worker ✓')
    const garbage = await call('POST', '/state?doc=w/1', undefined, new Uint8Array([1, 2, 3]), {
      ...headers,
      'x-collab-worker-secret': WORKER_SECRET,
    })
    assert.equal(garbage.status, 422)
    assert.equal(await manager.getDocumentText({ docName: 'w/1' }), 'from the worker ✓')
  })

  test('comments work on an Automerge document', async ({ assert }) => {
    const { call } = await setupAutomergeApp()
    const anchor = { kind: 'text-range', start: 0, end: 5, selectedText: 'first' }
    const created = await call('POST', '/comments', 'writer', {
      docName: 'c/1',
      space: 'main',
      anchor,
      body: 'nice',
    })
    assert.equal(created.status, 201)
    const list = await (await call('GET', '/comments?doc=c/1', 'reader')).json()
    assert.deepEqual(
      list.map((comment: any) => [comment.body, comment.userId]),
      [['nice', 'writer']]
    )
  })
})
