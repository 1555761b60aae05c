/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import { createHmac } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { HttpContext } from '@adonisjs/core/http'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { MAX_PAGE_SIZE } from '../../src/collaboration/storage/paging.ts'
import { MAX_JSON_BYTES, MAX_STATE_BYTES } from '../../src/collaboration/http/routes.ts'
import type { CollabComment, CollaborationConfigInput } from '../../src/collaboration/types.ts'
import { SECRET, allow, setupCollabApp } from '../collaboration/helpers.ts'

/**
 * A token for any name, signed the way the server signs (HS256 over the
 * compact JWT), without the signer's own name check: what a token minted
 * before the check, or by hand with a leaked secret, looks like.
 */
function forgedToken(docName: string, secret = SECRET) {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
  const payload = Buffer.from(
    JSON.stringify({ userId: 'mallory', docName, exp: Math.floor(Date.now() / 1000) + 60 })
  ).toString('base64url')
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url')
  return `${header}.${payload}.${signature}`
}

/**
 * Upgrades `path` byte for byte (a WHATWG URL would fold `%2E%2E` away) and
 * resolves with the close code of the server's first frame, or "open" when
 * its first frame is a message: the document was served.
 */
function handshake(base: string, path: string): Promise<'open' | number | `http ${number}`> {
  const { host, port } = new URL(base)
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: host.split(':')[0],
      port,
      path,
      headers: {
        'connection': 'Upgrade',
        'upgrade': 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
      },
    })
    request.on('upgrade', (_response, socket, head) => {
      const first = (frame: Buffer) => {
        socket.destroy()
        // 0x88 is a close frame: its payload starts with the code
        resolve((frame[0] & 0x0f) === 0x8 ? frame.readUInt16BE(2) : 'open')
      }
      if (head.length) first(head)
      else socket.once('data', first)
    })
    request.on('response', (response) => {
      // refused before the upgrade: the HTTP status
      response.resume()
      resolve(`http ${response.statusCode!}`)
    })
    request.on('error', reject)
    request.end()
  })
}

async function setupRestApp(fsBase: string, config: CollaborationConfigInput = {}) {
  const baseDir = join(fsBase, 'documents')
  const app = await setupCollabApp({
    storage: new FileSystemStorage(baseDir),
    // one segment: the rule an app writes for top-level documents
    documents: { ':name': { authorize: () => allow } },
    routes: {
      resolveUser: (ctx: HttpContext) => {
        const id = ctx.request.header('x-user')
        return id ? { id } : null
      },
    },
    ...config,
  })
  const call = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ) =>
    fetch(`${app.url}/collaboration${path}`, {
      method,
      headers: {
        'x-user': 'mallory',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }) as Promise<Omit<Response, 'json'> & { json(): Promise<any> }>
  return { ...app, baseDir, call }
}

const anchor = { kind: 'text-range', start: 0, end: 1, selectedText: 'a' }

test.group('Hostile collaboration REST: document names', () => {
  test('"." and ".." never reach the folder above the file-system storage', async ({
    assert,
    fs,
  }) => {
    const { call, url, baseDir } = await setupRestApp(fs.basePath)
    for (const docName of ['..', '.']) {
      const created = await call('POST', '/comments', { docName, space: 's', anchor, body: 'x' })
      assert.equal(created.status, 422, docName)
      const body = await created.json()
      assert.equal(body.errors[0].code, 'E_COLLAB_VALIDATION')
      assert.match(body.errors[0].message, /"\." or "\.\." segment/)
      assert.equal((await call('GET', `/token?doc=${encodeURIComponent(docName)}`)).status, 422)
    }
    assert.equal(
      await handshake(url, `/collaboration/%2E%2E?token=${forgedToken('..')}`),
      'http 401'
    )
    assert.equal(await handshake(url, `/collaboration/%2E?token=${forgedToken('.')}`), 'http 401')
    // the same handshake serves a valid name, so the refusals above are about the name
    assert.equal(await handshake(url, `/collaboration/fine?token=${forgedToken('fine')}`), 'open')

    // a legitimate document still works, then nothing was written beside the storage folder
    const ok = await call('POST', '/comments', { docName: 'fine', space: 's', anchor, body: 'x' })
    assert.equal(ok.status, 201)
    assert.notIncludeMembers(await readdir(fs.basePath), [
      'comments.json',
      'state.bin',
      'updates.log',
    ])
    assert.deepEqual(await readdir(baseDir), ['fine'])
  })

  test('control characters, backslashes and empty segments are refused by every route', async ({
    assert,
    fs,
  }) => {
    const { call } = await setupRestApp(fs.basePath, {
      documents: { ':a/:b': { authorize: () => allow }, ':name': { authorize: () => allow } },
    })
    for (const docName of ['a\u0000b', 'a\\..', 'a/', '/a', 'a//b', 'a/..', './a']) {
      const created = await call('POST', '/comments', { docName, space: 's', anchor, body: 'x' })
      assert.equal(created.status, 422, JSON.stringify(docName))
      const listed = await call('GET', `/comments?doc=${encodeURIComponent(docName)}`)
      assert.equal(listed.status, 422, JSON.stringify(docName))
    }
  })

  test('the file-system storage itself refuses names that would leave its folder', async ({
    assert,
    fs,
  }) => {
    const storage = new FileSystemStorage(join(fs.basePath, 'documents'))
    const comment = {
      id: 'c1',
      space: 's',
      anchor,
      body: 'x',
      userId: 'u',
      resolvedAt: null,
      createdAt: new Date().toISOString(),
      updatedAt: null,
    } as CollabComment
    for (const name of ['..', '.', 'a/..', '', 'a\u0000', 'a\\b']) {
      await assert.rejects(() => storage.saveComment(name, comment), /Invalid document name/)
      await assert.rejects(
        () => storage.saveDocument(name, new Uint8Array([1])),
        /Invalid document name/
      )
      await assert.rejects(
        () => storage.appendUpdate(name, new Uint8Array([1])),
        /Invalid document name/
      )
      await assert.rejects(() => storage.loadDocument(name), /Invalid document name/)
    }
    await storage.saveDocument('fine', new Uint8Array([1]))
    assert.deepEqual(await readdir(fs.basePath), ['documents'])
  })
})

