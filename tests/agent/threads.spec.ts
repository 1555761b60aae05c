import { test } from '@japa/runner'
import { agent } from '../../src/agent/main.ts'
import { ALICE, BOB, agentApp, bodyOf, errorOf, statusOf } from './helpers.ts'

@agent({ name: 'helper', description: 'Helps', systemPrompt: 'You help.' })
class HelperAgent {}

@agent({ name: 'critic', description: 'Criticises', systemPrompt: 'You criticise.' })
class CriticAgent {}

async function finishedChat(
  chat: Awaited<ReturnType<typeof agentApp>>['chat'],
  body: any,
  actor = ALICE
) {
  const { response, sse } = await chat(body, actor)
  if (response.status !== 200)
    throw new Error(`chat answered ${response.status}: ${await response.text()}`)
  await sse.rest()
  return {
    runId: response.headers.get('x-agent-run-id')!,
    threadId: response.headers.get('x-agent-thread-id')!,
  }
}

test.group('Agent threads and catalog', () => {
  test('the catalog lists the agent classes and marks the default', async ({ assert }) => {
    const { request } = await agentApp({
      config: { agents: [HelperAgent, CriticAgent], defaultAgent: 'critic' },
    })
    const response = await request('GET', '/agents')
    assert.deepEqual(await response.json(), [
      { name: 'helper', description: 'Helps' },
      { name: 'critic', description: 'Criticises', isDefault: true },
    ])
  })

  test('a second turn on a thread sends the history and the chosen agent system prompt', async ({
    assert,
  }) => {
    const { chat, fake } = await agentApp({ config: { agents: [HelperAgent, CriticAgent] } })
    fake.reply({ text: ['First answer'] }, { text: ['Second answer'] })
    const { threadId } = await finishedChat(chat, { message: 'First', agent: 'critic' })
    await finishedChat(chat, { message: 'Second', threadId, agent: 'critic' })
    assert.deepEqual(fake.requests[1].body.messages, [
      { role: 'system', content: 'You criticise.' },
      { role: 'user', content: 'First' },
      { role: 'assistant', content: 'First answer' },
      { role: 'user', content: 'Second' },
    ])
  })

  test('threads are listed per actor, renamed, given a default agent and soft deleted', async ({
    assert,
  }) => {
    const { chat, request, fake } = await agentApp({
      config: { agents: [HelperAgent, CriticAgent] },
    })
    fake.reply({ text: ['hi'] }, { text: ['hi bob'] })
    // Two agents and no defaultAgent: the caller must choose
    const unchosen = await chat({ message: 'Which agent?' })
    assert.equal(unchosen.response.status, 400)
    assert.include(await errorOf(unchosen.response), {
      message:
        'No agent chosen: send "agent" (one of helper, critic), or set "defaultAgent" in config/agent.ts',
    })
    const { threadId } = await finishedChat(chat, {
      message: 'Hello   there\nfriend',
      agent: 'helper',
    })
    await finishedChat(chat, { message: 'Bob here', agent: 'helper' }, BOB)

    const list = await bodyOf(await request('GET', '/threads'))
    assert.lengthOf(list, 1)
    assert.include(list[0], { id: threadId, title: 'Hello there friend', defaultAgent: null })

    const renamed = await request('PATCH', `/threads/${threadId}`, ALICE, {
      title: 'Renamed',
      defaultAgent: 'critic',
    })
    assert.deepEqual(await renamed.json(), { ok: true })
    // Absent defaultAgent leaves it alone; null clears it
    await request('PATCH', `/threads/${threadId}`, ALICE, { title: 'Again' })
    let detail = await bodyOf(await request('GET', `/threads/${threadId}`))
    assert.include(detail, { title: 'Again', defaultAgent: 'critic' })
    assert.deepEqual(
      detail.messages.map((message: any) => [message.role, message.content]),
      [
        ['user', 'Hello   there\nfriend'],
        ['assistant', 'hi'],
      ]
    )
    await request('PATCH', `/threads/${threadId}`, ALICE, { defaultAgent: null })
    detail = await bodyOf(await request('GET', `/threads/${threadId}`))
    assert.isNull(detail.defaultAgent)

    const bad = await request('PATCH', `/threads/${threadId}`, ALICE, { defaultAgent: 'nobody' })
    assert.equal(bad.status, 400)
    assert.include(await errorOf(bad), { field: 'defaultAgent' })

    assert.deepEqual(await bodyOf(await request('DELETE', `/threads/${threadId}`)), { ok: true })
    assert.deepEqual(await bodyOf(await request('GET', '/threads')), [])
    assert.equal(await statusOf(request('GET', `/threads/${threadId}`)), 404)
  })

  test('another actor thread answers 403 on every route, an unknown one 404', async ({
    assert,
  }) => {
    const { chat, request, fake } = await agentApp()
    fake.reply({ text: ['hi'] })
    const { threadId } = await finishedChat(chat, { message: 'mine' })
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { title: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await request(method, `/threads/${threadId}`, BOB, body)
      assert.equal(response.status, 403, method)
      assert.deepEqual(await response.json(), {
        errors: [
          {
            code: 'E_AGENT_FORBIDDEN',
            message: 'This thread belongs to another actor',
            resource: 'thread',
          },
        ],
      })
    }
    const foreignChat = await chat({ message: 'into yours', threadId }, BOB)
    assert.equal(foreignChat.response.status, 403)
    assert.equal(fake.requests.length, 1)

    const unknown = await request('GET', '/threads/4b8f1e8e-0000-4000-8000-000000000000')
    assert.equal(unknown.status, 404)
    assert.deepEqual(await unknown.json(), {
      errors: [{ code: 'E_AGENT_NOT_FOUND', message: 'Unknown thread', resource: 'thread' }],
    })
  })

  test('a request without an actor is 401 and a bad chat body is 400 naming the field', async ({
    assert,
  }) => {
    const { request, fake } = await agentApp()
    const noActor = await request('GET', '/threads', { id: '' })
    assert.equal(noActor.status, 401)
    assert.include(await errorOf(noActor), { code: 'E_AGENT_UNAUTHENTICATED' })

    for (const [body, field] of [
      [{}, 'message'],
      [{ message: '   ' }, 'message'],
      [{ message: 'x'.repeat(100_001) }, 'message'],
      [{ message: 'hi', threadId: 42 }, 'threadId'],
      [{ message: 'hi', agent: 'nobody' }, 'agent'],
      [{ message: 'hi', regenerate: true }, 'threadId'],
      // attachments need attachments.staging in config/agent.ts
      [{ message: 'hi', attachments: [{ id: 'a1' }] }, 'attachments'],
    ] as const) {
      const response = await request('POST', '/chat', ALICE, body)
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 60))
      const error = await errorOf(response)
      assert.equal(error.code, 'E_AGENT_INVALID_REQUEST')
      assert.equal(error.field, field)
    }
    assert.equal(fake.requests.length, 0)
  })

  test("GET /threads pages newest first with limit and before, ties by id, and refuses others' cursors", async ({
    assert,
  }) => {
    const { request, manager, db } = await agentApp()
    const store = manager.config.store
    const ids: string[] = []
    for (let index = 0; index < 7; index++) {
      const created = await store.createThread({ actorRef: 'alice', title: `t${index}` })
      ids.push(created.id)
    }
    const bobs = await store.createThread({ actorRef: 'bob', title: 'bob' })
    // three threads share one updated_at: their order is by id
    const tie = new Date('2026-01-02T03:04:05.000Z')
    await db.from('agent_threads').whereIn('id', ids.slice(2, 5)).update({ updated_at: tie })
    await db
      .from('agent_threads')
      .where('id', ids[6])
      .update({ updated_at: new Date('2020-01-01T00:00:00.000Z') })
    await store.softDeleteThread(ids[3])

    const idsOf = async (path: string): Promise<string[]> => {
      const rows = await bodyOf(await request('GET', path))
      return rows.map((row: any) => row.id)
    }
    const everything = await idsOf('/threads')
    assert.lengthOf(everything, 6)
    assert.notInclude(everything, ids[3])
    assert.equal(everything.at(-1), ids[6])
    const tied = everything.filter((id: string) => [ids[2], ids[4]].includes(id))
    assert.deepEqual(tied, [ids[2], ids[4]].sort().reverse())

    const walked: string[] = []
    let before: string | undefined
    for (let pages = 0; pages < 10; pages++) {
      const query = before ? `?limit=2&before=${before}` : '?limit=2'
      const page = await idsOf(`/threads${query}`)
      assert.isAtMost(page.length, 2)
      if (page.length === 0) break
      walked.push(...page)
      before = page.at(-1)
    }
    assert.deepEqual(walked, everything)

    // a deleted thread stays a cursor, at the place its deletion (an update) gave it: the newest
    assert.deepEqual(await idsOf(`/threads?before=${ids[3]}`), everything)
    assert.deepEqual(await idsOf(`/threads?before=${everything[1]}&limit=1`), [everything[2]])

    for (const [query, field] of [
      [`before=${bobs.id}`, 'before'],
      ['before=not%20an%20id', 'before'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=1e2', 'limit'],
    ]) {
      const response = await request('GET', `/threads?${query}`)
      assert.equal(response.status, 400, query)
      const error = await errorOf(response)
      assert.equal(error.field, field, query)
    }
  })
})
