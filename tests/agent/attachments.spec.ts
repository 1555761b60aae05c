import { test } from '@japa/runner'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { defineConfig, stagings } from '../../src/agent/main.ts'
import { AgentMessage } from '../../src/agent/models/main.ts'
import type { AgentConfigInput } from '../../src/agent/types.ts'
import { ALICE, BOB, actorHeaders, agentApp, bodyOf, errorOf, type TestActor } from './helpers.ts'

type App = Awaited<ReturnType<typeof agentApp>>

/** A 1×1 PNG and a PDF header: what the body parser's type detection reads */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64'
)
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n')
const CSV = 'sku,qty\nA,2\n'

const withStaging = (extra: AgentConfigInput['attachments'] = {}) => ({
  attachments: { staging: stagings.fs(), ...extra },
})

/** The user turns of the model's last request, as the wire carried them */
function userTurns(app: App) {
  const body = app.fake.requests.at(-1)!.body
  return (body.messages as Array<{ role: string; content: any }>).filter(
    (message) => message.role === 'user'
  )
}

async function upload(
  app: App,
  bytes: Buffer,
  name: string,
  actor: TestActor = ALICE,
  type = 'application/octet-stream'
) {
  const form = new FormData()
  form.append('file', new Blob([bytes], { type }), name)
  return fetch(`${app.url}/agent/attachments`, {
    method: 'POST',
    headers: actorHeaders(actor),
    body: form,
  })
}

async function turn(app: App, body: Record<string, unknown>, actor: TestActor = ALICE) {
  const { response, sse } = await app.chat(body, actor)
  if (response.status !== 200) throw new Error(`chat answered ${response.status}`)
  const frames = await sse.rest()
  return { frames, threadId: response.headers.get('x-agent-thread-id')! }
}