test.group('Hostile collaboration REST: the worker secret', () => {
  test('the token secret does not authenticate as the room worker', async ({ assert, fs }) => {
    const { call } = await setupRestApp(fs.basePath, {
      documents: { ':name': { authorize: () => ({ ...allow, canRead: false }) } },
    })
    const asWorker = { 'x-collab-worker-secret': SECRET }
    const read = await call('GET', '/state?doc=private', undefined, asWorker)
    assert.equal(read.status, 403)
    assert.equal((await read.json()).errors[0].code, 'E_COLLAB_FORBIDDEN')
    const write = await fetch(
      `${(await setupRestApp(fs.basePath)).url}/collaboration/state?doc=private`,
      {
        method: 'POST',
        headers: { ...asWorker, 'content-type': 'application/octet-stream' },
        body: new Uint8Array([0, 0]),
      }
    )
    assert.equal(write.status, 403)
  })

  test('a worker config without its own secret fails at boot, naming the option and the variable', async ({
    assert,
    fs,
  }) => {
    await assert.rejects(
      () => setupRestApp(fs.basePath, { hosted: { roomHost: 'rooms.test', jwtSecret: 'j' } }),
      /Missing "hosted.workerSecret" in config\/collaboration.ts.*COLLAB_WORKER_SECRET/
    )
    await assert.rejects(
      () =>
        setupRestApp(fs.basePath, {
          hosted: { roomHost: 'rooms.test', jwtSecret: 'j', workerSecret: 'j' },
        }),
      /"hosted.workerSecret".*must differ from the token secrets/
    )
    await assert.rejects(
      () => setupRestApp(fs.basePath, { hosted: { roomHost: 'rooms.test', workerSecret: SECRET } }),
      /must differ from the token secrets/
    )
  })
})

test.group('Hostile collaboration REST: bounds', () => {
  test('a page never holds more than the maximum, whatever size is asked', async ({
    assert,
    fs,
  }) => {
    const storage = new InMemoryCollaborationStorage()
    const { call } = await setupRestApp(fs.basePath, { storage })
    const total = MAX_PAGE_SIZE + 5
    for (let index = 0; index < total; index++) {
      await storage.saveComment('big', {
        id: `c${index}`,
        documentName: 'big',
        space: 's',
        anchor: anchor as any,
        body: `comment ${index}`,
        userId: 'u',
        resolvedAt: null,
        createdAt: new Date(1_700_000_000_000 + index).toISOString(),
        updatedAt: null,
      })
    }
    const asked = await call('GET', '/comments?doc=big&size=500')
    assert.equal(asked.status, 200)
    assert.lengthOf(await asked.json(), MAX_PAGE_SIZE)
    const second = await (await call('GET', '/comments?doc=big&size=500&page=2')).json()
    assert.lengthOf(second, 5)
    assert.lengthOf(await (await call('GET', '/comments?doc=big')).json(), 50)
  })

  test('a JSON body over the limit answers 413, declared or streamed', async ({ assert, fs }) => {
    const { call, url } = await setupRestApp(fs.basePath)
    const body = { docName: 'big', space: 's', anchor, body: 'x'.repeat(MAX_JSON_BYTES) }
    const declared = await call('POST', '/comments', body)
    assert.equal(declared.status, 413)
    assert.equal((await declared.json()).errors[0].code, 'E_COLLAB_BODY_TOO_LARGE')

    const bytes = Buffer.from(JSON.stringify(body))
    const streamed = await fetch(`${url}/collaboration/comments`, {
      method: 'POST',
      headers: { 'x-user': 'mallory', 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let offset = 0; offset < bytes.length; offset += 64 * 1024) {
            controller.enqueue(bytes.subarray(offset, offset + 64 * 1024))
          }
          controller.close()
        },
      }),
      duplex: 'half',
    } as RequestInit)
    assert.equal(streamed.status, 413)
    // the server is still fine
    const ok = await call('POST', '/comments', { docName: 'big', space: 's', anchor, body: 'x' })
    assert.equal(ok.status, 201)
  })

  test('a document state over the limit answers 413 before it is read', async ({ assert, fs }) => {
    const { url } = await setupRestApp(fs.basePath, {
      hosted: { roomHost: 'rooms.test', workerSecret: 'the-worker' },
    })
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${url}/collaboration/state?doc=big`, {
        method: 'POST',
        headers: {
          'x-collab-worker-secret': 'the-worker',
          'content-type': 'application/octet-stream',
          'content-length': String(MAX_STATE_BYTES + 1),
        },
      })
      request.on('response', (response) => {
        response.resume()
        resolve(response.statusCode!)
        request.destroy()
      })
      request.on('error', reject)
      // Without the check the server waits for bytes that never come: fail instead of hanging
      request.setTimeout(10_000, () => {
        request.destroy()
        reject(new Error('no answer: the server is reading a body larger than the limit'))
      })
      // a few bytes only: the server answers from the declared length
      request.write(Buffer.alloc(16))
    })
    assert.equal(status, 413)
  })
})
