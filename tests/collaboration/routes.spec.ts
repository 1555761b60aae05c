/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import * as Y from 'yjs'
import type { HttpContext } from '@adonisjs/core/http'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { verifyCollabToken } from '../../src/collaboration/tokens.ts'
import type { CollaborationConfigInput } from '../../src/collaboration/types.ts'
import { SECRET, connectClient, setupCollabApp } from './helpers.ts'

const permissions: Record<string, { canRead: boolean; canWrite: boolean; canComment: boolean }> = {
  writer: { canRead: true, canWrite: true, canComment: true },
  author: { canRead: true, canWrite: false, canComment: true },
  reader: { canRead: true, canWrite: false, canComment: false },
  nobody: { canRead: false, canWrite: false, canComment: false },
}

const WORKER_SECRET = 'room-worker-secret'

async function setupRoutesApp(extra: CollaborationConfigInput = {}) {
  const storage = new InMemoryCollaborationStorage()
  const app = await setupCollabApp({
    storage,
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
      if (id === 'broken') {
        throw new Error('policy service down')
      }
      return permissions[id] ?? permissions.nobody
    },
  })
  const call = (
    method: string,
    path: string,
    user?: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ) =>
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
  return { ...app, storage, call }
}

const anchor = { kind: 'text-range', start: 0, end: 3, selectedText: 'abc' }

