import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

function report(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/console/api/client-errors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function clientErrorsApp(clientErrors: ConsoleConfig['clientErrors'], production = false) {
  return consoleApp({
    production,
    config: { clientErrors, buffer: { flushIntervalMs: 60_000 } },
  })
}

test.group('Console client errors endpoint', () => {
  test('a report is recorded as a client_error entry, redacted, without any gate', async ({
    assert,
  }) => {
    // production without authorizer: the read API is denied, the public endpoint still answers
    const { url, manager } = await clientErrorsApp({ enabled: true }, true)
    const response = await report(
      url,
      {
        name: 'TypeError',
        message: 'x is undefined',
        stack: 'TypeError: x is undefined\n    at app.js:10:5',
        url: 'https://shop.example/checkout?token=browser-secret&step=2',
        line: 10,
        column: 5,
        context: { cart: 3, password: 'context-secret' },
      },
      { 'user-agent': 'Browser/1.0' }
    )
    assert.equal(response.status, 202)
    assert.deepEqual(await response.json(), { received: true })
    const gated = await fetch(`${url}/console/api/client-errors`)
    assert.equal(gated.status, 403)

    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'client_error', limit: 5 })
    assert.lengthOf(data, 1)
    assert.equal(data[0].summary, 'TypeError: x is undefined')
    const entry = (await manager.store.find(data[0].id))!
    assert.equal(entry.content.url, 'https://shop.example/checkout?token=%5Bredacted%5D&step=2')
    assert.deepEqual(entry.content.context, { cart: 3, password: '[redacted]' })
    assert.equal(entry.content.line, 10)
    assert.equal(entry.content.userAgent, 'Browser/1.0')
    assert.notInclude(JSON.stringify(entry), 'browser-secret')
    assert.notInclude(JSON.stringify(entry), 'context-secret')
  })

  test('a body over maxBodyBytes is a 413 and nothing is recorded', async ({ assert }) => {
    const { url, manager } = await clientErrorsApp({ enabled: true, burst: 100 })
    const response = await report(url, { message: 'big', stack: 'x'.repeat(17 * 1024) })
    assert.equal(response.status, 413)
    assert.equal(((await response.json()) as any).errors[0].code, 'E_CONSOLE_REPORT_TOO_LARGE')

    const small = await clientErrorsApp({ enabled: true, maxBodyBytes: 1024, burst: 100 })
    const over = await report(small.url, { message: 'm', stack: 'y'.repeat(2000) })
    assert.equal(over.status, 413)
    await manager.recorder.flush()
    await small.manager.recorder.flush()
    const { data: stored } = await manager.store.list({ type: 'client_error', limit: 5 })
    assert.lengthOf(stored, 0)
  })

  test('bad fields are a 422 naming the field', async ({ assert }) => {
    const { url } = await clientErrorsApp({ enabled: true, burst: 100 })
    const cases: [unknown, string][] = [
      [{ stack: 'no message' }, 'message'],
      [{ message: '' }, 'message'],
      [{ message: 'm', line: 'ten' }, 'line'],
      [{ message: 'm', line: 1.5 }, 'line'],
      [{ message: 'x'.repeat(2001) }, 'message'],
    ]
    for (const [body, field] of cases) {
      const response = await report(url, body)
      assert.equal(response.status, 422, JSON.stringify(body).slice(0, 40))
      const error = ((await response.json()) as any).errors[0]
      assert.equal(error.code, 'E_CONSOLE_INVALID_REPORT')
      assert.equal(error.field, field)
    }
    // a body the bodyparser leaves alone (sendBeacon's text/plain) is read and parsed here
    const text = await report(url, 'not json', { 'content-type': 'text/plain' })
    assert.equal(text.status, 422)
    assert.equal(((await text.json()) as any).errors[0].field, 'body')
    const beacon = await report(url, JSON.stringify({ message: 'from beacon' }), {
      'content-type': 'text/plain',
    })
    assert.equal(beacon.status, 202)
  })

  test('an IP past its burst gets 429 with Retry-After', async ({ assert }) => {
    const { url, manager } = await clientErrorsApp({ enabled: true, burst: 3, perMinute: 1 })
    const statuses: number[] = []
    for (let index = 0; index < 5; index++) {
      const response = await report(url, { message: `error ${index}` })
      statuses.push(response.status)
    }
    assert.deepEqual(statuses, [202, 202, 202, 429, 429])
    const limited = await report(url, { message: 'again' })
    assert.equal(limited.headers.get('retry-after'), '60')
    assert.equal(((await limited.json()) as any).errors[0].code, 'E_CONSOLE_RATE_LIMITED')
    await manager.recorder.flush()
    const { data: stored } = await manager.store.list({ type: 'client_error', limit: 10 })
    assert.lengthOf(stored, 3)
  })

  test('the endpoint is not mounted unless clientErrors.enabled', async ({ assert }) => {
    const { url } = await clientErrorsApp(undefined)
    const response = await report(url, { message: 'm' })
    assert.equal(response.status, 404)
  })
})
