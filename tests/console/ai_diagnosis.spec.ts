import { test } from '@japa/runner'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { consoleApp } from './helpers.ts'
import { FakeModelServer } from '../agent/fake_model.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import { entryId } from '../../src/console/ids.ts'
import type { ConsoleConfig, ConsoleEntry } from '../../src/console/types.ts'

/** Values that must never reach the model: each sits where the app's code put a secret */
const SECRETS = {
  header: 'sk-live-HEADER-1234',
  body: 'hunter2-BODY',
  url: 'tok-URL-5678',
  log: 'hunter2-LOG',
  message: 'sk-live-MESSAGE-9999',
  binding: 'bound-EMAIL-VALUE',
  context: 'ctx-SECRET',
  reason: 'reason-PASSWORD',
  json: 'ak-JSON-4242',
}

function entry(
  at: number,
  batchId: string | null,
  fields: Pick<ConsoleEntry, 'type' | 'summary'> & Partial<ConsoleEntry>
): ConsoleEntry {
  const id = entryId(at)
  return {
    id,
    batchId: batchId ?? id,
    status: null,
    method: null,
    durationMs: null,
    slow: false,
    tags: [],
    createdAt: at,
    content: {},
    ...fields,
  }
}

/**
 * A failed login's batch written as a store holds it, secrets in clear (as
 * an older version, or a key added to `redact.keys` since, would have left
 * them): a request with an `authorization` header and a `password` body
 * field, its query, a log line and the exception.
 */
function failedLogin(at: number) {
  const request = entry(at, null, {
    type: 'request',
    summary: 'POST /login',
    status: 500,
    method: 'POST',
    durationMs: 12,
    content: {
      method: 'POST',
      path: `/login?token=${SECRETS.url}&next=/home`,
      status: 500,
      durationMs: 12,
      headers: { authorization: `Bearer ${SECRETS.header}`, accept: 'application/json' },
      body: { email: 'ada@example.com', password: SECRETS.body },
    },
  })
  const query = entry(at + 1, request.id, {
    type: 'query',
    summary: 'select * from "users" where "email" = ?',
    content: {
      sql: 'select * from "users" where "email" = ? limit 1',
      bindings: [SECRETS.binding],
      timeMs: 2,
    },
  })
  const log = entry(at + 2, request.id, {
    type: 'log',
    summary: 'login attempt',
    content: {
      level: 'info',
      message: `login attempt with password=${SECRETS.log} and payload {"api_key":"${SECRETS.json}"}`,
      context: { password: SECRETS.context },
    },
  })
  const exception = entry(at + 3, request.id, {
    type: 'exception',
    summary: 'InvalidCredentialsException: Invalid credentials',
    status: 500,
    content: {
      class: 'InvalidCredentialsException',
      message: `Invalid credentials for a request with Authorization: Bearer ${SECRETS.message}`,
      status: 500,
      stack:
        'InvalidCredentialsException: Invalid credentials\n    at LoginController.store (app/controllers/login_controller.ts:21:11)',
      reason: { password: SECRETS.reason, attempts: 3 },
    },
  })
  return { request, query, log, exception }
}

/** An app whose `ai.model` is the real OpenAI-compatible provider on the loopback fake */
async function diagnosisApp(config: ConsoleConfig = {}, options: { ai?: boolean } = {}) {
  const fake = await new FakeModelServer().start()
  const model = createOpenAICompatible({
    name: 'fake',
    baseURL: `${fake.url}/v1`,
    apiKey: 'test-key',
    includeUsage: true,
  })('fake-model')
  const app = await consoleApp({
    config: {
      buffer: { flushIntervalMs: 60_000 },
      authorizeAction: (ctx) => ctx.request.header('x-admin') === 'yes',
      ...(options.ai === false ? {} : { ai: { model } }),
      ...config,
    },
  })
  const seeded = failedLogin(Date.now() - 60_000)
  await app.manager.store.write(Object.values(seeded))
  const diagnose = (id: string, admin = true) =>
    answerOf(
      app.api(`/entries/${id}/diagnose`, {
        method: 'POST',
        headers: admin ? { 'x-admin': 'yes' } : {},
      })
    )
  const get = (path: string) => answerOf(app.api(path))
  return { ...app, fake, seeded, diagnose, get }
}

type Body = { data?: any; errors?: Array<{ code: string; message: string; [key: string]: any }> }

