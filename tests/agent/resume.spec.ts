import { test } from '@japa/runner'
import { ALICE, BOB, agentApp, deltasOf, errorOf, runStatus, statusOf } from './helpers.ts'

test.group('Agent run resume and cancel', () => {
  test('a reconnect with Last-Event-ID replays exactly the missing frames, then tails to done', async ({
    assert,
  }) => {
    const { chat, resume, fake } = await agentApp()
    fake.reply({ text: ['a', 'b', 'c', 'd', 'e'], stallAfter: 3 })
    const first = await chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    // The client saw meta (1) and delta "a" (2), then its connection dropped
    const seen = await first.sse.until((frame) => frame.id === '2')
    assert.deepEqual(deltasOf(seen), ['a'])
    await first.sse.cancel()
    await fake.stalled()

    const second = await resume(runId, { lastEventId: '2' })
    assert.equal(second.response.status, 200)
    assert.equal(second.response.headers.get('x-agent-run-id'), runId)
    // Everything the run produced while nobody was reading (b, c), nothing twice
    const replayed = await second.sse.until((frame) => frame.id === '4')
    assert.deepEqual(replayed, [
      { event: 'meta', data: { runId } },
      { id: '3', data: { delta: 'b' } },
      { id: '4', data: { delta: 'c' } },
    ])
    fake.release()
    assert.deepEqual(await second.sse.rest(), [
      { id: '5', data: { delta: 'd' } },
      { id: '6', data: { delta: 'e' } },
      { id: '7', event: 'done', data: {} },
    ])
  })

  test('a dropped connection is not a cancel: the run finishes and stores its answer', async ({
    assert,
  }) => {
    const { chat, fake, manager } = await agentApp()
    fake.reply({ text: ['one ', 'two'], stallAfter: 1 })
    const first = await chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    const threadId = first.response.headers.get('x-agent-thread-id')!
    await first.sse.until((frame) => frame.id === '2')
    await first.sse.cancel()
    await fake.stalled()
    fake.release()
    await manager.settled(runId)
    assert.equal(await runStatus(manager, runId), 'done')
    const messages = await manager.config.store.listMessages(threadId)
    assert.equal(messages.at(-1)?.content, 'one two')
  })

  test('?after= resumes like Last-Event-ID; a finished run replays and closes at once', async ({
    assert,
  }) => {
    const { chat, resume, fake } = await agentApp()
    fake.reply({ text: ['x', 'y'] })
    const first = await chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    await first.sse.rest()
    const again = await resume(runId, { after: '2' })
    assert.deepEqual(await again.sse.rest(), [
      { event: 'meta', data: { runId } },
      { id: '3', data: { delta: 'y' } },
      { id: '4', event: 'done', data: {} },
    ])
    const bad = await resume(runId, { lastEventId: 'abc' })
    assert.equal(bad.response.status, 400)
    assert.include(await errorOf(bad.response), { code: 'E_AGENT_INVALID_REQUEST' })
  })

  test('resuming or cancelling another actor run is 403, an unknown run 404', async ({
    assert,
  }) => {
    const { chat, resume, request } = await agentApp()
    const first = await chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    await first.sse.rest()

    const foreign = await resume(runId, { actor: BOB })
    assert.equal(foreign.response.status, 403)
    assert.deepEqual(await foreign.response.json(), {
      errors: [
        {
          code: 'E_AGENT_FORBIDDEN',
          message: 'This run belongs to another actor',
          resource: 'run',
        },
      ],
    })
    assert.equal(await statusOf(request('POST', `/chat/${runId}/cancel`, BOB)), 403)
    const unknown = await resume('00000000-0000-0000-0000-000000000000')
    assert.equal(unknown.response.status, 404)
    assert.include(await errorOf(unknown.response), { code: 'E_AGENT_NOT_FOUND' })
    assert.equal(await statusOf(request('POST', `/chat/${'x'.repeat(80)}/cancel`, ALICE)), 404)
  })

  test('cancel aborts a run in flight: the stream ends with done aborted and the run is recorded aborted', async ({
    assert,
  }) => {
    const { chat, request, fake, manager } = await agentApp()
    fake.reply({ text: ['partial', 'never'], stallAfter: 1 })
    const first = await chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    await first.sse.until((frame) => frame.id === '2')
    await fake.stalled()

    const cancelled = await request('POST', `/chat/${runId}/cancel`)
    assert.deepEqual(await cancelled.json(), { aborted: true })
    assert.deepEqual(await first.sse.rest(), [{ id: '3', event: 'done', data: { aborted: true } }])
    assert.equal(await runStatus(manager, runId), 'aborted')
    const again = await request('POST', `/chat/${runId}/cancel`)
    assert.deepEqual(await again.json(), { aborted: false })
  })

  test('a model connection cut mid-stream ends the run with event error run_failed, logged', async ({
    assert,
  }) => {
    const { app, chat, fake, manager } = await agentApp()
    const logger: any = await app.container.make('logger')
    const errors: unknown[][] = []
    logger.error = (...args: unknown[]) => errors.push(args)
    fake.reply({ text: ['half', 'rest'], cutAfter: 1 })
    const { response, sse } = await chat({ message: 'a secret question' })
    const frames = await sse.rest()
    assert.deepEqual(frames.at(-1), {
      id: String(frames.length),
      event: 'error',
      data: { code: 'run_failed', message: 'The run failed' },
    })
    const runId = response.headers.get('x-agent-run-id')!
    const run = await manager.config.store.findRun(runId)
    assert.include(run, { status: 'failed', errorCode: 'run_failed' })
    // The operator sees why, never the conversation
    assert.lengthOf(errors, 1)
    const [fields, message] = errors[0] as [any, string]
    assert.equal(message, 'atrium agent: run failed')
    assert.equal(fields.runId, runId)
    assert.equal(fields.error.name, 'AI_APICallError')
    assert.notInclude(JSON.stringify(errors), 'secret question')
  })

  test('a logger that throws while reporting a failed run still lets the run end', async ({
    assert,
  }) => {
    const { app, chat, fake, manager } = await agentApp()
    const logger: any = await app.container.make('logger')
    logger.error = () => {
      throw new Error('logger down')
    }
    fake.reply({ text: ['half', 'rest'], cutAfter: 1 })
    const { response, sse } = await chat({ message: 'go' })
    const frames = await sse.rest()
    assert.deepInclude(frames.at(-1), {
      event: 'error',
      data: { code: 'run_failed', message: 'The run failed' },
    })
    const run = await manager.config.store.findRun(response.headers.get('x-agent-run-id')!)
    assert.include(run, { status: 'failed', errorCode: 'run_failed' })
  })

  test('idle streams carry heartbeat comments at the configured interval', async ({ assert }) => {
    const { chat, fake } = await agentApp({ config: { sse: { heartbeatMs: 20 } } })
    fake.reply({ text: ['a', 'b'], stallAfter: 1 })
    const { sse } = await chat({ message: 'go' })
    const frames = await sse.until((frame) => frame.comment === 'ping', { comments: true })
    assert.equal(frames.at(-1)?.comment, 'ping')
    await fake.stalled()
    fake.release()
    const rest = await sse.rest()
    assert.equal(rest.at(-1)?.event, 'done')
  })

  test('stopping the app aborts the runs in flight, ends their streams and records them aborted', async ({
    assert,
  }) => {
    const { chat, fake, close, db } = await agentApp()
    fake.reply({ text: ['a', 'b'], stallAfter: 1 })
    const { response, sse } = await chat({ message: 'go' })
    await sse.until((frame) => frame.id === '2')
    await fake.stalled()
    await close()
    assert.deepEqual(await sse.rest(), [{ id: '3', event: 'done', data: { aborted: true } }])
    const run = await db
      .from('agent_runs')
      .where('id', response.headers.get('x-agent-run-id')!)
      .first()
    assert.equal(run.status, 'aborted')
  })

  test('frames are capped per run: a resume older than the kept window answers 410', async ({
    assert,
  }) => {
    const { chat, resume, fake } = await agentApp({ config: { sse: { maxFramesPerRun: 3 } } })
    fake.reply({ text: ['a', 'b', 'c', 'd'] })
    const first = await chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    await first.sse.rest()
    // Frames 1..6 were written; 4, 5 and 6 are kept
    const gone = await resume(runId, { lastEventId: '2' })
    assert.equal(gone.response.status, 410)
    assert.include(await errorOf(gone.response), { code: 'E_AGENT_REPLAY_GONE', firstKept: 4 })
    const kept = await resume(runId, { lastEventId: '3' })
    assert.deepEqual(await kept.sse.rest(), [
      { event: 'meta', data: { runId } },
      { id: '4', data: { delta: 'c' } },
      { id: '5', data: { delta: 'd' } },
      { id: '6', event: 'done', data: {} },
    ])
  })
})
