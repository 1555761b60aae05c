import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import {
  COLLAB_TOKEN_TTL_SECONDS,
  buildWsUrl,
  configureTokenSecrets,
  issueToken,
  resolveTokenSecret,
  secretsMatch,
  signCollabToken,
  signHostedToken,
  verifyCollabToken,
  verifyHostedToken,
  verifySelfHostedToken,
} from '../../src/collaboration/tokens.ts'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'

/**
 * The collaboration token's wire format and every refusal, with tokens
 * built here from the HS256 JWT definition (not through `signCollabToken`)
 * where the format itself is under test.
 */

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const hs256 = (input: string, secret: string) =>
  createHmac('sha256', secret).update(input).digest('base64url')
/** A compact HS256 JWT assembled by hand */
function handMade(
  payload: unknown,
  secret: string,
  header: unknown = { alg: 'HS256', typ: 'JWT' }
) {
  const input = `${typeof header === 'string' ? header : b64(header)}.${typeof payload === 'string' ? payload : b64(payload)}`
  return `${input}.${hs256(input, secret)}`
}
const inAMinute = () => Math.floor(Date.now() / 1000) + 60

test.group('Collaboration token format', (group) => {
  group.each.teardown(() => configureTokenSecrets({}))

  test('a token is header.payload.HMAC-SHA256 in base64url, the header exactly HS256/JWT', ({
    assert,
  }) => {
    const exp = inAMinute()
    const token = signCollabToken({ userId: 7 as any, docName: 'notes/1', exp }, 'k')
    const [header, payload, signature] = token.split('.')
    assert.deepEqual(JSON.parse(Buffer.from(header, 'base64url').toString()), {
      alg: 'HS256',
      typ: 'JWT',
    })
    assert.equal(header, b64({ alg: 'HS256', typ: 'JWT' }))
    assert.deepEqual(JSON.parse(Buffer.from(payload, 'base64url').toString()), {
      userId: '7',
      docName: 'notes/1',
      exp,
    })
    assert.equal(signature, hs256(`${header}.${payload}`, 'k'))
    assert.equal(token, handMade({ userId: '7', docName: 'notes/1', exp }, 'k'))
  })

  test('the expiry defaults to 300 s, or the given lifetime; a user is carried only when given', ({
    assert,
  }) => {
    const now = Math.floor(Date.now() / 1000)
    const read = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())
    const plain = read(signCollabToken({ userId: 'u', docName: 'a/1' }, 'k'))
    assert.equal(COLLAB_TOKEN_TTL_SECONDS, 300)
    assert.closeTo(plain.exp, now + 300, 2)
    assert.notProperty(plain, 'user')
    const short = read(signCollabToken({ userId: 'u', docName: 'a/1' }, 'k', 5))
    assert.closeTo(short.exp, now + 5, 2)
    const named = read(
      signCollabToken({ userId: 'u', docName: 'a/1', user: { name: 'Ana', avatarUrl: null } }, 'k')
    )
    assert.deepEqual(named.user, { name: 'Ana', avatarUrl: null })
  })

  test('a read-only token carries readOnly and verifies as read-only; others carry nothing', ({
    assert,
  }) => {
    const readOnly = signCollabToken({ userId: 'u', docName: 'a/1', readOnly: true }, 'k')
    assert.isTrue(verifyCollabToken(readOnly, 'k', 'a/1')!.readOnly)
    for (const flag of [false, undefined]) {
      const token = signCollabToken(
        { userId: 'u', docName: 'a/1', readOnly: flag as true | undefined },
        'k'
      )
      const body = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())
      assert.notProperty(body, 'readOnly')
      assert.notOk(verifyCollabToken(token, 'k', 'a/1')!.readOnly)
    }
  })

  test('signing needs a secret and a valid document name', ({ assert }) => {
    assert.throws(
      () => signCollabToken({ userId: 'u', docName: 'a/1' }, ''),
      /No collaboration token secret/
    )
    assert.throws(
      () => signCollabToken({ userId: 'u', docName: '../x' }, 'k'),
      /Invalid document name/
    )
    assert.throws(() => verifyCollabToken('x.y.z', '', 'a/1'), /No collaboration token secret/)
  })

  test('verification refuses every malformed, foreign, mistyped or expired token', ({ assert }) => {
    const exp = inAMinute()
    const good = { userId: 'u', docName: 'a/1', exp }
    assert.deepEqual(verifyCollabToken(handMade(good, 'k'), 'k', 'a/1'), good)
    const refused: Array<[string, unknown]> = [
      ['not a string', 5],
      ['null', null],
      ['two parts', handMade(good, 'k').split('.').slice(0, 2).join('.')],
      ['four parts', `${handMade(good, 'k')}.x`],
      ['alg none', handMade(good, 'k', { alg: 'none', typ: 'JWT' })],
      ['other secret', handMade(good, 'k2')],
      ['short signature', handMade(good, 'k').slice(0, -1)],
      ['payload not JSON', handMade('bm90IGpzb24', 'k')],
      ['payload null', handMade(null, 'k')],
      ['numeric userId', handMade({ ...good, userId: 5 }, 'k')],
      ['text exp', handMade({ ...good, exp: String(exp) }, 'k')],
      ['other document', handMade({ ...good, docName: 'a/2' }, 'k')],
      ['expired', handMade({ ...good, exp: Math.floor(Date.now() / 1000) - 1 }, 'k')],
    ]
    for (const [why, token] of refused) {
      assert.isNull(verifyCollabToken(token as string, 'k', 'a/1'), why)
    }
    assert.isNull(verifyCollabToken(handMade(good, 'k'), 'k', '../bad'))
  })

  test('a token expires at its exp second exactly', ({ assert, cleanup }) => {
    const exp = inAMinute()
    const token = handMade({ userId: 'u', docName: 'a/1', exp }, 'k')
    const now = Date.now
    cleanup(() => {
      Date.now = now
    })
    Date.now = () => exp * 1000 - 1
    assert.isNotNull(verifyCollabToken(token, 'k', 'a/1'))
    Date.now = () => exp * 1000
    assert.isNull(verifyCollabToken(token, 'k', 'a/1'))
  })

  test('a token of 8192 characters is read, one of 8193 is not', ({ assert }) => {
    const exp = inAMinute()
    const ofLength = (length: number) => {
      for (let pad = 6000; pad < 6200; pad++) {
        const token = handMade({ userId: 'u', docName: 'a/1', exp, pad: 'x'.repeat(pad) }, 'k')
        if (token.length === length) return token
      }
      throw new Error(`no token of ${length} characters`)
    }
    assert.isNotNull(verifyCollabToken(ofLength(8192), 'k', 'a/1'))
    assert.isNull(verifyCollabToken(ofLength(8193), 'k', 'a/1'))
  })

  test('self-hosted and hosted verification return the user only when the token carries one', ({
    assert,
  }) => {
    configureTokenSecrets({ tokenSecret: 'cfg' })
    const exp = inAMinute()
    assert.deepEqual(
      verifySelfHostedToken(handMade({ userId: 'u', docName: 'a/1', exp }, 'cfg'), 'a/1'),
      {
        userId: 'u',
      }
    )
    const withUser = handMade({ userId: 'u', docName: 'a/1', exp, user: { name: 'Ana' } }, 'cfg')
    assert.deepEqual(verifySelfHostedToken(withUser, 'a/1'), { userId: 'u', user: { name: 'Ana' } })
    assert.isNull(verifySelfHostedToken(withUser, 'a/1', 'explicit'))
    assert.deepEqual(verifyHostedToken(withUser, 'a/1', 'cfg'), {
      userId: 'u',
      user: { name: 'Ana' },
    })
    assert.deepEqual(
      verifyHostedToken(handMade({ userId: 'u', docName: 'a/1', exp }, 'h'), 'a/1', 'h'),
      {
        userId: 'u',
      }
    )
    assert.isNull(verifyHostedToken('x.y.z', 'a/1', 'h'))
    assert.throws(
      () => verifyHostedToken(withUser, 'a/1', undefined),
      /Missing "hosted\.jwtSecret"/
    )
    assert.throws(
      () => signHostedToken({ userId: 'u', docName: 'a/1' }, ''),
      /Missing "hosted\.jwtSecret" in config\/collaboration\.ts/
    )
    assert.deepEqual(
      verifyHostedToken(signHostedToken({ userId: 'u', docName: 'a/1' }, 'h'), 'a/1', 'h'),
      {
        userId: 'u',
      }
    )
  })

  test('an empty configured secret or app key counts as unset', ({ assert }) => {
    configureTokenSecrets({ tokenSecret: '', appKey: 'key' })
    assert.equal(
      resolveTokenSecret(),
      createHmac('sha256', 'key').update('atrium:collaboration:token').digest('hex')
    )
    configureTokenSecrets({ tokenSecret: '', appKey: '' })
    assert.throws(() => resolveTokenSecret(), /No collaboration token secret/)
    assert.equal(resolveTokenSecret('explicit'), 'explicit')
  })

  test('secretsMatch: two equal non-empty strings only', ({ assert }) => {
    assert.isTrue(secretsMatch('s3cret', 's3cret'))
    assert.isFalse(secretsMatch('s3cret', 's3creT'))
    assert.isFalse(secretsMatch('', ''))
    assert.isFalse(secretsMatch('x', ''))
    assert.isFalse(secretsMatch(undefined, 'x'))
    assert.isFalse(secretsMatch('x', null))
    assert.isFalse(secretsMatch(5 as any, '5'))
    assert.isFalse(secretsMatch('5', 5 as any))
  })
})

