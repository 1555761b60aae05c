import { test } from '@japa/runner'
import { CREDENTIALS, paymentsApp } from './helpers.ts'
import { FIXTURES } from './fixtures.ts'

/** Small deterministic PRNG so a failure replays with the same inputs */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const SIGNATURE_HEADERS = [
  'stripe-signature',
  'x-webhook-signature',
  'asaas-access-token',
  'x-openpix-signature',
  'x-authenticity-token',
  'x-fake-signature',
]

function junk(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 6 : 9))
  switch (pick) {
    case 0:
      return null
    case 1:
      return random() > 0.5
    case 2:
      return Math.floor(random() * 1e6) / (random() > 0.5 ? 100 : 1)
    case 3:
      return ''
    case 4:
      return String.fromCharCode(
        ...Array.from(
          { length: 1 + Math.floor(random() * 12) },
          () => 32 + Math.floor(random() * 0x2fff)
        )
      )
    case 5:
      return -1e21
    case 6:
      return Array.from({ length: Math.floor(random() * 3) }, () => junk(random, depth + 1))
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, (_, index) => [
          `k${index}${Math.floor(random() * 9)}`,
          junk(random, depth + 1),
        ])
      )
  }
}

/** A gateway-shaped payload whose required fields are replaced by junk */
function mangled(provider: string, random: () => number) {
  const payload = JSON.parse(JSON.stringify(FIXTURES[provider].payload('fz')))
  const visit = (value: any) => {
    if (!value || typeof value !== 'object') return
    for (const key of Object.keys(value)) {
      if (random() < 0.5) value[key] = junk(random)
      else visit(value[key])
    }
  }
  visit(payload)
  // Unsigned gateways must never see a complete, valid payload here
  if (provider === 'efi') payload.pix = [{ endToEndId: junk(random) || null, valor: 'x' }]
  if (provider === 'infinitepay') payload.transaction_nsu = null
  return payload
}

function body(provider: string, random: () => number): string | Buffer {
  const kind = Math.floor(random() * 4)
  if (kind === 0) {
    return Buffer.from(
      Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256))
    )
  }
  if (kind === 1) {
    return JSON.stringify(junk(random))
  }
  if (kind === 2) {
    return JSON.stringify(mangled(provider, random))
  }
  if (provider === 'efi' || provider === 'infinitepay') {
    // These sign nothing: a well-formed payload is a valid delivery by design
    return JSON.stringify(mangled(provider, random))
  }
  // A real payload with a forged or missing signature
  return JSON.stringify(FIXTURES[provider].payload(`f${Math.floor(random() * 1e9)}`))
}

function headers(random: () => number) {
  const result: Record<string, string> = {
    'content-type': [
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
    ][Math.floor(random() * 4)],
  }
  for (const name of SIGNATURE_HEADERS) {
    if (random() < 0.4) {
      result[name] = Array.from({ length: Math.floor(random() * 80) }, () =>
        String.fromCharCode(33 + Math.floor(random() * 90))
      ).join('')
    }
  }
  if (random() < 0.3)
    result['stripe-signature'] = `t=${Math.floor(random() * 2e9)},v1=${'ab'.repeat(32)}`
  return result
}

test.group('Payments fuzz', () => {
  test('random bodies and headers on every provider route always answer 400 and record nothing', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const random = prng(20_240_612)
    const providers = Object.keys(CREDENTIALS)
    const statuses = new Map<number, number>()
    const perProvider = 250
    const jobs = providers.flatMap((provider) =>
      Array.from({ length: perProvider }, () => ({
        provider,
        body: body(provider, random),
        headers: headers(random),
        q: random() < 0.2,
      }))
    )
    let next = 0
    const worker = async () => {
      while (next < jobs.length) {
        const job = jobs[next++]
        const query = job.q ? '?webhookSecret=abacate-url-secret' : ''
        const response = await fetch(`${app.url}/payments/webhook/${job.provider}${query}`, {
          method: 'POST',
          headers: job.headers,
          body: job.body,
        })
        await response.arrayBuffer()
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
      }
    }
    await Promise.all(Array.from({ length: 8 }, worker))
    assert.deepEqual([...statuses.keys()], [400], JSON.stringify([...statuses]))
    assert.equal(statuses.get(400), providers.length * perProvider)
    assert.lengthOf(await app.rows('events'), 0)
    assert.lengthOf(await app.rows('payments'), 0)
  }).timeout(120_000)
})