test.group('Collaboration routes', () => {
  test('GET /token answers 401 without a user, 403 on a denial and 503 when the rule throws', async ({
    assert,
  }) => {
    const { call } = await setupRoutesApp()
    const anonymous = await call('GET', '/token?doc=notes/1')
    assert.equal(anonymous.status, 401)
    assert.equal((await anonymous.json()).errors[0].code, 'E_COLLAB_UNAUTHORIZED')
    assert.equal((await call('GET', '/token?doc=notes/1', 'nobody')).status, 403)
    const broken = await call('GET', '/token?doc=notes/1', 'broken')
    assert.equal(broken.status, 503)
    assert.equal((await broken.json()).errors[0].code, 'E_COLLAB_AUTHORIZATION_FAILED')
    assert.equal((await call('GET', '/token', 'writer')).status, 422)
  })

  test('GET /token issues a token a y-websocket client connects with', async ({ assert }) => {
    const { call, url } = await setupRoutesApp()
    const response = await call('GET', '/token?doc=notes/1', 'writer')
    assert.equal(response.status, 200)
    const info = await response.json()
    assert.equal(info.engine, 'yjs')
    assert.equal(info.wsUrl, `${url.replace('http', 'ws')}/collaboration/notes/1`)
    assert.isAbove(Date.parse(info.expiresAt), Date.now() + 290_000)
    const payload = verifyCollabToken(info.token, SECRET, 'notes/1')
    assert.equal(payload!.userId, 'writer')
    assert.equal(payload!.user!.name, 'User writer')
    assert.isNull(verifyCollabToken(info.token, SECRET, 'notes/2'))
    const client = connectClient(info.wsUrl.replace('/notes/1', ''), 'notes/1', info.token)
    await client.synced
  })

  test('comment writes need canComment; patch and delete need the author or canWrite', async ({
    assert,
  }) => {
    const { call } = await setupRoutesApp()
    const denied = await call('POST', '/comments', 'reader', {
      docName: 'd/1',
      space: 'main',
      anchor,
      body: 'hi',
    })
    assert.equal(denied.status, 403)

    const created = await call('POST', '/comments', 'author', {
      docName: 'd/1',
      space: 'main',
      anchor,
      body: 'hi',
    })
    assert.equal(created.status, 201)
    const comment = await created.json()
    assert.equal(comment.userId, 'author')
    assert.equal(comment.authorName, 'User author')
    assert.deepEqual(comment.anchor, anchor)

    assert.equal((await call('PATCH', `/comments/${comment.id}?doc=d/1`, 'reader', {})).status, 403)
    assert.equal((await call('DELETE', `/comments/${comment.id}?doc=d/1`, 'reader')).status, 403)

    const resolved = await call('PATCH', `/comments/${comment.id}?doc=d/1`, 'author', {})
    assert.equal(resolved.status, 200)
    assert.isString((await resolved.json()).resolvedAt)
    const reopened = await call('PATCH', `/comments/${comment.id}?doc=d/1`, 'writer', {
      resolved: false,
    })
    assert.isNull((await reopened.json()).resolvedAt)

    const list = await call('GET', '/comments?doc=d/1&space=main&page=1&size=500', 'reader')
    assert.lengthOf(await list.json(), 1)
    assert.equal((await call('DELETE', `/comments/${comment.id}?doc=d/1`, 'writer')).status, 204)
    assert.equal((await call('DELETE', `/comments/${comment.id}?doc=d/1`, 'writer')).status, 404)
    assert.equal((await call('GET', '/comments?doc=d/1', 'nobody')).status, 403)
  })

  test('invalid comment input answers 422 naming the problem', async ({ assert }) => {
    const { call } = await setupRoutesApp()
    const badAnchor = await call('POST', '/comments', 'writer', {
      docName: 'd/1',
      space: 'main',
      anchor: { kind: 'circle' },
      body: 'hi',
    })
    assert.equal(badAnchor.status, 422)
    assert.include((await badAnchor.json()).errors[0].message, 'anchor')
    const noBody = await call('POST', '/comments', 'writer', {
      docName: 'd/1',
      space: 'main',
      anchor,
    })
    assert.equal(noBody.status, 422)
  })

  test('version writes need canWrite; versions list by page and restore answers 204', async ({
    assert,
  }) => {
    const { call, manager } = await setupRoutesApp()
    const doc = new Y.Doc()
    doc.getText('content').insert(0, 'first draft')
    await manager.persistDocument({ docName: 'v/1', state: Y.encodeStateAsUpdate(doc) })

    assert.equal((await call('POST', '/versions', 'author', { docName: 'v/1' })).status, 403)
    const created = await call('POST', '/versions', 'writer', { docName: 'v/1', label: 'one' })
    assert.equal(created.status, 201)
    const version = await created.json()
    assert.deepInclude(version, { seq: 1, label: 'one', createdBy: 'writer' })

    const edit = new Y.Doc()
    Y.applyUpdate(edit, await manager.getDocumentState({ docName: 'v/1' }))
    edit.getText('content').delete(0, 6)
    await manager.persistDocument({ docName: 'v/1', state: Y.encodeStateAsUpdate(edit) })

    assert.equal(
      (await call('POST', '/versions/restore', 'reader', { docName: 'v/1', versionId: version.id }))
        .status,
      403
    )
    const restored = await call('POST', '/versions/restore', 'writer', {
      docName: 'v/1',
      versionId: version.id,
    })
    assert.equal(restored.status, 204)
    assert.equal(await manager.getDocumentText({ docName: 'v/1' }), 'first draft')

    const page = await call('GET', '/versions?doc=v/1&page=1&size=1', 'reader')
    assert.deepEqual(
      (await page.json()).map((row: any) => row.label),
      ['restored from #1']
    )
    assert.equal(
      (await call('POST', '/versions/restore', 'writer', { docName: 'v/1', versionId: 'nope' }))
        .status,
      404
    )
  })

  test('/state serves octet-stream and stores a raw binary body behind the worker secret', async ({
    assert,
  }) => {
    const { call, manager } = await setupRoutesApp()
    const doc = new Y.Doc()
    doc.getText('content').insert(0, 'from the worker ✓ ')
    doc.getMap('meta').set('blob', new Uint8Array([0, 128, 255, 10, 13]))
    const state = Y.encodeStateAsUpdate(doc)

    const headers = { 'content-type': 'application/octet-stream' }
    const noSecret = await call('POST', '/state?doc=w/1', undefined, undefined, headers)
    assert.equal(noSecret.status, 403)
    const bad = await call('POST', '/state?doc=w/1', undefined, state, {
      ...headers,
      'x-collab-worker-secret': 'guess',
    })
    assert.equal(bad.status, 403)
    const tokenSecret = await call('POST', '/state?doc=w/1', undefined, state, {
      ...headers,
      'x-collab-worker-secret': SECRET,
    })
    assert.equal(tokenSecret.status, 403)
    const good = await call('POST', '/state?doc=w/1', undefined, state, {
      ...headers,
      'x-collab-worker-secret': WORKER_SECRET,
    })
    assert.equal(good.status, 204)
    assert.equal(await manager.getDocumentText({ docName: 'w/1' }), 'from the worker ✓ ')

    const read = await call('GET', '/state?doc=w/1', undefined, undefined, {
      'x-collab-worker-secret': WORKER_SECRET,
    })
    assert.equal(read.headers.get('content-type'), 'application/octet-stream')
    const copy = new Y.Doc()
    Y.applyUpdate(copy, new Uint8Array(await read.arrayBuffer()))
    assert.deepEqual([...(copy.getMap('meta').get('blob') as Uint8Array)], [0, 128, 255, 10, 13])
    assert.equal((await call('GET', '/state?doc=w/1')).status, 401)
    assert.equal((await call('GET', '/state?doc=w/1', 'reader')).status, 200)
  })
})
