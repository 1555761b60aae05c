import { request as httpRequest } from 'node:http'
import { getActiveTest, test } from '@japa/runner'
import type { Router } from '@adonisjs/core/http'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import ConsoleDoctor from '../../commands/console_doctor.ts'
import { defineConfig, defineConsoleExtension, watchers } from '../../src/console/main.ts'
import { entryId } from '../../src/console/ids.ts'
import { MAX_MCP_BODY_BYTES } from '../../src/console/mcp/http.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'
import { consoleApp } from './helpers.ts'

const TOKEN = 'mcp-test-token-0123456789-abcdefghij'

/** An initialize call, as an MCP client sends it first */
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1.0.0' },
  },
})
const MCP_HEADERS = {
  'content-type': 'application/json',
  'accept': 'application/json, text/event-stream',
}

/** Host routes: an order that fails after a query and a log, a healthy page, a signup with secrets */
function hostRoutes(router: Router) {
  router.get('/orders/:id', async (ctx) => {
    const db = await ctx.containerResolver.make('lucid.db')
    await db.rawQuery('select ? as marker', [`order-${ctx.params.id}`])
    ctx.logger.info('loading order %s', ctx.params.id)
    throw new Error(`Order ${ctx.params.id} exploded`)
  })
  router.get('/healthy', async () => 'ok')
  router.post('/signup', async () => ({ ok: true }))
}

async function mcpApp(config: ConsoleConfig = {}, options: { bodyparser?: boolean } = {}) {
  const app = await consoleApp({
    ...options,
    config: {
      watchers: [watchers.queries(), watchers.logs()],
      buffer: { flushIntervalMs: 60_000 },
      mcp: { token: TOKEN },
      ...config,
    },
    routes: hostRoutes,
  })
  return { ...app, flush: () => app.manager.recorder.flush(), mcpUrl: `${app.url}/console/mcp` }
}

/** The SDK's own client over streamable HTTP, closed when the test ends */
async function connect(url: string, token: string | null = TOKEN) {
  const client = new Client({ name: 'atrium-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
  })
  await client.connect(transport)
  getActiveTest()!.cleanup(() => client.close())
  return client
}

/** A tool's JSON result; a tool error fails the test with its message */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as any
  if (result.isError) throw new Error(`${name}: ${result.content[0].text}`)
  return JSON.parse(result.content[0].text)
}

/** Two failing orders, one healthy page; then everything written */
async function traffic(app: Awaited<ReturnType<typeof mcpApp>>) {
  for (const path of ['/orders/41', '/orders/42', '/healthy']) await fetch(`${app.url}${path}`)
  await app.flush()
}

