import { test } from '@japa/runner'
import { createServer, type ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import type { HttpContext } from '@adonisjs/core/http'
import { streamRunLog } from '../../src/agent/http/sse.ts'
import { RunEventLog } from '../../src/agent/run_log.ts'
import { SseReader } from '../sse_client.ts'

/**
 * A bare HTTP server whose one response streams `log` through
 * `streamRunLog`, as the chat route does.
 */
async function serveLog(log: RunEventLog, cleanup: (fn: () => Promise<void>) => void) {
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
  return { port: (server.address() as AddressInfo).port, response }
}

/** The log streamed to a real client reading it */
async function streamedLog(log: RunEventLog, cleanup: (fn: () => Promise<void>) => void) {
  const { port, response } = await serveLog(log, cleanup)
  const reader = new SseReader(await fetch(`http://127.0.0.1:${port}/`))
  return { reader, response: await response }
}

/** The log streamed to a client that never reads: the kernel's buffers fill, then the server's */
async function unreadLog(log: RunEventLog, cleanup: (fn: () => Promise<void>) => void) {
  const { port, response } = await serveLog(log, cleanup)
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
  socket.pause()
  cleanup(async () => void socket.destroy())
  return { response: await response }
}

/** Every frame until the server ends the stream, as [id, event, data] */
async function readAll(reader: SseReader) {
  const frames = []
  for (let frame = await reader.next(); frame; frame = await reader.next()) {
    frames.push([frame.id, frame.event ?? null, frame.data])
  }
  return frames
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

    assert.deepEqual(await readAll(reader), [
      ['1', 'meta', { runId: 'run-2' }],
      ['2', null, { delta: 'a' }],
      ['3', null, { delta: 'b' }],
      ['4', null, { delta: 'c' }],
      ['5', null, { delta: 'd' }],
      ['6', 'done', {}],
    ])
  })

  test('a replay larger than the slow-reader cap reaches the reader whole, then the tail', async ({
    assert,
    cleanup,
  }) => {
    // 5,000 frames of 1,000 characters: about 5 MB, over the 4 MiB a reader may leave unread
    const log = new RunEventLog('run-3', 'alice', 10_000)
    const text = 'x'.repeat(1000)
    for (let index = 0; index < 5000; index++) log.append({ data: { delta: text } })
    const { reader } = await streamedLog(log, cleanup)
    log.append({ data: { delta: 'tail' } })
    log.append({ event: 'done', data: {} })

    const frames = await readAll(reader)
    assert.lengthOf(frames, 5002)
    assert.deepEqual(frames[4999], ['5000', null, { delta: text }])
    assert.deepEqual(frames.slice(-2), [
      ['5001', null, { delta: 'tail' }],
      ['5002', 'done', {}],
    ])
  })

  test('a reader that stops reading is dropped once 4 MiB wait for it; the run goes on', async ({
    assert,
    cleanup,
  }) => {
    const log = new RunEventLog('run-4', 'alice', 10_000)
    log.append({ event: 'meta', data: { runId: 'run-4' } })
    const { response } = await unreadLog(log, cleanup)
    const text = 'x'.repeat(64 * 1024)
    // 32 MiB: more than the kernel's buffers and the cap together
    for (let index = 0; index < 512; index++) log.append({ data: { delta: text } })
    assert.isTrue(response.destroyed)
    log.append({ event: 'done', data: {} })
    // Every frame was logged: the reader resumes with Last-Event-ID
    assert.equal(log.lastSeq, 514)
    assert.isTrue(log.finished)
  })
})
