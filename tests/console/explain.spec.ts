import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { explainWithLucid, watchers } from '../../src/console/main.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

/** An app recording its queries; mutations allowed to callers sending `x-admin: yes` */
async function explainApp(config: ConsoleConfig = {}) {
  const app = await consoleApp({
    config: {
      watchers: [watchers.queries()],
      buffer: { flushIntervalMs: 60_000 },
      authorizeAction: (ctx) => ctx.request.header('x-admin') === 'yes',
      ...config,
    },
    routes: (router) => {
      router.get('/entries-count', async (ctx) => {
        const db = await ctx.containerResolver.make('lucid.db')
        await db.from('console_entries').where('type', 'request').count('* as total')
        await db
          .table('console_entries_explained_never')
          .insert({ id: 1 })
          .catch(() => {})
        return 'ok'
      })
    },
  })
  await fetch(`${app.url}/entries-count`)
  await app.manager.recorder.flush()
  const page = await app.manager.store.list({ type: 'query', limit: 50 })
  const idOf = (start: string) =>
    page.data.find((entry) => entry.summary.toLowerCase().startsWith(start))!.id
  const explain = (id: string, admin = true) =>
    app.api(`/entries/${id}/explain`, {
      method: 'POST',
      headers: admin ? { 'x-admin': 'yes' } : {},
    })
  return { ...app, idOf, explain }
}

test.group('Console | explain a recorded query', () => {
  test('explainWithLucid returns the database plan of a recorded SELECT, behind authorizeAction', async ({
    assert,
  }) => {
    const app = await explainApp({ explainQuery: explainWithLucid() })
    const select = app.idOf('select count')
    const denied = await app.explain(select, false)
    assert.equal(denied.status, 403)

    const answer = await app.explain(select)
    assert.equal(answer.status, 200)
    const { data } = (await answer.json()) as { data: { plan: unknown } }
    // each database words its plan differently; every one names the table it reads
    assert.include(JSON.stringify(data.plan), 'console_entries')
  })

  test('anything but one SELECT is refused; without explainQuery the route answers 501', async ({
    assert,
  }) => {
    const app = await explainApp({ explainQuery: explainWithLucid() })
    const insert = await app.explain(app.idOf('insert'))
    assert.equal(insert.status, 400)
    const body = (await insert.json()) as { errors: Array<{ code: string; message: string }> }
    assert.equal(body.errors[0].code, 'E_CONSOLE_INVALID_QUERY')
    assert.include(body.errors[0].message, 'single SELECT')

    const unconfigured = await explainApp()
    const answer = await unconfigured.explain(unconfigured.idOf('select count'))
    assert.equal(answer.status, 501)
    const refusal = (await answer.json()) as { errors: Array<{ code: string }> }
    assert.equal(refusal.errors[0].code, 'E_CONSOLE_EXPLAIN_NOT_CONFIGURED')
  })

  test('the host hook gets the recorded query and its connection', async ({ assert }) => {
    const asked: unknown[] = []
    const app = await explainApp({
      explainQuery: (query) => {
        asked.push(query)
        return 'a plan'
      },
    })
    const answer = await app.explain(app.idOf('select count'))
    assert.deepEqual(await answer.json(), { data: { plan: 'a plan' } })
    const [query] = asked as Array<{ sql: string; bindings: unknown[]; connection: string }>
    assert.match(query.sql, /^select count/i)
    assert.deepEqual(query.bindings, ['request'])
    assert.isString(query.connection)
    assert.isAbove(query.connection.length, 0)
  })
})
