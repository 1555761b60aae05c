import { test } from '@japa/runner'
import { CREDENTIALS, paymentsApp } from '../payments/helpers.ts'
import { FIXTURES, WRONG_CREDENTIALS } from '../payments/fixtures.ts'
import { FIXTURES_A, WRONG_CREDENTIALS_A } from '../payments/fixtures_a.ts'
import { fuzzCase, prng, type FuzzGateway } from './payments_fuzz_cases.ts'

/** Well-formed credentials that are not the app's, for every gateway */
const WRONG: Record<string, Record<string, unknown>> = {
  ...WRONG_CREDENTIALS,
  ...WRONG_CREDENTIALS_A,
  woovi: { webhookSecret: 'not-the-woovi-secret' },
  efi: { webhookHmac: 'not-the-hmac' },
  infinitepay: {},
}

/** Every gateway the test app serves, as the fuzzer targets it */
const GATEWAYS: FuzzGateway[] = Object.keys(CREDENTIALS).map((name) => ({
  name,
  payload: { ...FIXTURES, ...FIXTURES_A }[name].payload,
  credentials: (CREDENTIALS as Record<string, any>)[name],
  wrongCredentials: WRONG[name] as any,
}))

test.group('Payments fuzz', () => {
  test('1,000 seeded random, truncated, wrong-key and header-mangled deliveries: none accepted, no 5xx, no ledger row', async ({
    assert,
  }) => {
    // InfinitePay's stand-in confirms nothing: no fuzzed delivery is a real payment
    const app = await paymentsApp({ infinitePayPaid: false })
    const random = prng(20_240_612)
    const cases = Array.from({ length: 1000 }, (_, index) =>
      fuzzCase(GATEWAYS[index % GATEWAYS.length], random)
    )
    const statuses = new Map<number, number>()
    let next = 0
    const worker = async () => {
      while (next < cases.length) {
        const job = cases[next++]
        const search = job.query ? `?${new URLSearchParams(job.query)}` : ''
        const response = await fetch(`${app.url}/payments/webhook/${job.provider}${search}`, {
          method: 'POST',
          headers: job.headers,
          body: job.body,
        })
        await response.arrayBuffer()
        const key = response.status
        statuses.set(key, (statuses.get(key) ?? 0) + 1)
        if (response.status < 400 || response.status >= 500) {
          assert.fail(`${job.provider} answered ${response.status} to a fuzzed delivery`)
        }
      }
    }
    await Promise.all(Array.from({ length: 4 }, worker))
    assert.deepEqual([...statuses.keys()], [400], JSON.stringify([...statuses]))
    assert.equal(statuses.get(400), 1000)
    assert.lengthOf(await app.rows('events'), 0)
    assert.lengthOf(await app.rows('payments'), 0)
    assert.lengthOf(await app.rows('refunds'), 0)
  }).timeout(120_000)
})
