import { test } from '@japa/runner'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { HttpContext } from '@adonisjs/core/http'
import { streamRunLog } from '../../src/agent/http/sse.ts'
import { RunEventLog } from '../../src/agent/run_log.ts'
import { SseReader } from '../sse_client.ts'

/**
 * A bare HTTP server whose one response streams `log` through
 * `streamRunLog`, as the chat route does, with a real client reading it.
 */
async function streamedLog(log: RunEventLog, cleanup: (fn: () => Promise<void>) => void) {
  let served!: (response: ServerResponse) => void
  const response = new Promise<ServerResponse>((resolve) => (served = resolve))
  const server = createServer((_request, res) => {
    const ctx = { response: { response: res, relayHeaders() {} } } as unknown as HttpContext
    void streamRunLog(ctx, log, { after: 0, heartbeatMs: 60_000 })
    served(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanup(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const { port } = server.address() as AddressInfo
  const reader = new SseReader(await fetch(`http://127.0.0.1:${port}/`))
  return { reader, response: await response }
}

test.group('Agent SSE writes', () => {
  test('a frame is on the socket when append returns, not held for the next tick', async ({
    assert,
    cleanup,
  }) => {
    const log = new RunEventLog('run-1', 'alice', 100)
    log.append({ event: 'meta', data: { runId: 'run-1' } })
    const { reader, response } = await streamedLog(log, cleanup)
    const meta = await reader.next()
    assert.deepEqual(meta?.data, { runId: 'run-1' })

    const socket = response.socket!
    log.append({ data: { delta: 'Hello' } })
    // Still inside the append's task: nothing may wait in the socket's buffer
    assert.isFalse(socket.writableCorked > 0)
    assert.equal(socket.writableLength, 0)
    const delta = await reader.next()
    assert.deepEqual(delta?.data, { delta: 'Hello' })
  })

  test('a replay and the frames after it reach the reader in order, then the end', async ({
    assert,
    cleanup,
  }) => {
    const log = new RunEventLog('run-2', 'alice', 100)
    log.append({ event: 'meta', data: { runId: 'run-2' } })
    for (const text of ['a', 'b', 'c']) log.append({ data: { delta: text } })
    const { reader } = await streamedLog(log, cleanup)
    log.append({ data: { delta: 'd' } })
    log.append({ event: 'done', data: {} })

    const frames = []
    for (let frame = await reader.next(); frame; frame = await reader.next()) frames.push(frame)
    assert.deepEqual(
      frames.map((frame) => [frame.id, frame.event ?? null, frame.data]),
      [
        ['1', 'meta', { runId: 'run-2' }],
        ['2', null, { delta: 'a' }],
        ['3', null, { delta: 'b' }],
        ['4', null, { delta: 'c' }],
        ['5', null, { delta: 'd' }],
        ['6', 'done', {}],
      ]
    )
  })
})
