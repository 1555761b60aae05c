import { test } from '@japa/runner'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { callGatewayApi } from '../../src/payments/drivers/gateway_api.ts'

/** A loopback API answering with `listener`, closed when the test ends */
async function api(listener: RequestListener) {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

test.group('Payments | gateway API calls', () => {
  test('a JSON answer comes back parsed with its status; a body that is not JSON is undefined', async ({
    assert,
    cleanup,
  }) => {
    const seen: string[] = []
    const server = await api((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', () => {
        seen.push(`${request.method} ${request.url} ${request.headers.authorization} ${body}`)
        response.writeHead(request.url === '/text' ? 502 : 200)
        response.end(request.url === '/text' ? 'Bad gateway' : '{"paid":true}')
      })
    })
    cleanup(server.close)
    const posted = await callGatewayApi(`${server.url}/check`, {
      method: 'POST',
      headers: { 'authorization': 'Bearer t', 'content-type': 'application/json' },
      body: '{"a":1}',
      timeoutMs: 5000,
    })
    assert.deepEqual(posted, { status: 200, body: { paid: true } })
    const text = await callGatewayApi(`${server.url}/text`, { timeoutMs: 5000 })
    assert.deepEqual(text, { status: 502, body: undefined })
    assert.deepEqual(seen, ['POST /check Bearer t {"a":1}', 'GET /text undefined '])
  })

  test('an answer over 1 MiB and an API that never answers are failures, not hangs', async ({
    assert,
    cleanup,
  }) => {
    const server = await api((request, response) => {
      if (request.url === '/big') {
        response.writeHead(200)
        response.end(`"${'x'.repeat(1024 * 1024 + 16)}"`)
      }
      // /silent: never answers
    })
    cleanup(server.close)
    await assert.rejects(
      () => callGatewayApi(`${server.url}/big`, { timeoutMs: 5000 }),
      /over 1048576 bytes/
    )
    await assert.rejects(
      () => callGatewayApi(`${server.url}/silent`, { timeoutMs: 200 }),
      /no answer within 200 ms/
    )
  })

  test('a kept-alive connection the API closes as it is reused is retried once on a new one', async ({
    assert,
    cleanup,
  }) => {
    // The first connection's second request finds it closed: the race of a reused kept-alive socket
    const requestsPerSocket = new Map<object, number>()
    let closed = 0
    const server = await api((request, response) => {
      const seen = requestsPerSocket.get(request.socket) ?? 0
      requestsPerSocket.set(request.socket, seen + 1)
      if (seen === 1 && closed === 0) {
        closed++
        return request.socket.destroy()
      }
      response.writeHead(200)
      response.end('{"paid":true}')
    })
    cleanup(server.close)
    // POSTs, as InfinitePay's payment check sends
    const check = { method: 'POST' as const, body: '{}', timeoutMs: 5000 }
    const answers = []
    for (let call = 0; call < 4; call++) {
      answers.push(await callGatewayApi(`${server.url}/check`, check))
    }
    assert.equal(closed, 1)
    assert.deepEqual(
      answers.map(({ body }) => body),
      Array.from({ length: 4 }, () => ({ paid: true }))
    )
  })

  test('only a closed kept-alive connection is retried: a timeout or an oversized answer is asked once', async ({
    assert,
    cleanup,
  }) => {
    const asked: string[] = []
    const server = await api((request, response) => {
      asked.push(request.url!)
      if (request.url === '/big') {
        response.writeHead(200)
        response.end(`"${'x'.repeat(1024 * 1024 + 16)}"`)
      }
      // /silent: never answers
    })
    cleanup(server.close)
    await assert.rejects(() => callGatewayApi(`${server.url}/silent`, { timeoutMs: 100 }))
    const oversized = await callGatewayApi(`${server.url}/big`, { timeoutMs: 5000 }).catch(
      (error) => error
    )
    assert.match(oversized.message, /over 1048576 bytes/)
    assert.equal(oversized.cause?.code, 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
    assert.deepEqual(asked, ['/silent', '/big'])
  })

  test('an API that refuses the connection is a failure the driver reports', async ({ assert }) => {
    const server = await api(() => {})
    await server.close()
    await assert.rejects(
      () => callGatewayApi(`${server.url}/gone`, { timeoutMs: 5000 }),
      /ECONNREFUSED/
    )
  })

  test('a call asks for JSON, keeps its query string, and speaks only http and https', async ({
    assert,
    cleanup,
  }) => {
    const seen: string[] = []
    const server = await api((request, response) => {
      seen.push(`${request.method} ${request.url} ${request.headers.accept}`)
      response.writeHead(200)
      response.end('{}')
    })
    cleanup(server.close)
    await callGatewayApi(`${server.url}/v1/payments/1?fields=id`, { timeoutMs: 5000 })
    assert.deepEqual(seen, ['GET /v1/payments/1?fields=id application/json'])
    await assert.rejects(
      () => callGatewayApi('ftp://127.0.0.1/v1/payments/1', { timeoutMs: 5000 }),
      'Unsupported protocol in ftp://127.0.0.1'
    )
    assert.lengthOf(seen, 1)
  })
})