test.group('Console MCP tools', () => {
  test('an MCP client lists the four read-only tools', async ({ assert }) => {
    const app = await mcpApp()
    const client = await connect(app.mcpUrl)
    const { tools } = await client.listTools()
    assert.sameMembers(
      tools.map((tool) => tool.name),
      ['search_entries', 'get_batch', 'get_stats', 'diagnose_exception']
    )
    const search = tools.find((tool) => tool.name === 'search_entries')!
    assert.includeMembers(Object.keys(search.inputSchema.properties!), ['types', 'since', 'query'])
    assert.isTrue(search.annotations?.readOnlyHint)
  })

  test('search_entries finds recorded entries by type, words, status and time window', async ({
    assert,
  }) => {
    const app = await mcpApp()
    await traffic(app)
    const client = await connect(app.mcpUrl)

    const exceptions = await call(client, 'search_entries', { types: ['exception'] })
    assert.deepEqual(
      exceptions.entries.map((entry: any) => entry.summary),
      ['Error: Order 42 exploded', 'Error: Order 41 exploded']
    )
    assert.match(exceptions.entries[0].at, /^\d{4}-\d\d-\d\dT/)

    const failing = await call(client, 'search_entries', { types: ['request'], status: '5xx' })
    assert.deepEqual(
      failing.entries.map((entry: any) => entry.summary),
      ['GET /orders/42', 'GET /orders/41']
    )

    const mixed = await call(client, 'search_entries', {
      types: ['request', 'log'],
      query: '42',
      since: '15m',
    })
    assert.sameMembers(
      mixed.entries.map((entry: any) => `${entry.type} ${entry.summary}`),
      ['request GET /orders/42', 'log info: loading order 42', 'log error: Order 42 exploded']
    )

    const limited = await call(client, 'search_entries', { limit: 2 })
    assert.lengthOf(limited.entries, 2)
    assert.isTrue(limited.more)

    const past = await call(client, 'search_entries', {
      since: '2001-01-01T00:00:00Z',
      until: '2001-01-02T00:00:00Z',
    })
    assert.deepEqual(past.entries, [])

    const refused = (await client.callTool({
      name: 'search_entries',
      arguments: { since: 'last tuesday' },
    })) as any
    assert.isTrue(refused.isError)
    assert.include(refused.content[0].text, '"since" must be an ISO date')
  })

  test('search_entries filters by an extension’s entry type; an undeclared one is refused', async ({
    assert,
  }) => {
    const app = await mcpApp({
      extensions: [defineConsoleExtension({ name: 'billing', entryTypes: ['invoice'] })],
    })
    const id = entryId()
    await app.manager.store.write([
      {
        id,
        batchId: id,
        type: 'invoice' as any,
        summary: 'invoice INV-7 paid',
        status: null,
        method: null,
        durationMs: null,
        slow: false,
        tags: [],
        createdAt: Date.now(),
        content: { total: 7 },
      },
    ])
    await traffic(app)
    const client = await connect(app.mcpUrl)
    const invoices = await call(client, 'search_entries', { types: ['invoice'] })
    assert.deepEqual(
      invoices.entries.map((entry: any) => `${entry.type} ${entry.summary}`),
      ['invoice invoice INV-7 paid']
    )
    const refused = (await client.callTool({
      name: 'search_entries',
      arguments: { types: ['receipt'] },
    })) as any
    assert.isTrue(refused.isError)
  })

  test('get_batch returns everything one request recorded', async ({ assert }) => {
    const app = await mcpApp()
    await traffic(app)
    const client = await connect(app.mcpUrl)
    const { entries } = await call(client, 'search_entries', {
      types: ['request'],
      query: 'orders 41',
    })
    const batch = await call(client, 'get_batch', { id: entries[0].batchId })
    // the second log is the exception handler reporting the error
    assert.sameMembers(
      batch.entries.map((entry: any) => entry.type),
      ['request', 'query', 'log', 'exception', 'log']
    )
    const query = batch.entries.find((entry: any) => entry.type === 'query')
    assert.deepEqual(query.content.bindings, ['order-41'])
    assert.equal(batch.omitted, 0)

    const missing = (await client.callTool({
      name: 'get_batch',
      arguments: { id: entryId(Date.now()) },
    })) as any
    assert.isTrue(missing.isError)
    assert.include(missing.content[0].text, 'not found')
  })

  test('get_stats reports traffic and exception families', async ({ assert }) => {
    const app = await mcpApp()
    await traffic(app)
    const client = await connect(app.mcpUrl)
    const stats = await call(client, 'get_stats', { minutes: 5 })
    assert.equal(stats.recorder.state, 'running')
    assert.equal(stats.throughput.requests, 3)
    assert.equal(stats.throughput.errors, 2)
    assert.deepInclude(
      stats.routes.map((route: any) => [route.route, route.requests]),
      ['/orders/:id', 2]
    )
    assert.lengthOf(stats.exceptions.families, 1)
    assert.equal(stats.exceptions.families[0].count, 2)
  })

  test('diagnose_exception gathers the exception, its family, its request, queries and logs', async ({
    assert,
  }) => {
    const app = await mcpApp()
    await traffic(app)
    const client = await connect(app.mcpUrl)
    const { entries } = await call(client, 'search_entries', {
      types: ['exception'],
      query: '41',
    })
    const diagnosis = await call(client, 'diagnose_exception', { id: entries[0].id })
    assert.equal(diagnosis.exception.content.message, 'Order 41 exploded')
    assert.isString(diagnosis.exception.content.stack)
    assert.equal(diagnosis.family.count, 2)
    assert.equal(diagnosis.family.class, 'Error')
    assert.equal(diagnosis.request.summary, 'GET /orders/41')
    assert.deepEqual(
      diagnosis.queries.map((query: any) => query.content.bindings),
      [['order-41']]
    )
    assert.deepEqual(
      diagnosis.logs.map((log: any) => log.summary),
      ['info: loading order 41', 'error: Order 41 exploded']
    )
    // the other failing order logged within seconds, in its own batch
    assert.include(
      diagnosis.nearbyLogs.map((log: any) => log.summary),
      'info: loading order 42'
    )

    const request = await call(client, 'search_entries', { types: ['request'], limit: 1 })
    const wrongType = (await client.callTool({
      name: 'diagnose_exception',
      arguments: { id: request.entries[0].id },
    })) as any
    assert.isTrue(wrongType.isError)
  })

  test('secrets in recorded headers and bodies come out redacted', async ({ assert }) => {
    const app = await mcpApp({ redact: { keys: ['ssn'] } })
    await fetch(`${app.url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'header-secret-q7' },
      body: JSON.stringify({ email: 'a@example.com', password: 'body-secret-q8' }),
    })
    // an entry written around the recorder (a custom watcher, or recorded before
    // "ssn" joined redact.keys) is redacted on the way out too
    const id = entryId(Date.now())
    await app.manager.store.write([
      {
        id,
        batchId: id,
        type: 'request',
        summary: 'GET /import?token=url-secret-q9',
        status: 200,
        method: 'GET',
        durationMs: 1,
        slow: false,
        tags: [],
        createdAt: Date.now(),
        content: {
          headers: { authorization: 'Bearer raw-secret-q1', accept: '*/*' },
          body: { profile: { ssn: 'raw-secret-q2' } },
          url: '/import?token=url-secret-q9&page=2',
        },
      },
    ])
    await app.flush()
    const client = await connect(app.mcpUrl)
    const { entries } = await call(client, 'search_entries', { types: ['request'] })
    assert.lengthOf(entries, 2)
    const texts: string[] = [JSON.stringify(entries)]
    for (const entry of entries) {
      const result = (await client.callTool({
        name: 'get_batch',
        arguments: { id: entry.batchId },
      })) as any
      texts.push(result.content[0].text)
    }
    const output = texts.join('\n')
    for (const secret of ['q7', 'q8', 'q9', 'q1', 'q2']) {
      assert.notInclude(output, `secret-${secret}`)
    }
    const signup = JSON.parse(
      texts[1 + entries.findIndex((e: any) => e.summary === 'POST /signup')]
    )
    assert.equal(signup.entries[0].content.headers['x-api-key'], '[redacted]')
    assert.equal(signup.entries[0].content.body.password, '[redacted]')
    const imported = JSON.parse(texts[1 + entries.findIndex((e: any) => e.id === id)])
    assert.equal(imported.entries[0].content.headers.authorization, '[redacted]')
    assert.equal(imported.entries[0].content.headers.accept, '*/*')
    assert.equal(imported.entries[0].content.body.profile.ssn, '[redacted]')
    assert.include(imported.entries[0].content.url, 'page=2')
  })
})

test.group('Console MCP gate', () => {
  test('a missing or wrong bearer token is 401 with WWW-Authenticate: Bearer', async ({
    assert,
  }) => {
    const app = await mcpApp()
    for (const authorization of [
      undefined,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(1)}`,
      TOKEN,
    ]) {
      const response = await fetch(app.mcpUrl, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...(authorization ? { authorization } : {}) },
        body: INITIALIZE,
      })
      assert.equal(response.status, 401, String(authorization))
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="console"/)
      assert.notInclude(await response.text(), 'adonis-atrium-console')
    }
    await assert.rejects(() => connect(app.mcpUrl, 'wrong-token'))

    const admitted = await fetch(app.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: INITIALIZE,
    })
    assert.equal(admitted.status, 200)
    const answer = (await admitted.json()) as any
    assert.equal(answer.result.serverInfo.name, 'adonis-atrium-console')
  })

  test('the read authorizer does not apply: the token alone admits', async ({ assert }) => {
    const app = await mcpApp({ authorizer: () => false })
    const api = await app.api('/requests')
    assert.equal(api.status, 403)
    const client = await connect(app.mcpUrl)
    const { tools } = await client.listTools()
    assert.lengthOf(tools, 4)
  })

  test('GET and DELETE answer 405 (stateless: no stream, no session)', async ({ assert }) => {
    const app = await mcpApp()
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(app.mcpUrl, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' },
      })
      assert.equal(response.status, 405, method)
      assert.equal(response.headers.get('allow'), 'POST')
    }
  })

  test('a body over the cap is 413, with or without a content-length', async ({ assert }) => {
    const app = await mcpApp()
    const padding = 'x'.repeat(MAX_MCP_BODY_BYTES)
    const big = JSON.stringify({ ...JSON.parse(INITIALIZE), padding })
    const declared = await fetch(app.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: big,
    })
    assert.equal(declared.status, 413)
    // a chunked body carries no content-length: the bodyparser reads it, the cap still applies
    const chunked = await fetch(app.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit)
    assert.equal(chunked.status, 413)
  })

  test('without the bodyparser the body is read here, under the same cap', async ({ assert }) => {
    const app = await mcpApp({}, { bodyparser: false })
    const client = await connect(app.mcpUrl)
    const { tools } = await client.listTools()
    assert.lengthOf(tools, 4)
    const big = JSON.stringify({
      ...JSON.parse(INITIALIZE),
      padding: 'x'.repeat(MAX_MCP_BODY_BYTES),
    })
    const chunked = await fetch(app.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: new Blob([big]).stream(),
      duplex: 'half',
    } as RequestInit)
    assert.equal(chunked.status, 413)
  })

  test('mcp: true serves without a token on localhost and refuses another Host', async ({
    assert,
  }) => {
    const app = await mcpApp({ mcp: true })
    const client = await connect(app.mcpUrl, null)
    const { tools } = await client.listTools()
    assert.lengthOf(tools, 4)

    const rebound = await new Promise<number>((resolve, reject) => {
      const target = new URL(app.mcpUrl)
      const outgoing = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { ...MCP_HEADERS, host: 'attacker.example' },
        },
        (response) => {
          response.resume()
          resolve(response.statusCode!)
        }
      )
      outgoing.on('error', reject)
      outgoing.end(INITIALIZE)
    })
    assert.equal(rebound, 403)
  })

  test('mcp: true is refused at boot in production', async ({ assert }) => {
    await assert.rejects(
      () => consoleApp({ production: true, config: { mcp: true, authorizer: () => true } }),
      /"mcp: true" in config\/console\.ts .* refused in production/
    )
  })

  test('without mcp the route does not exist', async ({ assert }) => {
    const app = await mcpApp({ mcp: false })
    const response = await fetch(app.mcpUrl, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: INITIALIZE,
    })
    assert.equal(response.status, 404)
  })

  test('a custom path answers under the mount path', async ({ assert }) => {
    const app = await mcpApp({ mcp: { token: TOKEN, path: '/assistants' } })
    const client = await connect(`${app.url}/console/assistants`)
    const { tools } = await client.listTools()
    assert.lengthOf(tools, 4)
  })
})