test.group('Agent attachments', () => {
  test('inline attachments reach the OpenAI wire as image, file and text parts, and are stored as metadata', async ({
    assert,
  }) => {
    const app = await agentApp({ config: withStaging() })
    const { frames, threadId } = await turn(app, {
      message: 'What is in these?',
      attachments: [
        { data: PNG.toString('base64'), contentType: 'image/png', name: 'dot.png' },
        { data: `data:application/pdf;base64,${PDF.toString('base64')}`, name: 'invoice.pdf' },
        { data: Buffer.from(CSV).toString('base64'), contentType: 'text/csv', name: 'lines.csv' },
      ],
    })
    assert.equal(frames.at(-1)?.event, 'done')
    const [question] = userTurns(app)
    assert.deepEqual(question.content, [
      { type: 'text', text: 'What is in these?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      {
        type: 'file',
        file: {
          filename: 'invoice.pdf',
          file_data: `data:application/pdf;base64,${PDF.toString('base64')}`,
        },
      },
      {
        type: 'text',
        text: `<attachment name="lines.csv" type="text/csv">\n${CSV}\n</attachment>`,
      },
    ])

    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    const stored = detail.messages[0].attachments
    assert.deepEqual(
      stored.map((each: any) => [each.name, each.contentType, each.size]),
      [
        ['dot.png', 'image/png', PNG.byteLength],
        ['invoice.pdf', 'application/pdf', PDF.byteLength],
        ['lines.csv', 'text/csv', CSV.length],
      ]
    )
    // Metadata only: the bytes stay in the staging
    const [row] = await app.db.from('agent_messages').where('role', 'user')
    assert.notInclude(row.attachments, PNG.toString('base64'))
    assert.isString(stored[0].id)
    // The exported Lucid model reads the same metadata
    const [model] = await AgentMessage.query().where('threadId', threadId).where('role', 'user')
    assert.deepEqual(model.attachments, stored)

    // The next turn replays the history with its attachments
    await turn(app, { message: 'And now?', threadId })
    const replayed = userTurns(app)
    assert.lengthOf(replayed, 2)
    assert.equal(
      replayed[0].content[1].image_url.url,
      `data:image/png;base64,${PNG.toString('base64')}`
    )
    assert.equal(replayed[1].content, 'And now?')
  })

  test('on the Anthropic wire images and PDFs are image and document blocks', async ({
    assert,
  }) => {
    const app = await agentApp({ wire: 'anthropic', config: withStaging() })
    await turn(app, {
      message: 'Read them',
      attachments: [
        { data: PNG.toString('base64'), contentType: 'image/png' },
        { data: PDF.toString('base64'), contentType: 'application/pdf', name: 'a.pdf' },
      ],
    })
    const content = userTurns(app)[0].content as any[]
    assert.deepInclude(content, {
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') },
    })
    const document = content.find((part) => part.type === 'document')
    assert.deepEqual(document.source, {
      type: 'base64',
      media_type: 'application/pdf',
      data: PDF.toString('base64'),
    })
  })

  test('limits answer 400 or 413 naming the field, before a thread is written or the model called', async ({
    assert,
  }) => {
    const app = await agentApp({ config: withStaging({ maxBytes: 100, maxPerMessage: 2 }) })
    const png = { data: PNG.toString('base64'), contentType: 'image/png' }
    const cases: Array<[unknown, number, string, string]> = [
      [
        [{ data: Buffer.alloc(101).toString('base64'), contentType: 'text/plain' }],
        413,
        'attachments[0].data',
        'The attachment is larger than 100 bytes (attachments.maxBytes)',
      ],
      [
        [png, { data: 'AAAA', contentType: 'application/zip' }],
        400,
        'attachments[1].contentType',
        'Attachments of type "application/zip" are not accepted: use one of image/png, image/jpeg, image/gif, image/webp, application/pdf, text/plain, text/csv',
      ],
      [
        [png, png, png],
        400,
        'attachments',
        'A message carries at most 2 attachments (attachments.maxPerMessage)',
      ],
      [
        [{ url: 'http://169.254.169.254/latest', contentType: 'image/png' }],
        400,
        'attachments[0].url',
        'Attachments by URL are not accepted: upload the file, or send its bytes as "data"',
      ],
      [
        [{ data: 'not base64!', contentType: 'image/png' }],
        400,
        'attachments[0].data',
        '"data" is not valid base64',
      ],
      [
        [{ data: 'AAAA' }],
        400,
        'attachments[0].contentType',
        '"contentType" must name the file\'s type, such as "image/png"',
      ],
      [[{ id: '../../etc/passwd' }], 400, 'attachments[0].id', '"id" must be an attachment id'],
      ['dot.png', 400, 'attachments', '"attachments" must be an array'],
    ]
    for (const [attachments, status, field, message] of cases) {
      const { response } = await app.chat({ message: 'Hi', attachments })
      assert.equal(response.status, status, field)
      const error = await errorOf(response)
      assert.deepEqual(error, {
        code: status === 413 ? 'E_AGENT_PAYLOAD_TOO_LARGE' : 'E_AGENT_INVALID_REQUEST',
        message,
        field,
      })
    }
    assert.lengthOf(await bodyOf(await app.request('GET', '/threads')), 0)
    assert.lengthOf(app.fake.requests, 0)
  })

  test('upload stores the file for its actor, a chat uses it by id, another actor gets 403 and an unknown id 404', async ({
    assert,
  }) => {
    const app = await agentApp({ config: withStaging({ upload: true }) })
    // The bytes' magic number wins over the declared type
    const response = await upload(app, PNG, 'photo.png', ALICE, 'text/plain')
    assert.equal(response.status, 201)
    const uploaded = await bodyOf(response)
    assert.deepEqual(
      { ...uploaded, id: typeof uploaded.id },
      { id: 'string', name: 'photo.png', contentType: 'image/png', size: PNG.byteLength }
    )

    const { threadId } = await turn(app, {
      message: 'Describe it',
      attachments: [{ id: uploaded.id }],
    })
    assert.equal(
      userTurns(app)[0].content[1].image_url.url,
      `data:image/png;base64,${PNG.toString('base64')}`
    )
    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.deepEqual(detail.messages[0].attachments, [uploaded])

    const stolen = await app.chat({ message: 'Mine now', attachments: [{ id: uploaded.id }] }, BOB)
    assert.equal(stolen.response.status, 403)
    assert.deepInclude(await errorOf(stolen.response), {
      code: 'E_AGENT_FORBIDDEN',
      resource: 'attachment',
    })
    const unknown = await app.chat({
      message: 'Hi',
      attachments: [{ id: '00000000-0000-4000-8000-000000000000' }],
    })
    assert.equal(unknown.response.status, 404)
    assert.deepInclude(await errorOf(unknown.response), { resource: 'attachment' })
    // Neither refused chat wrote a thread
    assert.lengthOf(await bodyOf(await app.request('GET', '/threads', BOB)), 0)
    assert.lengthOf(await bodyOf(await app.request('GET', '/threads', ALICE)), 1)
  })

  test('upload refuses a type outside the list (400), a file over maxBytes (413), no file (400) and no actor (401)', async ({
    assert,
  }) => {
    const app = await agentApp({ config: withStaging({ upload: true, maxBytes: 64 }) })
    const zip = Buffer.from('504b030414000000080000000000', 'hex')
    const refused = await upload(app, zip, 'archive.zip')
    assert.equal(refused.status, 400)
    assert.deepInclude(await errorOf(refused), { code: 'E_AGENT_INVALID_REQUEST', field: 'file' })

    const large = await upload(app, Buffer.alloc(65, 'a'), 'big.txt')
    assert.equal(large.status, 413)
    assert.deepEqual(await errorOf(large), {
      code: 'E_AGENT_PAYLOAD_TOO_LARGE',
      message: 'The attachment is larger than 64 bytes (attachments.maxBytes)',
      field: 'file',
    })

    const form = new FormData()
    form.append('note', 'no file')
    const empty = await fetch(`${app.url}/agent/attachments`, {
      method: 'POST',
      headers: actorHeaders(ALICE),
      body: form,
    })
    assert.equal(empty.status, 400)
    assert.deepInclude(await errorOf(empty), { field: 'file' })

    const anonymous = await fetch(`${app.url}/agent/attachments`, { method: 'POST', body: form })
    assert.equal(anonymous.status, 401)

    // Text has no magic number: the part's declared type is used, and checked
    const text = await upload(app, Buffer.from('hello'), 'hello.txt', ALICE, 'text/plain')
    assert.equal(text.status, 201)
    assert.include(await bodyOf(text), { contentType: 'text/plain', size: 5 })
    const undeclared = await upload(app, Buffer.from('hello'), 'hello.txt')
    assert.equal(undeclared.status, 400)
    // Bytes that are not the image their name and type claim are refused
    const fake = await upload(app, Buffer.from('not a png'), 'fake.png', ALICE, 'image/png')
    assert.equal(fake.status, 400)
  })

  test('the upload route is not mounted without upload: true', async ({ assert }) => {
    const app = await agentApp({ config: withStaging() })
    const response = await upload(app, PNG, 'photo.png')
    assert.equal(response.status, 404)
  })

  test('regenerate and fork keep the question attachments', async ({ assert }) => {
    const app = await agentApp({ config: withStaging() })
    const image = { data: PNG.toString('base64'), contentType: 'image/png', name: 'dot.png' }
    const { threadId } = await turn(app, { message: 'Look', attachments: [image] })

    await turn(app, { threadId, regenerate: true })
    assert.lengthOf(app.fake.requests, 2)
    assert.equal(userTurns(app)[0].content[1].type, 'image_url')
    const refused = await app.chat({ threadId, regenerate: true, attachments: [image] })
    assert.equal(refused.response.status, 400)
    assert.deepInclude(await errorOf(refused.response), { field: 'attachments' })

    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    const forked = await bodyOf(
      await app.request('POST', `/threads/${threadId}/fork-from/${detail.messages[0].id}`)
    )
    const copy = await bodyOf(await app.request('GET', `/threads/${forked.id}`))
    assert.deepEqual(copy.messages[0].attachments, detail.messages[0].attachments)
    await turn(app, { threadId: forked.id, message: 'Again' })
    assert.equal(
      userTurns(app)[0].content[1].image_url.url,
      `data:image/png;base64,${PNG.toString('base64')}`
    )
  })

  test('a transient thread keeps its attachments through promote', async ({ assert }) => {
    const app = await agentApp({ config: withStaging() })
    const image = { data: PNG.toString('base64'), contentType: 'image/png', name: 'dot.png' }
    const { threadId } = await turn(app, { message: 'Look', transient: true, attachments: [image] })
    assert.deepEqual(await bodyOf(await app.request('POST', `/threads/${threadId}/promote`)), {
      ok: true,
    })
    const [row] = await app.db
      .from('agent_messages')
      .where('thread_id', threadId)
      .where('role', 'user')
    assert.deepEqual(
      JSON.parse(row.attachments).map((each: any) => each.name),
      ['dot.png']
    )
  })

  test('an attachment whose bytes are gone is named to the model and the turn still answers', async ({
    assert,
  }) => {
    const directory = join(process.cwd(), 'tmp', `attachments-gone-${process.pid}`)
    const app = await agentApp({
      config: { attachments: { staging: stagings.fs({ directory }) } },
    })
    const image = { data: PNG.toString('base64'), contentType: 'image/png', name: 'dot.png' }
    const { threadId } = await turn(app, { message: 'Look', attachments: [image] })
    await rm(directory, { recursive: true, force: true })
    const { frames } = await turn(app, { threadId, message: 'Still there?' })
    assert.equal(frames.at(-1)?.event, 'done')
    assert.deepEqual(userTurns(app)[0].content[1], {
      type: 'text',
      text: '[The attachment "dot.png" (image/png) is no longer available]',
    })
  })

  test('defineConfig names a bad attachments option and upload without a staging', ({ assert }) => {
    const base = {
      model: { label: 'x', streamStep: async function* () {} },
      actorResolver: () => null,
    }
    assert.throws(
      () => defineConfig({ ...base, attachments: { upload: true } }),
      '"attachments.upload: true" in config/agent.ts needs "attachments.staging" to keep the uploaded files. Set staging: stagings.fs() (files in tmp/agent-attachments) or your own AttachmentStaging, or remove upload'
    )
    assert.throws(
      () => defineConfig({ ...base, attachments: { maxBytes: 0 } }),
      'Invalid "attachments.maxBytes" in config/agent.ts: expected a positive integer, received 0'
    )
    assert.throws(
      () => defineConfig({ ...base, attachments: { allowedContentTypes: ['png'] } }),
      /Invalid "attachments.allowedContentTypes"/
    )
    assert.throws(
      () => defineConfig({ ...base, attachments: { staging: {} as any } }),
      /Invalid "attachments.staging" in config\/agent.ts/
    )
  })
})
