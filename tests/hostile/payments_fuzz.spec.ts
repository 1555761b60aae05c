import { test } from '@japa/runner'
import { paymentsApp } from '../payments/helpers.ts'
import {
  GATEWAY_FIXTURES,
  fixtureProviders,
  gatewayApiStandIn,
} from '../../benchmarks/lib/gateway_fixtures.ts'
import { fuzzCase, prng, type FuzzGateway } from './payments_fuzz_cases.ts'

test.group('Payments fuzz', () => {
  test('1,000 seeded random, truncated, wrong-key and header-mangled deliveries over all eighteen gateways: none accepted, no 5xx, no ledger row', async ({
    assert,
    cleanup,
  }) => {
    // every gateway the benchmarks drive, configured as they are; the API
    // stand-in confirms no InfinitePay payment: no fuzzed delivery is a real one
    const api = await gatewayApiStandIn({ paid: false })
    cleanup(() => api.close())
    const app = await paymentsApp({ config: { providers: fixtureProviders(api.url) } })
    const GATEWAYS: FuzzGateway[] = GATEWAY_FIXTURES.map((fixture) => ({
      name: fixture.name,
      payload: fixture.payload,
      credentials: fixture.credentials(api.url),
      wrongCredentials: fixture.wrongCredentials(api.url),
    }))
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