test.group('Collaboration WebSocket URLs and issued tokens', (group) => {
  group.each.teardown(() => configureTokenSecrets({}))

  test('buildWsUrl: the app path with encoded segments, absolute when a base URL is given', ({
    assert,
  }) => {
    const config = { path: '/collab', engine: 'yjs' as const }
    assert.equal(buildWsUrl(config, 'notes/a b'), '/collab/notes/a%20b')
    assert.equal(
      buildWsUrl({ ...config, baseUrl: 'http://app.test//' }, 'n/1'),
      'ws://app.test/collab/n/1'
    )
    assert.equal(
      buildWsUrl({ ...config, baseUrl: 'https://app.test' }, 'n/1'),
      'wss://app.test/collab/n/1'
    )
    // A hosted engine without hosted settings stays on the app
    assert.equal(buildWsUrl({ ...config, engine: 'partykit' as any }, 'n/1'), '/collab/n/1')
  })

  test('buildWsUrl: the room worker for the hosted engines, wss unless given', ({ assert }) => {
    const hosted = { roomHost: 'rooms.example.com//', party: 'docs', fetchTimeoutMs: 1 }
    const base = { path: '/collab', engine: 'partykit' as any, hosted }
    assert.equal(buildWsUrl(base, 'n/1 x'), 'wss://rooms.example.com/parties/docs/n%2F1%20x')
    assert.equal(
      buildWsUrl({ ...base, engine: 'yjs' as any, engineName: 'partyserver' as any }, 'n/1'),
      'wss://rooms.example.com/parties/docs/n%2F1'
    )
    assert.equal(
      buildWsUrl(
        {
          ...base,
          hosted: { ...hosted, roomHost: 'ws://127.0.0.1:1999', party: undefined } as any,
        },
        'n'
      ),
      'ws://127.0.0.1:1999/parties/main/n'
    )
    assert.equal(
      buildWsUrl({ ...base, hosted: { ...hosted, roomHost: 'wss://r.test' } }, 'n'),
      'wss://r.test/parties/docs/n'
    )
    // only a scheme at the start counts as one
    assert.equal(
      buildWsUrl({ ...base, hosted: { ...hosted, roomHost: 'r.test/ws://x' } }, 'n'),
      'wss://r.test/ws://x/parties/docs/n'
    )
    assert.equal(buildWsUrl({ ...base, engineName: 'yjs' as any }, 'n/1'), '/collab/n/1')
  })

  test('issueToken: refused without a rule, or when reading is not allowed', async ({ assert }) => {
    const config = { path: '/c', engine: 'yjs' as const, tokenSecret: 'k' }
    await assert.rejects(
      () => issueToken(config, { id: 1 }, 'a/1'),
      /No authorize rule for this document/
    )
    await assert.rejects(
      () => issueToken(config, { id: 1 }, 'a/1', { canRead: false } as any),
      'Reading "a/1" is not allowed'
    )
    await assert.rejects(
      () => issueToken(config, { id: 1 }, 'a/1', () => null as any),
      'Reading "a/1" is not allowed'
    )
    await assert.rejects(
      () => issueToken(config, { id: 1 }, '../x', { canRead: true } as any),
      /Invalid document name/
    )
  })

  test('issueToken: a token that verifies, its URL, engine and expiry; the rule sees the document', async ({
    assert,
  }) => {
    const config = {
      path: '/c',
      engine: 'yjs' as const,
      tokenSecret: 'k',
      baseUrl: 'https://app.test',
    }
    const asked: string[] = []
    const before = Date.now()
    const info = await issueToken(
      config,
      { id: 42, name: 'Ana', avatarUrl: null },
      'a/1',
      (doc) => {
        asked.push(doc)
        return { canRead: true } as any
      }
    )
    assert.deepEqual(asked, ['a/1'])
    assert.equal(info.engine, 'yjs')
    assert.equal(info.wsUrl, 'wss://app.test/c/a/1')
    assert.deepEqual(verifyCollabToken(info.token, 'k', 'a/1'), {
      userId: '42',
      docName: 'a/1',
      exp: Date.parse(info.expiresAt) / 1000,
      user: { name: 'Ana', avatarUrl: null },
    })
    assert.closeTo(Date.parse(info.expiresAt) - before, 300_000, 2000)
    const bare = await issueToken(config, { id: 1, name: null }, 'a/1', { canRead: true } as any)
    assert.notProperty(verifyCollabToken(bare.token, 'k', 'a/1')!, 'user')
    const avatar = await issueToken(config, { id: 1, avatarUrl: '/a.png' }, 'a/1', {
      canRead: true,
    } as any)
    // no name: the key is dropped on the way through JSON
    assert.deepEqual(verifyCollabToken(avatar.token, 'k', 'a/1')!.user, { avatarUrl: '/a.png' })
  })

  test('issueToken: hosted engines sign with hosted.jwtSecret, others with the resolved secret', async ({
    assert,
  }) => {
    configureTokenSecrets({ appKey: 'app' })
    const hosted = { roomHost: 'r.test', party: 'main', fetchTimeoutMs: 1, jwtSecret: 'jwt' }
    const info = await issueToken(
      { path: '/c', engine: 'partykit' as any, hosted },
      { id: 1 },
      'a/1',
      { canRead: true } as any
    )
    assert.equal(info.engine, 'partykit')
    assert.deepEqual(verifyHostedToken(info.token, 'a/1', 'jwt'), { userId: '1' })
    assert.isNull(verifySelfHostedToken(info.token, 'a/1'))
    const local = await issueToken(
      { path: '/c', engine: 'yjs' as const, hosted },
      { id: 1 },
      'a/1',
      {
        canRead: true,
      } as any
    )
    assert.deepEqual(verifySelfHostedToken(local.token, 'a/1'), { userId: '1' })
    assert.isNull(verifyHostedToken(local.token, 'a/1', 'jwt'))
  })

  test('issueToken: a hosted token is read-only unless the rule allows writing; the room worker enforces it', async ({
    assert,
  }) => {
    const hosted = { roomHost: 'r.test', party: 'main', fetchTimeoutMs: 1, jwtSecret: 'jwt' }
    const config = { path: '/c', engine: 'partyserver' as any, hosted }
    const reader = await issueToken(config, { id: 1 }, 'a/1', { canRead: true } as any)
    assert.isTrue(verifyCollabToken(reader.token, 'jwt', 'a/1')!.readOnly)
    const writer = await issueToken(config, { id: 1 }, 'a/1', {
      canRead: true,
      canWrite: true,
    } as any)
    assert.notProperty(verifyCollabToken(writer.token, 'jwt', 'a/1')!, 'readOnly')
    // the app checks writes itself on its own socket: its tokens carry no flag
    configureTokenSecrets({ appKey: 'app' })
    const local = await issueToken({ path: '/c', engine: 'yjs' as const }, { id: 1 }, 'a/1', {
      canRead: true,
    } as any)
    assert.notProperty(verifyCollabToken(local.token, resolveTokenSecret(), 'a/1')!, 'readOnly')
  })

  test("issueToken: an Automerge document's token names its document id; others name none", async ({
    assert,
  }) => {
    configureTokenSecrets({ appKey: 'app' })
    const allowed = { canRead: true } as any
    const automerge = await issueToken(
      { path: '/c', engine: 'automerge' as const },
      { id: 1 },
      'todos/1',
      allowed
    )
    assert.equal(automerge.engine, 'automerge')
    assert.equal((automerge as any).documentId, automergeDocumentId('todos/1'))
    const yjs = await issueToken(
      { path: '/c', engine: 'yjs' as const },
      { id: 1 },
      'todos/1',
      allowed
    )
    assert.notProperty(yjs, 'documentId')
  })
})
