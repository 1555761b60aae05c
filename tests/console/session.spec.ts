import { test } from '@japa/runner'
import { consoleApp, cookiePair, SECRET, sessionCookie, setCookie } from './helpers.ts'
import { signSession, SESSION_COOKIE, verifySession } from '../../src/console/session.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

const users = { ada: { password: 'lovelace', user: { id: '1', name: 'Ada', roles: ['admin'] } } }

function loginAuth(extra: Partial<NonNullable<ConsoleConfig['dashboardAuth']>> = {}) {
  return {
    secret: SECRET,
    login: (username: string, password: string) =>
      username === 'ada' && password === users.ada.password ? users.ada.user : null,
    ...extra,
  }
}

function login(
  api: (path: string, init?: RequestInit) => Promise<Response>,
  password = 'lovelace'
) {
  return api('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'ada', password }),
  })
}

test.group('Console session cookie', () => {
  test('a login sets a signed httpOnly SameSite=Lax cookie on the mount path and /auth/me reads it', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    const response = await login(api)
    assert.equal(response.status, 204)
    const line = setCookie(response)!
    assert.match(
      line,
      /^console_session=[\w-]+\.[\w-]+; Path=\/console; Max-Age=28800; HttpOnly; SameSite=Lax$/
    )
    const session = verifySession(cookiePair(line).split('=')[1], SECRET)!
    assert.equal(session.sub, '1')
    assert.equal(session.exp - session.iat, 8 * 3600)

    const me = await api('/auth/me', { headers: { cookie: cookiePair(line) } })
    assert.equal(me.status, 200)
    assert.deepEqual(await me.json(), { user: { id: '1', name: 'Ada', roles: ['admin'] } })
  })

  test('the cookie is Secure when the request came over https (x-forwarded-proto)', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    const response = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
      body: JSON.stringify({ username: 'ada', password: 'lovelace' }),
    })
    assert.match(setCookie(response)!, /; Secure$/)
  })

  test('a wrong password, an unknown user and a throwing hook all get the same 401', async ({
    assert,
  }) => {
    const { api, warnings } = await consoleApp({
      config: {
        dashboardAuth: loginAuth({
          login: (username, password) => {
            if (username === 'boom') throw new Error('directory down')
            return username === 'ada' && password === 'lovelace' ? users.ada.user : null
          },
        }),
      },
    })
    const bodies = []
    for (const [username, password] of [
      ['ada', 'wrong'],
      ['nobody', 'lovelace'],
      ['ada', ''],
      ['boom', 'x'],
      ['boom', 'y'],
    ]) {
      const response = await api('/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      })
      assert.equal(response.status, 401)
      assert.isUndefined(setCookie(response))
      bodies.push(await response.text())
    }
    assert.equal(new Set(bodies).size, 1)
    assert.deepEqual(JSON.parse(bodies[0]), {
      errors: [{ code: 'E_CONSOLE_UNAUTHENTICATED', message: 'Invalid credentials' }],
    })
    assert.equal(warnings.filter((line) => line.includes('dashboardAuth.login threw')).length, 1)
  })

  test('an empty password reaches the login hook verbatim', async ({ assert }) => {
    const seen: string[] = []
    const { api } = await consoleApp({
      config: {
        dashboardAuth: loginAuth({
          login: (_username, password) => {
            seen.push(password)
            return password === '' ? { id: 'kiosk' } : null
          },
        }),
      },
    })
    assert.equal(await login(api, '').then((value) => value.status), 204)
    assert.deepEqual(seen, [''])
  })

  test('login reads its JSON body itself when the app has no bodyparser, capped at 16 KiB', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() }, bodyparser: false })
    assert.equal(await login(api).then((value) => value.status), 204)
    assert.equal(await login(api, 'wrong').then((value) => value.status), 401)
    const big = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ada', password: 'x'.repeat(20_000) }),
    })
    assert.equal(big.status, 400)
    const broken = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"username":',
    })
    assert.equal(broken.status, 400)
    assert.equal(await broken.json().then((value: any) => value.errors[0].parameter), 'body')
  })

  test('a login body without string fields is a 400 naming the field', async ({ assert }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    const response = await api('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ada', password: 12 }),
    })
    assert.equal(response.status, 400)
    assert.equal(await response.json().then((value: any) => value.errors[0].parameter), 'password')
  })

  test('mode A: the session hook reads the request; null denies; a configured-out mode is 404', async ({
    assert,
  }) => {
    const { api } = await consoleApp({
      config: {
        dashboardAuth: {
          secret: SECRET,
          session: (ctx) =>
            ctx.request.header('x-host-user') === 'grace' ? { id: 'grace' } : null,
        },
      },
    })
    const ok = await api('/auth/session', { method: 'POST', headers: { 'x-host-user': 'grace' } })
    assert.equal(ok.status, 204)
    assert.isDefined(setCookie(ok))
    assert.equal(await api('/auth/session', { method: 'POST' }).then((value) => value.status), 401)
    assert.equal(await login(api).then((value) => value.status), 404)
    const me = await api('/auth/me')
    assert.equal(me.status, 401)
    assert.deepEqual(await me.json(), { auth: { modes: ['session'] } })
  })

  test('/auth/session is 404 when only the login mode is configured; me lists the modes', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    assert.equal(await api('/auth/session', { method: 'POST' }).then((value) => value.status), 404)
    const me = await api('/auth/me')
    assert.deepEqual(await me.json(), { auth: { modes: ['login'] } })
  })

  test('logout clears the cookie', async ({ assert }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    const response = await api('/auth/logout', {
      method: 'POST',
      headers: { cookie: sessionCookie() },
    })
    assert.equal(response.status, 204)
    assert.match(setCookie(response)!, /^console_session=; Path=\/console; Max-Age=0;/)
  })

  test('tampered, foreign-key, malformed and oversized cookies are 401 on gated routes, never 500', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    const valid = sessionCookie().split('=')[1]
    const [payload, signature] = valid.split('.')
    const forged = Buffer.from(
      JSON.stringify({ sub: 'admin', roles: ['admin'], iat: 0, exp: 2 ** 40 })
    ).toString('base64url')
    const cookies = [
      `${payload}.${signature.slice(0, -2)}AA`,
      `${forged}.${signature}`,
      sessionCookie({}, 'another-secret-of-sufficient-length-000').split('=')[1],
      'garbage',
      '.',
      `${payload}.`,
      `${payload}.${signature}.extra`,
      `${Buffer.from('not json').toString('base64url')}.${signature}`,
      signSession({ sub: '', roles: [], iat: 1, exp: 2 } as any, SECRET),
      signSession({ sub: 'x', roles: 'admin', iat: 1, exp: 2 } as any, SECRET),
      'a'.repeat(5000),
    ]
    for (const cookie of cookies) {
      const response = await api('/requests', {
        headers: { cookie: `${SESSION_COOKIE}=${cookie}` },
      })
      assert.equal(response.status, 401, cookie.slice(0, 40))
      assert.equal(
        await response.json().then((value: any) => value.errors[0].code),
        'E_CONSOLE_UNAUTHENTICATED'
      )
    }
    assert.equal(
      await api('/requests', { headers: { cookie: `${SESSION_COOKIE}=${valid}` } }).then(
        (value) => value.status
      ),
      200
    )
  })

  test('an expired cookie is accepted within the 30 s skew grace and refused beyond it', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth() } })
    const within = await api('/requests', {
      headers: { cookie: sessionCookie({ iatOffset: -8 * 3600, expOffset: -20 }) },
    })
    assert.equal(within.status, 200)
    // inside the grace it is renewed: a fresh cookie with a full ttl
    const renewed = verifySession(cookiePair(setCookie(within)).split('=')[1], SECRET)!
    assert.isAbove(renewed.exp, Math.floor(Date.now() / 1000) + 8 * 3600 - 5)

    const beyond = await api('/requests', {
      headers: { cookie: sessionCookie({ iatOffset: -8 * 3600, expOffset: -40 }) },
    })
    assert.equal(beyond.status, 401)
  })

  test('a cookie past half its ttl is re-issued on the response; a young one is not', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth({ ttl: '2h' }) } })
    const young = await api('/requests', {
      headers: { cookie: sessionCookie({ iatOffset: -3000, expOffset: 7200 - 3000, name: 'Ada' }) },
    })
    assert.equal(young.status, 200)
    assert.isUndefined(setCookie(young))

    const old = await api('/requests', {
      headers: {
        cookie: sessionCookie({
          iatOffset: -3700,
          expOffset: 7200 - 3700,
          name: 'Ada',
          roles: ['ops'],
        }),
      },
    })
    assert.equal(old.status, 200)
    const line = setCookie(old)!
    assert.match(line, /Max-Age=7200/)
    const session = verifySession(cookiePair(line).split('=')[1], SECRET)!
    assert.deepInclude(session, { sub: 'u1', name: 'Ada', roles: ['ops'] })
    assert.closeTo(session.iat, Math.floor(Date.now() / 1000), 5)
  })

  test('a cookie signed for a longer ttl than the configured one is refused', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ config: { dashboardAuth: loginAuth({ ttl: '1h' }) } })
    const response = await api('/requests', {
      headers: { cookie: sessionCookie({ expOffset: 8 * 3600 }) },
    })
    assert.equal(response.status, 401)
  })

  test('revalidate runs only on the renewal path, once for concurrent requests with the same cookie', async ({
    assert,
  }) => {
    const calls: unknown[] = []
    const { api } = await consoleApp({
      config: {
        dashboardAuth: loginAuth({
          ttl: '2h',
          revalidate: async (user) => {
            calls.push(user)
            return true
          },
        }),
      },
    })
    await api('/requests', {
      headers: { cookie: sessionCookie({ iatOffset: -60, expOffset: 7140 }) },
    })
    assert.lengthOf(calls, 0)

    const cookie = sessionCookie({ iatOffset: -4000, expOffset: 3200, roles: ['ops'] })
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => api('/requests', { headers: { cookie } }))
    )
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200, 200, 200]
    )
    assert.isTrue(responses.every((r) => setCookie(r) !== undefined))
    assert.deepEqual(calls, [{ id: 'u1', roles: ['ops'] }])
  })

  test('revalidate returning false or throwing clears the cookie and answers 401', async ({
    assert,
  }) => {
    const { api, warnings } = await consoleApp({
      config: {
        dashboardAuth: loginAuth({
          ttl: '2h',
          revalidate: (user) => {
            if (user.id === 'boom') throw new Error('directory down')
            return user.id !== 'fired'
          },
        }),
      },
    })
    for (const sub of ['fired', 'boom', 'boom']) {
      const response = await api('/requests', {
        headers: { cookie: sessionCookie({ sub, iatOffset: -4000 - sub.length, expOffset: 3000 }) },
      })
      assert.equal(response.status, 401)
      assert.match(setCookie(response)!, /^console_session=; .*Max-Age=0/)
    }
    assert.equal(
      warnings.filter((line) => line.includes('dashboardAuth.revalidate threw')).length,
      1
    )
  })
})