test.group('Console MCP config', () => {
  test('a missing, short or misplaced mcp option is a config error naming it', ({ assert }) => {
    assert.throws(
      () => defineConfig({ mcp: { token: '' } }),
      /Missing "mcp\.token" in config\/console\.ts/
    )
    assert.throws(
      () => defineConfig({ mcp: { token: 'too-short' } }),
      /"mcp\.token" in config\/console\.ts is 9 bytes; use at least 32/
    )
    assert.throws(
      () => defineConfig({ mcp: { token: TOKEN, path: '/api/mcp' } }),
      /Invalid "mcp\.path"/
    )
    assert.throws(() => defineConfig({ mcp: 'yes' as any }), /Invalid "mcp" in config\/console\.ts/)
  })

  test('console:doctor reports how MCP is gated, and mcp: true in production as a problem', async ({
    assert,
  }) => {
    const app = await mcpApp()
    const ace = await app.app.container.make('ace')
    ace.ui.switchMode('raw')
    const doctor = await ace.create(ConsoleDoctor, ['--json'])
    await doctor.exec()
    const report = JSON.parse(doctor.ui.logger.getLogs()[0].message)
    assert.equal(report.gates.mcp, 'bearer token at /console/mcp')
    assert.match(report.gates.summary, /MCP at \/console\/mcp behind its bearer token/)
  })
})
