import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getActiveTest, test } from '@japa/runner'
import type { Router } from '@adonisjs/core/http'
import { consoleApp } from './helpers.ts'
import { requestEntry } from './entry_factories.ts'
import {
  alertChannels,
  alertRules,
  watchers,
  type AlertFinding,
  type ConsoleAlert,
} from '../../src/console/main.ts'
import { AlertEvaluator } from '../../src/console/alerts/evaluator.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import { entryId } from '../../src/console/ids.ts'
import { MemoryConsoleStore } from '../../src/console/stores/memory.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

const MINUTE = 60_000

/** A loopback webhook receiver: what it was sent, and how it answers (`status`, or never) */
async function webhookReceiver() {
  const received: { path: string; headers: IncomingMessage['headers']; body: any }[] = []
  const behaviour = { status: 204, hang: false }
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      received.push({ path: request.url!, headers: request.headers, body: JSON.parse(body) })
      if (behaviour.hang) return
      response.statusCode = behaviour.status
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  getActiveTest()!.cleanup(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, received, behaviour }
}

function routes(router: Router) {
  router.get('/charge/:id', async ({ params }) => {
    throw new Error(`Card ${params.id} declined for alice@example.com`)
  })
  router.get('/ok', async () => 'ok')
}

async function alertingApp(config: ConsoleConfig) {
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, ...config },
    routes,
  })
  return { ...app, alerts: app.manager.alerts! }
}

/** A channel that keeps what it is sent */
function recordingChannel(name = 'recorder') {
  const sent: ConsoleAlert[] = []
  return { channel: { name, send: (alert: ConsoleAlert) => void sent.push(alert) }, sent }
}

/** An evaluator over a memory store, for rules whose findings the test decides */
function evaluatorOf(config: ConsoleConfig, store = new MemoryConsoleStore()) {
  const resolved = resolveConsoleConfig(config)
  if (!resolved.alerts) throw new Error('no alerts')
  return new AlertEvaluator(resolved.alerts, store, resolved.redact)
}

