/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import { createHmac } from 'node:crypto'
import {
  defineCollection,
  documentPatternParams,
  matchDocumentPattern,
  normalizeConfig,
} from '../../src/collaboration/define_config.ts'
import {
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
import { issueCollaborationToken } from '../../src/collaboration/issue.ts'
import {
  COLLAB_ERROR_EVENT,
  collaborationEvents,
  onCollaborationError,
  reportCollaborationError,
  setCollaborationLogger,
} from '../../src/collaboration/observability.ts'
import { allow, setupCollabApp } from './helpers.ts'

test.group('Collaboration config and patterns', () => {
  test('the config fills every default', ({ assert }) => {
    const config = normalizeConfig()
    assert.equal(config.engine, 'yjs')
    assert.equal(config.path, '/collaboration')
    assert.equal(config.debounce, 2000)
    assert.isTrue(config.storageIsDefault)
    assert.deepEqual(config.routes, {
      enabled: true,
      prefix: '/collaboration',
      middleware: [],
      resolveUser: undefined,
    })
    assert.isUndefined(config.redisUrl)
    const hosted = normalizeConfig({ hosted: { roomHost: 'rooms.example.com' } })
    assert.deepEqual(hosted.hosted, {
      roomHost: 'rooms.example.com',
      party: 'main',
      jwtSecret: undefined,
      workerSecret: undefined,
      fetchTimeoutMs: 10_000,
    })
  })

  test('the config names the option and the fix', ({ assert }) => {
    assert.throws(() => normalizeConfig({ engine: 'crdt_z' as any }), /Invalid "engine".*"yjs"/)
    assert.throws(() => normalizeConfig({ debounce: -1 }), /Invalid "debounce"/)
    assert.throws(() => normalizeConfig({ path: 'collab' }), /Invalid "path"/)
    assert.throws(
      () => normalizeConfig({ documents: { '/bad/:id': {} } }),
      /Invalid document pattern/
    )
  })

  test('engines have their real names; the neutral aliases still read', ({ assert }) => {
    assert.equal(normalizeConfig({ engine: 'crdt_a' }).engine, 'yjs')
    assert.equal(normalizeConfig({ engine: 'yjs' }).engine, 'yjs')
    assert.equal(normalizeConfig({ engine: 'crdt_b' }).engine, 'automerge')
    assert.equal(normalizeConfig({ engine: 'automerge' }).engine, 'automerge')
  })

  test('an engine that does not exist is refused, naming the engines', ({ assert }) => {
    assert.throws(
      () => normalizeConfig({ engine: 'quill' as any }),
      /Invalid "engine" in config\/collaboration.ts: "quill" is not an engine. Use "yjs", "automerge", "partykit", "partyserver"/
    )
    assert.throws(
      () => normalizeConfig({ documents: { 'a/:id': { engine: 'crdt_z' as any } } }),
      /Invalid "documents\["a\/:id"\].engine".*"crdt_z" is not an engine/
    )
  })

  test('a hosted engine needs the worker host and the token secret, named with the fix', ({
    assert,
  }) => {
    for (const engine of ['partykit', 'partyserver', 'hosted_a', 'hosted_b'] as const) {
      assert.throws(
        () => normalizeConfig({ engine }),
        /Missing "hosted.roomHost" in config\/collaboration.ts: "engine" is "party(kit|server)".*Run: node ace collaboration:init --engine=party(kit|server)/
      )
    }
    assert.throws(
      () => normalizeConfig({ engine: 'partyserver', hosted: { roomHost: 'rooms.test' } }),
      /Missing "hosted.jwtSecret"/
    )
    assert.throws(
      () => normalizeConfig({ documents: { 'a/:id': { engine: 'partykit' } } }),
      /Missing "hosted.roomHost".*"documents\["a\/:id"\].engine" is "partykit"/
    )
    const config = normalizeConfig({
      engine: 'hosted_b',
      hosted: { roomHost: 'rooms.test', jwtSecret: 'jwt' },
    })
    assert.equal(config.engine, 'partyserver')
  })

  test('patterns match by segment and extract params', ({ assert }) => {
    assert.deepEqual(matchDocumentPattern('boards/:boardId/cards/:id', 'boards/7/cards/42'), {
      boardId: '7',
      id: '42',
    })
    assert.isNull(matchDocumentPattern('boards/:id', 'boards/7/cards'))
    assert.isNull(matchDocumentPattern('boards/:id', 'cards/7'))
    assert.deepEqual(matchDocumentPattern('settings', 'settings'), {})
    assert.deepEqual(documentPatternParams('boards/:boardId/cards/:id'), ['boardId', 'id'])
    assert.deepEqual(documentPatternParams('settings'), [])
  })

  test('defineCollection builds "<prefix>/:id" and refuses params and slashes', ({ assert }) => {
    const load = () => null
    assert.deepEqual(Object.keys(defineCollection('team/notes', { load })), ['team/notes/:id'])
    assert.throws(() => defineCollection('notes/:id'), /Invalid collection prefix/)
    assert.throws(() => defineCollection('/notes'), /Invalid collection prefix/)
    assert.throws(() => defineCollection('notes/'), /Invalid collection prefix/)
  })

  test('the first matching pattern wins, then the global rule, else deny', async ({ assert }) => {
    const { manager } = await setupCollabApp({
      documents: {
        'private/:id': {
          authorize: () => ({ canRead: false, canWrite: false, canComment: false }),
        },
        'private/special': { authorize: () => allow },
        'team/:id': {},
      },
      authorize: (_ctx, docName) => ({ ...allow, canWrite: docName.startsWith('team/') }),
    })
    const ctx = { connection: { userId: 'u1' } }
    assert.isFalse((await manager.authorize(ctx, 'private/special')).canRead)
    assert.isTrue((await manager.authorize(ctx, 'team/1')).canWrite)
    assert.isFalse((await manager.authorize(ctx, 'other/1')).canWrite)
  })
})

test.group('Collaboration tokens', () => {
  test('a token verifies only for its document, its secret and before it expires', ({ assert }) => {
    const token = signCollabToken({ userId: 'u1', docName: 'a/1', user: { name: 'Ann' } }, 's3cret')
    assert.deepInclude(verifyCollabToken(token, 's3cret', 'a/1')!, { userId: 'u1', docName: 'a/1' })
    assert.isNull(verifyCollabToken(token, 's3cret', 'a/2'))
    assert.isNull(verifyCollabToken(token, 'other', 'a/1'))
    assert.isNull(verifyCollabToken(`${token}x`, 's3cret', 'a/1'))
    assert.isNull(verifyCollabToken('not.a.token', 's3cret', 'a/1'))
    const expired = signCollabToken({ userId: 'u1', docName: 'a/1' }, 's3cret', -1)
    assert.isNull(verifyCollabToken(expired, 's3cret', 'a/1'))
    assert.deepEqual(verifySelfHostedToken(token, 'a/1', 's3cret'), {
      userId: 'u1',
      user: { name: 'Ann' },
    })

    const hosted = signHostedToken({ userId: 'u1', docName: 'a/1' }, 'jwt-secret')
    assert.equal(JSON.parse(Buffer.from(hosted.split('.')[0], 'base64url').toString()).alg, 'HS256')
    assert.deepEqual(verifyHostedToken(hosted, 'a/1', 'jwt-secret'), { userId: 'u1' })
    assert.isNull(verifyHostedToken(hosted, 'a/1', 'wrong'))
  })

  test('the secret resolves explicit, then config, then the app key, else CollabTokenSecretMissingError', async ({
    assert,
    cleanup,
  }) => {
    cleanup(() => configureTokenSecrets({}))
    configureTokenSecrets({})
    assert.throws(() => resolveTokenSecret(), /No collaboration token secret/)
    assert.throws(() => verifySelfHostedToken('x.y.z', 'a/1'), /No collaboration token secret/)
    await assert.rejects(
      () => issueToken(normalizeConfig(), { id: 1 }, 'a/1', allow),
      /No collaboration token secret/
    )
    configureTokenSecrets({ appKey: 'app-key' })
    const derived = resolveTokenSecret()
    assert.notEqual(derived, 'app-key')
    // stable: the same key gives the same secret, on every instance and after a restart
    configureTokenSecrets({ appKey: 'app-key' })
    assert.equal(resolveTokenSecret(), derived)
    assert.equal(
      derived,
      createHmac('sha256', 'app-key').update('atrium:collaboration:token').digest('hex')
    )
    // and verification uses it: a token signed with it verifies without an explicit secret
    const token = signCollabToken({ userId: 'u1', docName: 'a/1' }, derived)
    assert.deepEqual(verifySelfHostedToken(token, 'a/1'), { userId: 'u1' })
    assert.isNull(
      verifySelfHostedToken(signCollabToken({ userId: 'u1', docName: 'a/1' }, 'app-key'), 'a/1')
    )
    configureTokenSecrets({ appKey: 'app-key', tokenSecret: 'from-config' })
    assert.equal(resolveTokenSecret(), 'from-config')
    assert.equal(resolveTokenSecret('explicit'), 'explicit')
  })

  test('issueToken refuses without an authorize rule or on a denial', async ({ assert }) => {
    const config = { ...normalizeConfig({ tokenSecret: 'k' }), baseUrl: 'https://app.test' }
    await assert.rejects(() => issueToken(config, { id: 1 }, 'a/1'), /No authorize rule/)
    await assert.rejects(
      () => issueToken(config, { id: 1 }, 'a/1', { ...allow, canRead: false }),
      /not allowed/
    )
    const info = await issueToken(config, { id: 1 }, 'a/1', () => allow)
    assert.equal(info.wsUrl, 'wss://app.test/collaboration/a/1')
    assert.equal(buildWsUrl(normalizeConfig(), 'a b/1'), '/collaboration/a%20b/1')
    assert.equal(
      buildWsUrl(
        { ...normalizeConfig({ hosted: { roomHost: 'rooms.test' } }), engineName: 'partykit' },
        'a/1'
      ),
      'wss://rooms.test/parties/main/a%2F1'
    )
  })

  test('collaboration.issueToken throws Unauthorized without a user and Forbidden on a denial', async ({
    assert,
  }) => {
    const { manager } = await setupCollabApp({
      authorize: (_ctx, docName) => ({ ...allow, canRead: docName !== 'secret/1' }),
    })
    await assert.rejects(() => manager.issueToken({ docName: 'a/1' }), /Sign in/)
    await assert.rejects(
      () => manager.issueToken({ docName: 'secret/1', user: { id: 1 } }),
      /not allowed/
    )
    await assert.rejects(
      () => issueCollaborationToken(manager, { docName: '../x', user: { id: 1 } }),
      /Invalid document name/
    )
    const info = await manager.issueToken({ docName: 'a/1', user: { id: 1 } })
    assert.equal(info.engine, 'yjs')
  })

  test('secretsMatch compares in constant time and refuses missing values', ({ assert }) => {
    assert.isTrue(secretsMatch('abc', 'abc'))
    assert.isFalse(secretsMatch('abc', 'abd'))
    assert.isFalse(secretsMatch(undefined, 'abc'))
    assert.isFalse(secretsMatch('', ''))
  })
})

test.group('Collaboration observability', () => {
  test('errors reach listeners under COLLAB_ERROR_EVENT, then a logger; reporting never throws', ({
    assert,
  }) => {
    assert.notEqual(COLLAB_ERROR_EVENT, 'error')
    const seen: string[] = []
    const off = onCollaborationError((event) => seen.push(event.operation))
    collaborationEvents.on(COLLAB_ERROR_EVENT, () => {
      throw new Error('listener bug')
    })
    reportCollaborationError({ scope: 'storage', operation: 'saveDocument', error: new Error('x') })
    collaborationEvents.removeAllListeners(COLLAB_ERROR_EVENT)
    off()
    assert.deepEqual(seen, ['saveDocument'])

    const logged: string[] = []
    setCollaborationLogger({ error: (_payload, message) => logged.push(message ?? '') })
    reportCollaborationError({
      scope: 'authorize',
      operation: 'authorize',
      docName: 'a/1',
      error: 1,
    })
    setCollaborationLogger(undefined)
    assert.match(logged[0], /authorize failure during authorize on "a\/1"/)
  })
})
