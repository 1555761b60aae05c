import { test } from '@japa/runner'
import AgentPricing from '../../commands/agent_pricing.ts'
import { defineConfig, actors, stores } from '../../src/agent/main.ts'
import type { ModelPort, TokenUsage } from '../../src/agent/main.ts'
import { costOf, priceToMicros } from '../../src/agent/pricing/money.ts'
import { agentApp, errorOf } from './helpers.ts'
import { insightApp } from './insight_helpers.ts'

/** A model port that reports what the call cost, as some gateways do */
function reportingModel(usage: TokenUsage): ModelPort {
  return {
    label: 'gateway:reported-model',
    async *streamStep() {
      yield { type: 'text-delta', text: 'ok' }
      yield { type: 'finish', finishReason: 'stop', usage }
    },
  }
}

test.group('Agent pricing and cost', () => {
  test('every bucket is billed at its own price: Anthropic cache reads and writes, output', async ({
    assert,
  }) => {
    const app = await insightApp({ wire: 'anthropic' })
    const set = await app.post('/pricing', {
      modelId: 'claude-sonnet-4-5',
      inputPricePer1m: 3,
      outputPricePer1m: '15',
      cacheReadPricePer1m: '0.3',
      cacheWritePricePer1m: 3.75,
    })
    assert.equal(set.status, 201)
    app.fake.reply({
      text: ['fine'],
      usage: {
        input_tokens: 40,
        cache_creation_input_tokens: 500,
        cache_read_input_tokens: 1000,
        output_tokens: 1,
        outputTokens: 300,
      },
    })
    const { runId } = await app.turn('price me')
    const [row] = await app.usageOf(runId)
    // 40 x 3 + 1000 x 0.3 + 500 x 3.75 + 300 x 15, per million tokens, in micro-units
    assert.equal(row.cost, 120 + 300 + 1875 + 4500)
    assert.equal(row.costSource, 'estimated')
    assert.equal(row.priceId, set.body.id)
  })

  test('cache prices left out fall back to the input price; reasoning is billed as output', async ({
    assert,
  }) => {
    const app = await insightApp({ wire: 'openai' })
    // The usage rows carry the label "fake.chat:fake-model": the id after ":" is priced
    await app.post('/pricing', {
      modelId: 'fake-model',
      inputPricePer1m: '0.5',
      outputPricePer1m: 1.5,
    })
    app.fake.reply({
      text: ['fine'],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 300,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 1000 },
        completion_tokens_details: { reasoning_tokens: 120 },
      },
    })
    const { runId } = await app.turn('price me')
    const [row] = await app.usageOf(runId)
    // (200 uncached + 1000 cached) x 0.5 + (180 output + 120 reasoning) x 1.5
    assert.equal(row.cost, 600 + 450)
    assert.equal(row.costSource, 'estimated')
  })

  test('a model without a price is recorded unpriced with cost 0, and counted as such', async ({
    assert,
  }) => {
    const app = await insightApp()
    await app.post('/pricing', {
      modelId: 'another-model',
      inputPricePer1m: 1,
      outputPricePer1m: 1,
    })
    const { runId } = await app.turn('no price')
    const [row] = await app.usageOf(runId)
    assert.deepInclude(row, { cost: 0, costSource: 'unpriced', priceId: null })
    const spend = await app.json('/spend')
    assert.equal(spend.body.byModel[0].unpricedCalls, 1)
    assert.equal(spend.body.byModel[0].costMicros, 0)
  })

  test('a later price never reprices history: the earlier row keeps its cost', async ({
    assert,
  }) => {
    const app = await insightApp()
    const first = await app.post('/pricing', {
      modelId: 'fake-model',
      inputPricePer1m: 1000,
      outputPricePer1m: 2000,
    })
    const before = await app.turn('at the first price')
    const second = await app.post('/pricing', {
      modelId: 'fake-model',
      inputPricePer1m: 4000,
      outputPricePer1m: 8000,
    })
    const after = await app.turn('at the second price')
    const [old] = await app.usageOf(before.runId)
    const [recent] = await app.usageOf(after.runId)
    // The fake reports 10 input and 5 output tokens per call
    assert.deepInclude(old, { cost: 10 * 1000 + 5 * 2000, priceId: first.body.id })
    assert.deepInclude(recent, { cost: 10 * 4000 + 5 * 8000, priceId: second.body.id })

    // A usage row of yesterday is left as written when today's price changes
    await app.db
      .from('agent_usage')
      .where('run_id', before.runId)
      .update({ day: '2000-01-01', created_at: new Date('2000-01-01T12:00:00Z') })
    await app.post('/pricing', { modelId: 'fake-model', inputPricePer1m: 1, outputPricePer1m: 1 })
    const [unchanged] = await app.usageOf(before.runId)
    assert.equal(unchanged.cost, 20_000)

    const current = await app.json('/pricing')
    assert.deepEqual(
      current.body.map((price: any) => [price.modelId, price.inputPricePer1m]),
      [['fake-model', '1.000000']]
    )
  })

  test('an exact price for the full label wins over the bare model id', async ({ assert }) => {
    const app = await insightApp()
    await app.post('/pricing', {
      modelId: 'fake-model',
      inputPricePer1m: 1000,
      outputPricePer1m: 0,
    })
    const exact = await app.post('/pricing', {
      modelId: 'fake.chat:fake-model',
      inputPricePer1m: 2000,
      outputPricePer1m: 0,
    })
    const { runId } = await app.turn('which price')
    const [row] = await app.usageOf(runId)
    assert.deepInclude(row, { cost: 20_000, priceId: exact.body.id })
  })

  test('a cost the provider reports is kept as reported', async ({ assert }) => {
    const app = await insightApp({
      model: () =>
        reportingModel({
          known: true,
          uncachedInputTokens: 100,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 10,
          reasoningTokens: 0,
          reportedCost: 4321,
        }),
    })
    await app.post('/pricing', {
      modelId: 'reported-model',
      inputPricePer1m: 1000,
      outputPricePer1m: 1000,
    })
    const { runId } = await app.turn('reported')
    const [row] = await app.usageOf(runId)
    assert.deepInclude(row, { cost: 4321, costSource: 'reported', priceId: null })
  })

  test('GET /pricing lists the price in effect per model with decimal strings', async ({
    assert,
  }) => {
    const app = await insightApp()
    const none = await app.json('/pricing')
    assert.deepEqual(none.body, [])
    await app.post('/pricing', { modelId: 'b-model', inputPricePer1m: 1, outputPricePer1m: 2 })
    await app.post('/pricing', {
      modelId: 'a-model',
      inputPricePer1m: '0.000001',
      outputPricePer1m: '1000000',
      cacheReadPricePer1m: '0.1',
    })
    const latest = await app.post('/pricing', {
      modelId: 'b-model',
      inputPricePer1m: '2.5',
      outputPricePer1m: 10,
    })
    const { status, body } = await app.json('/pricing')
    assert.equal(status, 200)
    assert.lengthOf(body, 2)
    assert.deepInclude(body[0], {
      modelId: 'a-model',
      inputPricePer1m: '0.000001',
      outputPricePer1m: '1000000.000000',
      cacheReadPricePer1m: '0.100000',
      cacheWritePricePer1m: null,
    })
    assert.deepEqual(body[1], latest.body)
    assert.deepInclude(body[1], { modelId: 'b-model', inputPricePer1m: '2.500000' })
    assert.equal(new Date(body[1].effectiveFrom).toISOString(), body[1].effectiveFrom)
  })

  test('POST /pricing answers 400 naming the field of a malformed price', async ({ assert }) => {
    const app = await insightApp()
    const valid = { modelId: 'm', inputPricePer1m: 1, outputPricePer1m: 1 }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, inputPricePer1m: -1 }, 'inputPricePer1m'],
      [{ ...valid, inputPricePer1m: '1.0000001' }, 'inputPricePer1m'],
      [{ ...valid, outputPricePer1m: 'ten' }, 'outputPricePer1m'],
      [{ ...valid, outputPricePer1m: 1e-7 }, 'outputPricePer1m'],
      [{ ...valid, outputPricePer1m: 1_000_001 }, 'outputPricePer1m'],
      [{ ...valid, cacheReadPricePer1m: true }, 'cacheReadPricePer1m'],
      [{ modelId: 'm', inputPricePer1m: 1 }, 'outputPricePer1m'],
      [{ ...valid, modelId: '' }, 'modelId'],
      [{ ...valid, modelId: 42 }, 'modelId'],
    ]
    for (const [body, field] of cases) {
      const response = await app.api('/pricing', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      assert.equal(response.status, 400, JSON.stringify(body))
      const error = await errorOf(response)
      assert.equal(error.code, 'E_AGENT_INVALID_REQUEST')
      assert.equal(error.field, field, JSON.stringify(body))
    }
    const none = await app.json('/pricing')
    assert.deepEqual(none.body, [])
  })

  test('prices from config/agent.ts are seeded for models without a price, never over one', async ({
    assert,
  }) => {
    const app = await insightApp({
      config: {
        pricing: {
          'fake-model': { inputPricePer1m: 1000, outputPricePer1m: '2000' },
          'kept-model': { inputPricePer1m: 5, outputPricePer1m: 5 },
        },
      },
    })
    // A price set before the process first reads prices survives the seeding
    await app.db.table('agent_pricing').insert({
      model_id: 'kept-model',
      input_price_per_1m: 7_000_000,
      output_price_per_1m: 7_000_000,
      effective_from: new Date(Date.now() - 60_000),
      created_at: new Date(),
    })
    const { runId } = await app.turn('seeded')
    const [row] = await app.usageOf(runId)
    assert.deepInclude(row, { cost: 20_000, costSource: 'estimated' })
    const { body: prices } = await app.json('/pricing')
    assert.deepEqual(
      prices.map((price: any) => [price.modelId, price.inputPricePer1m]),
      [
        ['fake-model', '1000.000000'],
        ['kept-model', '7.000000'],
      ]
    )
    const seeded = await app.db.from('agent_pricing').where('model_id', 'fake-model')
    assert.lengthOf(seeded, 1)
  })

  test('an invalid config price stops defineConfig with the key and the rule', ({ assert }) => {
    assert.throws(
      () =>
        defineConfig({
          model: reportingModel({} as TokenUsage),
          actorResolver: actors.header(),
          pricing: { 'm-1': { inputPricePer1m: '1.2345678', outputPricePer1m: 1 } },
        }),
      'Invalid "pricing.m-1.inputPricePer1m" in config/agent.ts: it must be a number or decimal string from 0 to 1000000 with at most 6 decimals'
    )
  })

  test('costs are exact integers: no float drift, rounded half up once per call', ({ assert }) => {
    assert.equal(priceToMicros('0.1'), 100_000)
    assert.equal(priceToMicros(0.1 + 0.2), null)
    assert.equal(priceToMicros('1000000.000001'), null)
    const price = {
      inputPricePer1m: priceToMicros('0.000001')!,
      outputPricePer1m: priceToMicros('0.000001')!,
      cacheReadPricePer1m: null,
      cacheWritePricePer1m: null,
    }
    const tokens = {
      uncachedInputTokens: 250_000,
      cacheReadTokens: 250_000,
      cacheWriteTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
    }
    // 500 000 tokens at 1 micro-unit per million tokens is half a micro-unit: rounded up
    assert.equal(costOf(tokens, price), 1)
    assert.equal(costOf({ ...tokens, cacheReadTokens: 249_999 }, price), 0)
  })

  test('the pricing routes are behind the dashboard gate: 403 without authorize', async ({
    assert,
  }) => {
    const denied = await agentApp({ config: { dashboard: {} } })
    const read = await fetch(`${denied.url}/ai-gateway/api/pricing`)
    assert.equal(read.status, 403)
    const write = await fetch(`${denied.url}/ai-gateway/api/pricing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ modelId: 'm', inputPricePer1m: 1, outputPricePer1m: 1 }),
    })
    assert.equal(write.status, 403)
    assert.lengthOf(await denied.db.from('agent_pricing'), 0)
  })

  test('a store that keeps no prices and has no aggregates answers 501 on their routes', async ({
    assert,
  }) => {
    const app = await insightApp({
      config: {
        store: async (container) => {
          const store: any = await stores.lucid()(container)
          store.pricing = undefined
          store.insights = undefined
          return store
        },
      },
    })
    for (const path of ['/pricing', '/spend', '/top-threads', '/reliability', '/tools']) {
      const response = await app.api(path)
      assert.equal(response.status, 501, path)
      const error = await errorOf(response)
      assert.equal(error.code, 'E_AGENT_NOT_IMPLEMENTED', path)
    }
    const write = await app.post('/pricing', {
      modelId: 'm',
      inputPricePer1m: 1,
      outputPricePer1m: 1,
    })
    assert.equal(write.status, 501)
    const runs = await app.json('/runs')
    assert.equal(runs.status, 200)
  })

  test('node ace agent:pricing sets a price with flags and lists the prices in effect', async ({
    assert,
  }) => {
    const app = await insightApp()
    const ace = await app.app.container.make('ace')
    ace.ui.switchMode('raw')
    const set = await ace.create(AgentPricing, [
      '--set',
      'claude-sonnet-4-5',
      '--input',
      '3',
      '--output',
      '15',
      '--cache-read',
      '0.3',
    ])
    await set.exec()
    assert.equal(set.exitCode, 0)
    const logs = set.ui.logger.getLogs().map((log: { message: string }) => log.message)
    assert.match(logs.join('\n'), /Priced claude-sonnet-4-5: input 3\.000000, output 15\.000000/)

    const { body: prices } = await app.json('/pricing')
    assert.deepInclude(prices[0], {
      modelId: 'claude-sonnet-4-5',
      cacheReadPricePer1m: '0.300000',
      cacheWritePricePer1m: null,
    })

    const list = await ace.create(AgentPricing, [])
    await list.exec()
    assert.equal(list.exitCode, 0)
    const table = list.ui.logger.getLogs().map((log: { message: string }) => log.message)
    assert.include(table.join('\n'), 'claude-sonnet-4-5')
    assert.include(table.join('\n'), '15.000000')

    const refused = await ace.create(AgentPricing, ['--set', 'm', '--input', '-2', '--output', '1'])
    await refused.exec()
    assert.equal(refused.exitCode, 1)
    const error = refused.ui.logger.getLogs().map((log: { message: string }) => log.message)
    assert.match(error.join('\n'), /--input must be a number or decimal string/)
    assert.lengthOf(await app.db.from('agent_pricing'), 1)
  })
})
