import { test } from '@japa/runner'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { consoleApp, navigate, SECRET, sessionCookie } from './helpers.ts'

const loginAuth = { secret: SECRET, login: () => null }

/** A host guard: passes with the host's own cookie, as a page-fronting guard must */
const hostGuard = async (ctx: HttpContext, next: NextFn) => {
  if (ctx.request.header('cookie')?.includes('host_session=ok')) return next()
  return ctx.response.unauthorized({ message: 'host says no' })
}

/** A host guard that throws, as @adonisjs/auth's middleware does */
const throwingGuard = async (ctx: HttpContext, next: NextFn) => {
  if (ctx.request.header('authorization') === 'Bearer host') return next()
  const error = Object.assign(new Error('Unauthorized access'), { status: 401 })
  throw error
}

test.group('Console access gates', () => {
  test('without dashboardAuth and authorizer the read API is denied in production (403)', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ production: true })
    const response = await api('/requests')
    assert.equal(response.status, 403)
    assert.equal(
      await response.json().then((value: any) => value.errors[0].code),
      'E_CONSOLE_FORBIDDEN'
    )
  })

  test('without dashboardAuth and authorizer the read API is open outside production', async ({
    assert,
  }) => {
    const { api } = await consoleApp()
    assert.equal(await api('/requests').then((value) => value.status), 200)
  })

  test('in production the session gate replaces the default denial: a valid session reads', async ({
    assert,
  }) => {
    const { api } = await consoleApp({ production: true, config: { dashboardAuth: loginAuth } })
    assert.equal(await api('/requests').then((value) => value.status), 401)
    assert.equal(
      await api('/requests', { headers: { cookie: sessionCookie() } }).then(
        (value) => value.status
      ),
      200
    )
  })

  test('authorizer runs after the session: no session is 401, a refused session is 403', async ({
    assert,
  }) => {
    const seen: string[] = []
    const { api } = await consoleApp({
      config: {
        dashboardAuth: loginAuth,
        authorizer: (ctx) => {
          seen.push(ctx.request.consoleSession!.sub)
          return ctx.consoleSession!.roles.includes('ops')
        },
      },
    })
    assert.equal(await api('/requests').then((value) => value.status), 401)
    assert.deepEqual(seen, [])
    assert.equal(
      await api('/requests', { headers: { cookie: sessionCookie({ sub: 'a' }) } }).then(
        (value) => value.status
      ),
      403
    )
    const allowed = await api('/requests', {
      headers: { cookie: sessionCookie({ sub: 'b', roles: ['ops'] }) },
    })
    assert.equal(allowed.status, 200)
    assert.deepEqual(seen, ['a', 'b'])
  })

  test('an authorizer that throws denies with 403 and one warning', async ({ assert }) => {
    const { api, warnings } = await consoleApp({
      config: {
        authorizer: () => {
          throw new Error('policy service down')
        },
      },
    })
    assert.equal(await api('/requests').then((value) => value.status), 403)
    assert.equal(await api('/queries').then((value) => value.status), 403)
    assert.equal(warnings.filter((line) => line.includes('console authorizer threw')).length, 1)
  })

  test('mutations are denied by default, even to a reader', async ({ assert }) => {
    const { api } = await consoleApp()
    assert.equal(await api('/requests').then((value) => value.status), 200)
    const response = await api('/prune', { method: 'POST' })
    assert.equal(response.status, 403)
    assert.equal(
      await response.json().then((value: any) => value.errors[0].message),
      'Not allowed to prune'
    )
  })

  test('authorizeAction reads the session roles; a throw denies', async ({ assert }) => {
    const { api } = await consoleApp({
      config: {
        dashboardAuth: loginAuth,
        authorizeAction: (ctx, action) => {
          if (ctx.request.consoleSession?.sub === 'boom') throw new Error('nope')
          return (
            action.name === 'prune' &&
            (ctx.request.consoleSession?.roles?.includes('admin') ?? false)
          )
        },
      },
    })
    const post = (cookie?: string) =>
      api('/prune', { method: 'POST', headers: cookie ? { cookie } : {} })
    assert.equal(await post().then((value) => value.status), 401)
    assert.equal(await post(sessionCookie({ roles: ['ops'] })).then((value) => value.status), 403)
    assert.equal(
      await post(sessionCookie({ sub: 'boom', roles: ['admin'] })).then((value) => value.status),
      403
    )
    const ok = await post(sessionCookie({ roles: ['admin'] }))
    assert.equal(ok.status, 200)
    assert.properties(await ok.json().then((value: any) => value.data), ['deleted'])
  })

  test('an API guard refusing a navigation redirects to the sign-in page, anything else gets 401 JSON', async ({
    assert,
  }) => {
    const { api, url } = await consoleApp({
      config: { middleware: [hostGuard, throwingGuard], signInUrl: '/sign-in' },
    })
    const navigation = await navigate(`${url}/console/api/requests`)
    assert.equal(navigation.status, 302)
    assert.equal(navigation.location, '/sign-in')

    const fetchLike = await api('/requests', { headers: { 'sec-fetch-mode': 'cors' } })
    assert.equal(fetchLike.status, 401)
    assert.deepEqual(await fetchLike.json(), {
      errors: [{ code: 'E_CONSOLE_UNAUTHENTICATED', message: 'Authentication required' }],
    })

    // the first guard passes on the host cookie; the second (throwing) one still refuses
    const second = await api('/requests', { headers: { cookie: 'host_session=ok' } })
    assert.equal(second.status, 401)
    assert.equal(
      await second.json().then((value: any) => value.errors[0].code),
      'E_CONSOLE_UNAUTHENTICATED'
    )

    const both = await api('/requests', {
      headers: { cookie: 'host_session=ok', authorization: 'Bearer host' },
    })
    assert.equal(both.status, 200)
  })

  test('a guard on the API leaves the page reachable, and a page guard leaves the API to its own gates', async ({
    assert,
  }) => {
    const apiOnly = await consoleApp({ config: { middleware: [hostGuard] } })
    assert.equal(await fetch(`${apiOnly.url}/console`).then((value) => value.status), 200)
    assert.equal(await apiOnly.api('/requests').then((value) => value.status), 401)
    await apiOnly.close()

    const pageOnly = await consoleApp({
      config: { ui: { middleware: [hostGuard], signInUrl: '/login' } },
    })
    const page = await navigate(`${pageOnly.url}/console`)
    assert.equal(page.status, 302)
    assert.equal(page.location, '/login')
    assert.equal(await fetch(`${pageOnly.url}/console`).then((value) => value.status), 401)
    const withCookie = await fetch(`${pageOnly.url}/console`, {
      headers: { cookie: 'host_session=ok' },
    })
    assert.equal(withCookie.status, 200)
    assert.include(await withCookie.text(), '<title>Console</title>')
    assert.equal(await pageOnly.api('/requests').then((value) => value.status), 200)
  })

  test('with dashboardAuth and an API guard, a request must pass both', async ({ assert }) => {
    const { api } = await consoleApp({
      config: { dashboardAuth: loginAuth, middleware: [hostGuard] },
    })
    assert.equal(
      await api('/requests', { headers: { cookie: 'host_session=ok' } }).then(
        (value) => value.status
      ),
      401
    )
    assert.equal(
      await api('/requests', { headers: { cookie: sessionCookie() } }).then(
        (value) => value.status
      ),
      401
    )
    const both = await api('/requests', {
      headers: { cookie: `host_session=ok; ${sessionCookie()}` },
    })
    assert.equal(both.status, 200)
  })

  test('the page shell is public and holds no data', async ({ assert }) => {
    const { url } = await consoleApp({ config: { dashboardAuth: loginAuth } })
    const response = await fetch(`${url}/console`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type')!, /text\/html/)
    assert.include(await response.text(), '"/console/api"')
  })
})