/** A response's status, raw text and parsed JSON body */
async function answerOf(pending: Promise<Response>) {
  const response = await pending
  const text = await response.text()
  return { status: response.status, text, body: (text ? JSON.parse(text) : {}) as Body }
}

test.group('Console | AI diagnosis of exceptions', () => {
  test('the model receives the exception and its batch, redacted, and never the secrets', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp()
    cleanup(() => app.fake.close())
    app.fake.reply({ text: ['## Likely cause\n', 'The password check throws.'] })

    const { status, body } = await app.diagnose(app.seeded.exception.id)
    assert.equal(status, 200)
    assert.equal(body.data.text, '## Likely cause\nThe password check throws.')
    assert.equal(body.data.model, 'fake.chat:fake-model')
    assert.isFalse(body.data.cached)

    assert.lengthOf(app.fake.requests, 1)
    const sent = JSON.stringify(app.fake.requests[0].body)
    assert.include(sent, 'InvalidCredentialsException')
    assert.include(sent, 'login_controller.ts:21:11')
    assert.include(sent, 'POST /login')
    assert.include(sent, 'select * from \\"users\\"')
    assert.include(sent, 'login attempt with password=[redacted]')
    assert.include(sent, 'Authorization: [redacted]')
    for (const [where, secret] of Object.entries(SECRETS)) {
      assert.notInclude(sent, secret, `the ${where} secret reached the model`)
    }
  })

  test('the answer is stored on the entry and a second click costs no model call', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp()
    cleanup(() => app.fake.close())
    app.fake.reply({ text: ['First answer'] }, { text: ['Second answer'] })
    const id = app.seeded.exception.id
    const first = await app.diagnose(id)
    assert.equal(first.status, 200)

    const { body: again } = await app.diagnose(id)
    assert.equal(again.data.text, 'First answer')
    assert.isTrue(again.data.cached)
    assert.lengthOf(app.fake.requests, 1)

    const { body: shown } = await app.get(`/entries/${id}`)
    assert.equal(shown.data.content.aiDiagnosis.text, 'First answer')
    // the recorded content is kept beside the answer
    assert.equal(shown.data.content.class, 'InvalidCredentialsException')
  })

  test('two clicks at once share one model call', async ({ assert, cleanup }) => {
    const app = await diagnosisApp()
    cleanup(() => app.fake.close())
    app.fake.reply({ text: ['Shared ', 'answer'], stallAfter: 1 })
    const id = app.seeded.exception.id
    // the route reads the entry, then asks the diagnoser in the same tick: the
    // second read resolving means the second click reached the diagnoser
    const store = app.manager.store
    const find = store.find.bind(store)
    let finds = 0
    let reached!: () => void
    const secondReached = new Promise<void>((resolve) => (reached = resolve))
    store.find = async (wanted) => {
      const found = await find(wanted)
      if (++finds === 2) setImmediate(reached)
      return found
    }
    const first = app.diagnose(id)
    await app.fake.stalled()
    const second = app.diagnose(id)
    await secondReached
    app.fake.release()
    const answers = await Promise.all([first, second])
    assert.deepEqual(
      answers.map((answer) => [answer.status, answer.body.data.text]),
      [
        [200, 'Shared answer'],
        [200, 'Shared answer'],
      ]
    )
    assert.lengthOf(app.fake.requests, 1)
  })

  test('on the embedded store, its writer thread on, the answer is stored too', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp({ storage: stores.embedded() })
    cleanup(() => app.fake.close())
    app.fake.reply({ text: ['Embedded answer'] })
    const id = app.seeded.exception.id
    const answer = await app.diagnose(id)
    assert.equal(answer.status, 200)
    const { body: shown } = await app.get(`/entries/${id}`)
    assert.equal(shown.data.content.aiDiagnosis.text, 'Embedded answer')
  })

  test('includeBatch: false sends the exception alone', async ({ assert, cleanup }) => {
    const fake = await new FakeModelServer().start()
    cleanup(() => fake.close())
    const model = createOpenAICompatible({ name: 'fake', baseURL: `${fake.url}/v1` })('m')
    const app = await diagnosisApp({ ai: { model, includeBatch: false } })
    cleanup(() => app.fake.close())
    const answer = await app.diagnose(app.seeded.exception.id)
    assert.equal(answer.status, 200)
    assert.lengthOf(fake.requests, 1)
    const sent = JSON.stringify(fake.requests[0].body)
    assert.include(sent, 'InvalidCredentialsException')
    assert.notInclude(sent, 'POST /login')
    assert.notInclude(sent, 'login attempt')
  })

  test('authorizeAction decides: without it or when it refuses, 403 and no model call', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp()
    cleanup(() => app.fake.close())
    const refused = await app.diagnose(app.seeded.exception.id, false)
    assert.equal(refused.status, 403)
    assert.equal(refused.body.errors![0].code, 'E_CONSOLE_FORBIDDEN')

    assert.lengthOf(app.fake.requests, 0)
    const allowed = await app.diagnose(app.seeded.exception.id)
    assert.equal(allowed.status, 200)
    assert.lengthOf(app.fake.requests, 1)

    // a second app on the same database: its migration starts from empty tables
    const unhooked = await diagnosisApp({ authorizeAction: undefined })
    cleanup(() => unhooked.fake.close())
    const unhookedAnswer = await unhooked.diagnose(unhooked.seeded.exception.id)
    assert.equal(unhookedAnswer.status, 403)
    assert.lengthOf(unhooked.fake.requests, 0)
  })

  test('only exception entries: 400 for another type or a malformed id, 404 for an unknown one', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp()
    cleanup(() => app.fake.close())
    const other = await app.diagnose(app.seeded.request.id)
    assert.equal(other.status, 400)
    const body = other.body
    assert.equal(body.errors![0].code, 'E_CONSOLE_INVALID_QUERY')
    assert.include(body.errors![0].message, 'exception')

    const malformed = await app.diagnose('not-an-id')
    assert.equal(malformed.status, 400)
    const unknown = await app.diagnose(entryId(Date.now()))
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.errors![0].code, 'E_CONSOLE_NOT_FOUND')
    assert.lengthOf(app.fake.requests, 0)
  })

  test('without ai the route answers 501 and GET /ai tells the page to hide the button', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp({}, { ai: false })
    cleanup(() => app.fake.close())
    const answer = await app.diagnose(app.seeded.exception.id)
    assert.equal(answer.status, 501)
    assert.equal(answer.body.errors![0].code, 'E_CONSOLE_AI_NOT_CONFIGURED')
    const off = await app.get('/ai')
    assert.deepEqual(off.body.data, {
      diagnosis: false,
      model: null,
    })

    const configured = await diagnosisApp()
    cleanup(() => configured.fake.close())
    const on = await configured.get('/ai')
    assert.deepEqual(on.body.data, {
      diagnosis: true,
      model: 'fake.chat:fake-model',
    })
  })

  test('a model answering 500 is a 502 with a code, nothing stored, the provider text kept out', async ({
    assert,
    cleanup,
  }) => {
    const app = await diagnosisApp()
    cleanup(() => app.fake.close())
    app.fake.reply({ status: 500, errorMessage: 'upstream broke near key sk-upstream-LEAK' })
    const id = app.seeded.exception.id

    const { status, text, body } = await app.diagnose(id)
    assert.equal(status, 502)
    assert.equal(body.errors![0].code, 'E_CONSOLE_DIAGNOSIS_FAILED')
    assert.equal(body.errors![0].upstreamStatus, 500)
    assert.notInclude(text, 'sk-upstream-LEAK')
    assert.notInclude(app.warnings.join('\n'), 'sk-upstream-LEAK')
    assert.lengthOf(app.fake.requests, 1)

    const { body: shown } = await app.get(`/entries/${id}`)
    assert.notProperty(shown.data.content, 'aiDiagnosis')

    // nothing was stored, so the next click asks again
    app.fake.reply({ text: ['Recovered'] })
    const { body: retried } = await app.diagnose(id)
    assert.equal(retried.data.text, 'Recovered')
    assert.lengthOf(app.fake.requests, 2)
  })

  test('defineConfig names "ai.model" and the fix when the model is missing', ({ assert }) => {
    assert.throws(
      () => defineConfig({ ai: { model: undefined as any } }),
      /Missing "ai.model" in config\/console.ts: pass an AI SDK language model/
    )
    assert.throws(
      () => defineConfig({ ai: { model: {} as any } }),
      /Invalid "ai.model" in config\/console.ts/
    )
  })
})
