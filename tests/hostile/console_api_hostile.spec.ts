import { request } from 'node:http'
import { test } from '@japa/runner'
import { consoleApp } from '../console/helpers.ts'
import { explainWithLucid, watchers } from '../../src/console/main.ts'
import { parseListQuery } from '../../src/console/http/entries_controller.ts'
import { parseInstant } from '../../src/console/mcp/tools.ts'
import { withoutNulEscapes } from '../../src/shared/nul.ts'

test.group('Hostile | console API and recording', () => {
  test('a NUL byte in a recorded request never drops the entries flushed with it', async ({
    assert,
  }) => {
    const app = await consoleApp({
      routes: (router) => {
        router.get('/hello', () => ({ ok: true }))
        router.post('/hello', () => ({ ok: true }))
      },
    })
    await fetch(`${app.url}/hello?before=1`)
    await fetch(`${app.url}/hello?q=%00`)
    await fetch(`${app.url}/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ 'note\u0000': 'a\u0000b' }),
    })
    await fetch(`${app.url}/hello?after=1`)
    await app.manager.recorder.flush()

    const answer = await app.api('/requests')
    const { data } = (await answer.json()) as { data: Array<{ id: string; summary: string }> }
    assert.lengthOf(data, 4)
    const entries = await Promise.all(data.map(({ id }) => app.manager.store.find(id)))
    const queryOf = (entry: (typeof entries)[number]) => entry!.content.query as { q?: string }
    const get = entries.find((entry) => queryOf(entry)?.q !== undefined)!
    const post = entries.find((entry) => entry!.method === 'POST')!
    // PostgreSQL text cannot hold U+0000: it is stored as U+FFFD there, verbatim elsewhere
    assert.oneOf(queryOf(get).q, ['\u0000', '\ufffd'])
    assert.oneOf(Object.values(post.content.body as object)[0], ['a\u0000b', 'a\ufffdb'])
  })

  test('only a real \\u0000 escape is replaced, never an escaped backslash before "u0000"', ({
    assert,
  }) => {
    for (const [text, stored] of [
      ['a\u0000b', 'a\ufffdb'],
      ['a\\u0000', 'a\\u0000'],
      ['a\\\u0000', 'a\\\ufffd'],
      ['plain', 'plain'],
    ]) {
      assert.equal(
        JSON.parse(withoutNulEscapes(JSON.stringify(text))),
        stored,
        JSON.stringify(text)
      )
    }
  })

  test('explaining a recorded SELECT the database can no longer plan is a 422 with its reason', async ({
    assert,
  }) => {
    const app = await consoleApp({
      config: {
        watchers: [watchers.queries()],
        buffer: { flushIntervalMs: 60_000 },
        authorizeAction: () => true,
        explainQuery: explainWithLucid(),
      },
      routes: (router) => {
        router.get('/gone', async (ctx) => {
          const db = await ctx.containerResolver.make('lucid.db')
          await db.rawQuery('create table hostile_gone (id integer)')
          await db.from('hostile_gone').where('id', 3).select('id')
          await db.rawQuery('drop table hostile_gone')
          return 'ok'
        })
      },
    })
    await fetch(`${app.url}/gone`)
    await app.manager.recorder.flush()
    const page = await app.manager.store.list({ type: 'query', limit: 50 })
    const select = page.data.find((entry) => entry.summary.toLowerCase().startsWith('select'))!

    const answer = await app.api(`/entries/${select.id}/explain`, { method: 'POST' })
    assert.equal(answer.status, 422)
    const { errors } = (await answer.json()) as { errors: Array<{ code: string; message: string }> }
    assert.equal(errors[0].code, 'E_CONSOLE_EXPLAIN_FAILED')
    assert.include(errors[0].message, 'The database could not plan this query: ')
    assert.include(errors[0].message, 'hostile_gone')
  })

  test('a list limit is digits only: hex, exponent and padded forms are a 400 naming it', ({
    assert,
  }) => {
    for (const limit of ['0x10', '1e2', ' 5', '5 ', '+5', '5.0']) {
      assert.throws(() => parseListQuery('request', { limit }), /"limit" must be a whole number/)
    }
    assert.equal(parseListQuery('request', { limit: '200' }).limit, 200)
  })

  test('an MCP duration longer than a date can hold names the input instead of "Invalid time value"', ({
    assert,
  }) => {
    for (const value of ['99999999999999y', '9999999999999999999999999d']) {
      assert.throws(() => parseInstant(value, 'since'), /"since" must be an ISO date/)
    }
    assert.equal(
      parseInstant('100y', 'since', 4_000_000_000_000),
      4_000_000_000_000 - 3_155_760_000_000
    )
  })

  test('a replay of an absolute-URL target is a 409 naming it; a replay left unanswered is a 502', async ({
    assert,
  }) => {
    const app = await consoleApp({
      config: { authorizeAction: () => true },
      routes: (router) => {
        router.get('/drop', (ctx) => {
          ctx.response.response.destroy()
        })
        router.get('*', () => 'any')
      },
    })
    // an absolute-form request target, as a proxy client sends it
    await new Promise<void>((resolve) => {
      const target = { host: '127.0.0.1', port: new URL(app.url).port }
      request({ ...target, path: 'http://elsewhere.invalid/orders' }, (response) => {
        response.resume().on('end', resolve)
      }).end()
    })
    await fetch(`${app.url}/drop`).catch(() => {})
    await app.manager.recorder.flush()
    const page = await app.manager.store.list({ type: 'request', limit: 50 })
    const idOf = (summary: string) => page.data.find((entry) => entry.summary === summary)!.id

    const absolute = await app.api(
      `/entries/${idOf('GET http://elsewhere.invalid/orders')}/replay`,
      {
        method: 'POST',
      }
    )
    assert.equal(absolute.status, 409)
    const [refusal] = ((await absolute.json()) as { errors: Array<Record<string, string>> }).errors
    assert.equal(refusal.code, 'E_CONSOLE_REPLAY_INCOMPLETE')
    assert.include(refusal.message, '"http://elsewhere.invalid/orders" is not a path on this app')

    const dropped = await app.api(`/entries/${idOf('GET /drop')}/replay`, { method: 'POST' })
    assert.equal(dropped.status, 502)
    const [failure] = ((await dropped.json()) as { errors: Array<Record<string, string>> }).errors
    assert.equal(failure.code, 'E_CONSOLE_REPLAY_FAILED')
    assert.include(failure.message, 'The replay got no answer from this app: ')
  })
})
