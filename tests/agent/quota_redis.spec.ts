import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import { defineConfig as redisConfig } from '@adonisjs/redis'
import { quotas } from '../../src/agent/main.ts'
import { quotaKeyExpiry } from '../../src/agent/quota/redis.ts'
import { SERVICES, createRedis } from '../helpers.ts'
import { agentApp, bodyOf, deltasOf } from './helpers.ts'
import { RACE_RESERVE, fiftyConcurrentTurns } from './quota_race.ts'
import { RedisQuotaStore } from '../../src/agent/quota/redis.ts'
import { DEAD_INSTANCE_OUTCOME, deadInstanceScenario, renewedHoldScenario } from './quota_leases.ts'

const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`

/** A key prefix of this test alone, its keys deleted when it ends */
function isolatedRedis() {
  const prefix = `atrium:agent:test:${randomUUID()}:`
  return { prefix, redis: createRedis(prefix) }
}

test.group('Agent daily quota in Redis', () => {
  test('50 concurrent turns against a budget of 10 calls: 10 answer, 40 are refused, the limit holds', async ({
    assert,
  }) => {
    const { prefix, redis } = isolatedRedis()
    const limitTokens = 10 * RACE_RESERVE
    const race = await fiftyConcurrentTurns(limitTokens, {
      quota: quotas.redis({ url: REDIS_URL, prefix, limitTokens }),
    })
    assert.equal(race.answered, 10)
    assert.equal(race.refused, 40)
    assert.equal(race.modelCalls, 10)
    assert.isAtMost(race.usedTokens, limitTokens + RACE_RESERVE)
    assert.equal(race.usedTokens, limitTokens)
    // Nothing in the database: the budget lives in Redis only, and nothing is left held
    assert.lengthOf(await race.app.db.from('agent_quota'), 0)
    const [key] = await redis.keys(`${prefix}quota:*`)
    assert.match(key, /quota:\d{4}-\d{2}-\d{2}:alice$/)
    // Every hold was settled: no hold field is left
    assert.deepEqual(await redis.hgetall(key), { used: '1000', reserved: '0' })
  })

  test('holds, settles and releases through an @adonisjs/redis connection; keys expire after their day', async ({
    assert,
  }) => {
    const { prefix, redis } = isolatedRedis()
    const app = await agentApp({
      providers: [() => import('@adonisjs/redis/redis_provider')],
      appConfig: {
        redis: redisConfig({
          connection: 'main',
          connections: { main: { host: SERVICES.redis.host, port: SERVICES.redis.port } },
        }),
      },
      config: {
        quota: quotas.redis({ connection: 'main', prefix, limitTokens: 100 }),
        quotaReserveTokens: 40,
      },
    })
    const quota = app.manager.config.quota!.store
    // Today: a key whose expiry has passed would be gone at once
    const day = new Date().toISOString().slice(0, 10)
    const holds = await Promise.all(
      Array.from({ length: 6 }, () => quota.reserve('carol', day, 40))
    )
    const held = holds.filter((hold) => hold !== null)
    assert.lengthOf(held, 2)
    await quota.settle(held[0]!, 7)
    await quota.release(held[1]!)
    assert.equal(await quota.used('carol', day), 7)
    assert.deepEqual(await redis.hgetall(`${prefix}quota:${day}:carol`), {
      used: '7',
      reserved: '0',
    })
    // Two days after the day ended in the latest zone (UTC+14)
    assert.equal(await redis.expiretime(`${prefix}quota:${day}:carol`), quotaKeyExpiry(day))
    assert.equal(quotaKeyExpiry('2026-01-01'), Date.UTC(2026, 0, 4, 14) / 1000)

    // A turn through HTTP is charged what the fake billed
    app.fake.reply({ text: ['hi'] })
    const { sse } = await app.chat({ message: 'one' })
    assert.deepEqual(deltasOf(await sse.rest()), ['hi'])
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 15 })
  })

  test('the hold of an instance that died is given back once its lease ends, and its late settle moves nothing', async ({
    assert,
  }) => {
    const { prefix, redis } = isolatedRedis()
    const open = (clock: { now: () => number }) =>
      new RedisQuotaStore(redis, { prefix, limitTokens: 100, ...clock }, false)
    const outcome = await deadInstanceScenario(open)
    assert.containSubset(outcome, DEAD_INSTANCE_OUTCOME)
    assert.isNotNull(outcome.deadHold)
    assert.isNotNull(outcome.afterLease)
    assert.isNotNull(outcome.fullRoom)
    // Only the live hold is left in the day's hash
    const fields = await redis.hgetall(`${prefix}quota:2030-01-01:erin`)
    assert.deepEqual(Object.keys(fields).sort(), [
      `hold:${outcome.fullRoom!.id}`,
      'reserved',
      'used',
    ])
    assert.deepEqual([fields.used, fields.reserved], ['30', '70'])
    assert.match(fields[`hold:${outcome.fullRoom!.id}`], /^70:\d+$/)
  })

  test('a hold renewed before its lease ended stays held; once renewals stop it is given back', async ({
    assert,
  }) => {
    const { prefix, redis } = isolatedRedis()
    const outcome = await renewedHoldScenario(
      (clock) => new RedisQuotaStore(redis, { prefix, limitTokens: 100, ...clock }, false)
    )
    assert.isNotNull(outcome.hold)
    assert.isNull(outcome.whileRenewed)
    assert.isNotNull(outcome.afterRenewedLease)
  })
})