test.group('Console alerts', () => {
  test('an exception family over its threshold is POSTed once to the webhook, then resolved', async ({
    assert,
  }) => {
    const receiver = await webhookReceiver()
    const { url, manager, alerts, api } = await alertingApp({
      watchers: [watchers.http()],
      alerts: {
        channels: [alertChannels.webhook({ url: `${receiver.url}/hooks/T01/B02/s3cr3t` })],
        rules: [alertRules.exceptions({ over: 2, within: '5m' })],
        intervalMs: 3_600_000,
        dashboardUrl: 'https://ops.example.com/console/',
      },
    })
    for (const id of [11, 12, 13]) await fetch(`${url}/charge/${id}`)
    await manager.recorder.flush()

    const now = Date.now()
    const [fired] = await alerts.evaluate(now)
    assert.lengthOf(receiver.received, 1)
    const { body, headers, path } = receiver.received[0]
    assert.equal(path, '/hooks/T01/B02/s3cr3t')
    assert.equal(headers['content-type'], 'application/json')
    assert.deepInclude(body, {
      status: 'firing',
      rule: 'exceptions',
      kind: 'exceptions',
      subject: 'Error: Card <n> declined for <email>',
      value: 3,
      threshold: 2,
      windowMs: 5 * MINUTE,
    })
    assert.match(body.url, /^https:\/\/ops\.example\.com\/console#\/entries\/[0-9a-f]{24}$/)
    assert.deepEqual(fired, body)

    // the incident goes on: no second alert
    assert.lengthOf(await alerts.evaluate(now + 1000), 0)
    assert.lengthOf(receiver.received, 1)
    // the window has moved past the exceptions: resolved, once
    await alerts.evaluate(now + 10 * MINUTE)
    await alerts.evaluate(now + 11 * MINUTE)
    assert.deepEqual(
      receiver.received.map((delivery) => delivery.body.status),
      ['firing', 'resolved']
    )
    // the console's own POST to the webhook is not an outgoing-HTTP entry
    await manager.recorder.flush()
    const http = await api('/http')
    const { data } = (await http.json()) as { data: { summary: string }[] }
    // the test's own calls to the app are there (same process); the webhook's is not
    assert.lengthOf(data, 3)
    assert.isFalse(data.some((entry) => entry.summary.includes(receiver.url)))
  })

  test('one incident is one alert: a flap within the cooldown stays quiet', async ({ assert }) => {
    const { channel, sent } = recordingChannel()
    let findings: AlertFinding[] = []
    const evaluator = evaluatorOf({
      alerts: {
        channels: [channel],
        rules: [alertRules.custom({ name: 'checkout-down', check: () => findings })],
        cooldown: '30m',
      },
    })
    const down: AlertFinding = {
      subject: 'checkout',
      value: 1,
      threshold: 0,
      summary: 'checkout is down',
    }
    const t0 = Date.now()
    const at = async (minutes: number, holding: boolean) => {
      findings = holding ? [down] : []
      await evaluator.evaluate(t0 + minutes * MINUTE)
    }
    await at(0, true)
    await at(1, true)
    await at(2, false)
    await at(3, true)
    await at(4, true)
    assert.deepEqual(
      sent.map((alert) => alert.status),
      ['firing', 'resolved']
    )
    // still down once the cooldown has passed: one more alert, then its resolution
    await at(31, true)
    await at(32, true)
    await at(33, false)
    assert.deepEqual(
      sent.map((alert) => `${alert.status} ${alert.at}`),
      [
        `firing ${new Date(t0).toISOString()}`,
        `resolved ${new Date(t0 + 2 * MINUTE).toISOString()}`,
        `firing ${new Date(t0 + 31 * MINUTE).toISOString()}`,
        `resolved ${new Date(t0 + 33 * MINUTE).toISOString()}`,
      ]
    )
    assert.equal(sent[2].startedAt, new Date(t0 + 3 * MINUTE).toISOString())
  })

  test('failing channels are logged without their secrets and never stop recording', async ({
    assert,
  }) => {
    const receiver = await webhookReceiver()
    receiver.behaviour.status = 500
    const hanging = await webhookReceiver()
    hanging.behaviour.hang = true
    const { channel: working, sent } = recordingChannel('pager')
    const { url, manager, alerts, warnings, api } = await alertingApp({
      alerts: {
        channels: [
          {
            name: 'slack',
            send() {
              throw new Error('POST https://hooks.slack.com/services/T0/B0/XOXB-SECRET failed')
            },
          },
          alertChannels.webhook({ name: 'ops-webhook', url: `${receiver.url}/in/TOKEN-123` }),
          alertChannels.webhook({ name: 'slow', url: `${hanging.url}/x`, timeoutMs: 200 }),
          working,
        ],
        rules: [alertRules.exceptions({ over: 0, within: '5m' })],
        intervalMs: 3_600_000,
      },
    })
    await fetch(`${url}/charge/1`)
    await manager.recorder.flush()

    const fired = await alerts.evaluate()
    assert.lengthOf(fired, 1)
    assert.lengthOf(sent, 1)
    assert.equal(alerts.failed, 3)
    const failures = warnings.filter((line) => line.includes('alert channel'))
    assert.deepEqual(failures, [
      'console alert channel "slack" failed to send "exceptions" (firing): POST https://hooks.slack.com failed',
      'console alert channel "ops-webhook" failed to send "exceptions" (firing): answered 500',
      'console alert channel "slow" failed to send "exceptions" (firing): no answer within 200 ms',
    ])

    // recording goes on as before
    const ok = await fetch(`${url}/ok`)
    assert.equal(ok.status, 200)
    await manager.recorder.flush()
    const response = await api('/requests')
    const { data } = (await response.json()) as { data: { summary: string }[] }
    assert.deepEqual(
      data.map((entry) => entry.summary),
      ['GET /ok', 'GET /charge/1']
    )
    assert.equal(manager.recorder.failed, 0)
  })

  test('alert payloads are redacted like every other exit', async ({ assert }) => {
    const receiver = await webhookReceiver()
    const evaluator = evaluatorOf({
      redact: { keys: ['iban'] },
      alerts: {
        channels: [alertChannels.webhook({ url: receiver.url })],
        rules: [
          alertRules.custom({
            name: 'refunds',
            check: () => [
              {
                subject: 'GET https://api.example.com/refund?token=tok_live_1&id=3',
                value: 9,
                threshold: 5,
                summary: 'refunds failing at https://api.example.com/refund?api_key=key_live_2',
                details: {
                  token: 'tok_live_3',
                  customer: { password: 'hunter2', iban: 'DE89370400440532013000', id: 7 },
                  note: 'x'.repeat(10_000),
                },
              },
            ],
          }),
        ],
      },
    })
    await evaluator.evaluate()
    const { body } = receiver.received[0]
    const text = JSON.stringify(body)
    for (const secret of ['tok_live_1', 'key_live_2', 'tok_live_3', 'hunter2', 'DE8937']) {
      assert.notInclude(text, secret)
    }
    assert.equal(body.subject, 'GET https://api.example.com/refund?token=%5Bredacted%5D&id=3')
    assert.deepEqual(body.details.customer, { password: '[redacted]', iban: '[redacted]', id: 7 })
    assert.isBelow(body.details.note.length, 4200)
  })

  test('route latency, 5xx rate and job failures fire from what the console stored', async ({
    assert,
  }) => {
    const { channel, sent } = recordingChannel()
    const { manager, alerts } = await alertingApp({
      alerts: {
        channels: [channel],
        rules: [
          alertRules.slowRoutes({ p99Ms: 1500, within: '10m', minRequests: 3 }),
          alertRules.errorRate({ over: 0.25, within: '10m', minRequests: 4 }),
          alertRules.jobFailures({ over: 1, within: '15m' }),
        ],
        intervalMs: 3_600_000,
      },
    })
    const now = Date.now()
    const failedJob = (name: string) => {
      const id = entryId(now - 1000)
      return {
        id,
        batchId: id,
        type: 'job' as const,
        summary: `job ${name} failed 12 ms: SMTP refused`,
        status: null,
        method: null,
        durationMs: 12,
        slow: false,
        tags: ['failed'],
        createdAt: now - 1000,
        content: { name, status: 'failed' },
      }
    }
    await manager.store.write([
      requestEntry(now - 2 * MINUTE, '/checkout', 2400, 500, 'POST'),
      requestEntry(now - 2 * MINUTE, '/checkout', 2600, 500, 'POST'),
      requestEntry(now - MINUTE, '/checkout', 2500, 200, 'POST'),
      requestEntry(now - MINUTE, '/', 20),
      requestEntry(now - MINUTE, '/', 25),
      failedJob('SendInvoice'),
      failedJob('SendInvoice'),
      failedJob('ResizeImage'),
    ])

    await alerts.evaluate(now)
    assert.sameMembers(
      sent.map((alert) => `${alert.rule}: ${alert.subject}`),
      ['slow-routes: POST /checkout', 'error-rate: all routes', 'job-failures: SendInvoice']
    )
    const errorRate = sent.find((alert) => alert.rule === 'error-rate')!
    assert.equal(errorRate.value, 0.4)
    assert.deepEqual(errorRate.details, { requests: 5, errors: 2 })
  })

  test('a fleet sharing one store sends each alert once', async ({ assert }) => {
    const store = new MemoryConsoleStore()
    const { channel, sent } = recordingChannel()
    const config: ConsoleConfig = {
      alerts: {
        channels: [channel],
        rules: [
          alertRules.custom({
            name: 'always',
            check: () => [{ subject: 'x', value: 1, threshold: 0, summary: 'x' }],
          }),
        ],
      },
    }
    const first = evaluatorOf(config, store)
    const second = evaluatorOf(config, store)
    await first.evaluate()
    await second.evaluate()
    assert.lengthOf(sent, 1)
  })

  test('the log channel writes a firing as an error line; resolved notices can be turned off', async ({
    assert,
  }) => {
    const lines: { level: string; alert: ConsoleAlert; message: string }[] = []
    const logger = Object.fromEntries(
      ['error', 'warn', 'info'].map((level) => [
        level,
        (merging: { alert: ConsoleAlert }, message: string) =>
          lines.push({ level, alert: merging.alert, message }),
      ])
    )
    let holding = true
    const rule = alertRules.custom({
      name: 'disk',
      check: () =>
        holding ? [{ subject: 'db-1', value: 0.97, threshold: 0.9, summary: 'db-1 disk 97%' }] : [],
    })
    const resolved = resolveConsoleConfig({
      alerts: { channels: [alertChannels.log()], rules: [rule], resolved: false },
    })
    if (!resolved.alerts) throw new Error('no alerts')
    const evaluator = new AlertEvaluator(
      resolved.alerts,
      new MemoryConsoleStore(),
      resolved.redact,
      logger as any
    )
    const now = Date.now()
    await evaluator.evaluate(now)
    holding = false
    await evaluator.evaluate(now + MINUTE)
    assert.deepEqual(
      lines.map(({ level, message }) => `${level} ${message}`),
      ['error console alert: db-1 disk 97%']
    )
    assert.equal(lines[0].alert.rule, 'disk')
  })
})
