import { test } from '@japa/runner'
import { agent, quotas } from '../../src/agent/main.ts'
import type { QuotaHold, QuotaStore } from '../../src/agent/main.ts'
import { agentApp, bodyOf, deltasOf, runStatus } from './helpers.ts'
import { RACE_RESERVE, fiftyConcurrentTurns } from './quota_race.ts'
import { LucidQuotaStore } from '../../src/agent/quota/lucid.ts'
import { keepHold } from '../../src/agent/quota/holds.ts'
import AgentPrune from '../../commands/agent_prune.ts'
import {
  DEAD_INSTANCE_OUTCOME,
  deadInstanceScenario,
  handClock,
  renewedHoldScenario,
} from './quota_leases.ts'

/** The calendar day of `now` shifted by `hours` (a fixed-offset zone) */
function dayAtOffset(hours: number, now = Date.now()) {
  return new Date(now + hours * 3_600_000).toISOString().slice(0, 10)
}

/** A quota store in memory that records what the gateway asks of it */
class RecordingQuota implements QuotaStore {
  calls: string[] = []
  used_ = new Map<string, number>()
  constructor(private limit: number) {}
  async reserve(actorRef: string, day: string, tokens: number) {
    this.calls.push(`reserve ${actorRef} ${day} ${tokens}`)
    const used = this.used_.get(`${actorRef}:${day}`) ?? 0
    return used + tokens <= this.limit ? { actorRef, day, tokens } : null
  }
  async settle(hold: QuotaHold, usedTokens: number) {
    this.calls.push(`settle ${hold.day} ${usedTokens}`)
    const key = `${hold.actorRef}:${hold.day}`
    this.used_.set(key, (this.used_.get(key) ?? 0) + usedTokens)
  }
  async release(hold: QuotaHold) {
    this.calls.push(`release ${hold.day}`)
  }
  async used(actorRef: string, day: string) {
    return this.used_.get(`${actorRef}:${day}`) ?? 0
  }
}

/**
 * Moves the process clock forward (`new Date()` and `Date.now()`) until the
 * test ends: a run can be made to cross midnight without waiting for it.
 */
function movableClock(cleanup: (fn: () => void) => void) {
  const RealDate = Date
  let offsetMs = 0
  class MovedDate extends RealDate {
    constructor(...args: any[]) {
      if (args.length === 0) super(RealDate.now() + offsetMs)
      else super(...(args as [any]))
    }
    static now() {
      return RealDate.now() + offsetMs
    }
  }
  globalThis.Date = MovedDate as DateConstructor
  cleanup(() => {
    globalThis.Date = RealDate
  })
  return {
    advance(ms: number) {
      offsetMs += ms
    },
  }
}

test.group('Agent daily quota', () => {
  test('a turn the budget cannot hold ends with event error quota_exceeded before any model call', async ({
    assert,
  }) => {
    // Each call holds 50 tokens while it runs; the fake bills 15 per call
    const app = await agentApp({ config: { quotaLimitTokens: 60, quotaReserveTokens: 50 } })
    app.fake.reply({ text: ['first'] }, { text: ['never'] })
    const first = await app.chat({ message: 'one' })
    assert.deepEqual(deltasOf(await first.sse.rest()), ['first'])
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 15 })

    const second = await app.chat({ message: 'two' })
    const frames = await second.sse.rest()
    assert.deepEqual(frames.at(-1), {
      id: String(frames.length),
      event: 'error',
      data: { code: 'quota_exceeded', message: 'The daily token quota is used up' },
    })
    assert.deepEqual(deltasOf(frames), [])
    assert.equal(app.fake.requests.length, 1)
    const runId = second.response.headers.get('x-agent-run-id')!
    assert.equal(await runStatus(app.manager, runId), 'failed')
    const run = await app.manager.config.store.findRun(runId)
    assert.equal(run?.errorCode, 'quota_exceeded')
    // No assistant text on a failed run, only the user's message
    const messages = await app.manager.config.store.listMessages(run!.threadId)
    assert.deepEqual(
      messages.map((message) => message.role),
      ['user']
    )
  })

  test('concurrent reservations never hold more than the budget: one conditional update each', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { quotaLimitTokens: 100 } })
    const quota = app.manager.config.quota!.store
    const holds = await Promise.all(
      Array.from({ length: 6 }, () => quota.reserve('carol', '2026-01-01', 40))
    )
    const held = holds.filter((hold) => hold !== null)
    assert.lengthOf(held, 2)
    // Settling ends the hold and charges the real use; releasing charges nothing
    await quota.settle(held[0]!, 7)
    await quota.release(held[1]!)
    assert.equal(await quota.used('carol', '2026-01-01'), 7)
    assert.isNotNull(await quota.reserve('carol', '2026-01-01', 40))
    assert.isNotNull(await quota.reserve('carol', '2026-01-01', 40))
    assert.isNull(await quota.reserve('carol', '2026-01-01', 40))
    assert.equal(await quota.used('dave', '2026-01-01'), 0)
  })

  test('50 concurrent turns against a budget of 10 calls: 10 answer, 40 are refused, the limit holds', async ({
    assert,
  }) => {
    const limitTokens = 10 * RACE_RESERVE
    const race = await fiftyConcurrentTurns(limitTokens, { quotaLimitTokens: limitTokens })
    assert.equal(race.answered, 10)
    assert.equal(race.refused, 40)
    assert.equal(race.modelCalls, 10)
    assert.isAtMost(race.usedTokens, limitTokens + RACE_RESERVE)
    assert.equal(race.usedTokens, limitTokens)
    // Every hold was settled: nothing is left held, no hold row is left behind
    const [row] = await race.app.db.from('agent_quota')
    assert.equal(Number(row.reserved_tokens), 0)
    assert.lengthOf(await race.app.db.from('agent_quota_holds'), 0)
  })

  test('the quota day is the day of quotaTimeZone, for the charge and for GET /agent/quota/today', async ({
    assert,
  }) => {
    // A zone whose calendar day differs from UTC's right now: UTC-12 before 11:00 UTC, UTC+14 after
    const utcHour = new Date().getUTCHours()
    const [timeZone, offset] = utcHour < 11 ? ['Etc/GMT+12', -12] : ['Pacific/Kiritimati', 14]
    const app = await agentApp({
      config: { quotaLimitTokens: 1000, quotaReserveTokens: 50, quotaTimeZone: timeZone },
    })
    app.fake.reply({ text: ['hi'] })
    const expectedDay = dayAtOffset(offset)
    const { sse } = await app.chat({ message: 'one' })
    assert.deepEqual(deltasOf(await sse.rest()), ['hi'])

    assert.notEqual(expectedDay, new Date().toISOString().slice(0, 10))
    const rows = await app.db.from('agent_quota').where('actor_ref', 'alice')
    assert.deepEqual(
      rows.map((row) => [String(row.day).slice(0, 10), Number(row.used_tokens)]),
      [[expectedDay, 15]]
    )
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 15 })
  })

  test('quotas.lucid() keeps its own limit in agent_quota and wins over quotaLimitTokens', async ({
    assert,
  }) => {
    const app = await agentApp({
      config: {
        quota: quotas.lucid({ limitTokens: 20 }),
        quotaLimitTokens: 1_000_000,
        quotaReserveTokens: 10,
      },
    })
    app.fake.reply({ text: ['first'] }, { text: ['never'] })
    const first = await app.chat({ message: 'one' })
    assert.deepEqual(deltasOf(await first.sse.rest()), ['first'])
    // 15 used + 10 held would pass 20
    const second = await app.chat({ message: 'two' })
    const frames = await second.sse.rest()
    assert.equal(frames.at(-1)?.data.code, 'quota_exceeded')
    const rows = await app.db.from('agent_quota').where('actor_ref', 'alice')
    assert.deepEqual(
      rows.map((row) => [Number(row.used_tokens), Number(row.reserved_tokens)]),
      [[15, 0]]
    )
  })

  test('a run crossing midnight charges the day it started, for every call', async ({
    assert,
    cleanup,
  }) => {
    const clock = movableClock(cleanup)
    const quota = new RecordingQuota(1000)
    const app = await agentApp({
      config: {
        quota,
        quotaReserveTokens: 40,
        tools: [
          {
            spec: { name: 'wait', description: 'Waits a day', roles: ['ADMIN'], inputSchema: {} },
            // The tool runs between the two model calls of the turn: a day passes
            handler: () => {
              clock.advance(86_400_000)
              return { waited: true }
            },
          },
        ],
      },
    })
    app.fake.reply({ toolCalls: [{ id: 'call-1', name: 'wait', input: {} }] }, { text: ['done'] })
    const startDay = new Date().toISOString().slice(0, 10)
    const { sse } = await app.chat({ message: 'wait a day' })
    assert.deepEqual(deltasOf(await sse.rest()), ['done'])
    const nextDay = new Date().toISOString().slice(0, 10)
    assert.notEqual(nextDay, startDay)
    assert.deepEqual(quota.calls, [
      `reserve alice ${startDay} 40`,
      `settle ${startDay} 15`,
      `reserve alice ${startDay} 40`,
      `settle ${startDay} 15`,
    ])
    // Today is the next day now: nothing was charged to it
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 0 })
    assert.equal(await quota.used('alice', startDay), 30)
  })

  test('a custom quota store wins over quotaLimitTokens: every call of a run holds the same day, a refused provider call is released', async ({
    assert,
  }) => {
    const quota = new RecordingQuota(1000)
    const app = await agentApp({
      config: {
        quota,
        quotaLimitTokens: 1,
        quotaReserveTokens: 40,
        quotaTimeZone: 'America/Sao_Paulo',
        tools: [
          {
            spec: { name: 'ping', description: 'Ping', roles: ['ADMIN'], inputSchema: {} },
            handler: () => ({ pong: true }),
          },
        ],
      },
    })
    app.fake.reply(
      { toolCalls: [{ id: 'call-1', name: 'ping', input: {} }] },
      { text: ['done'] },
      { status: 400, errorMessage: 'bad request' }
    )
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(
      new Date()
    )
    const first = await app.chat({ message: 'ping please' })
    assert.deepEqual(deltasOf(await first.sse.rest()), ['done'])
    // quotaLimitTokens: 1 would have refused the first call: the store's own limit counts
    assert.deepEqual(quota.calls, [
      `reserve alice ${day} 40`,
      `settle ${day} 15`,
      `reserve alice ${day} 40`,
      `settle ${day} 15`,
    ])
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 30 })

    // The provider answers 400 before streaming anything: nothing was generated, nothing charged
    const second = await app.chat({ message: 'again' })
    const frames = await second.sse.rest()
    assert.equal(frames.at(-1)?.data.code, 'run_failed')
    assert.deepEqual(quota.calls.slice(4), [`reserve alice ${day} 40`, `release ${day}`])
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 30 })
  })

  test('with an output cap, a call holds its estimated input plus the cap, and the provider is told the cap', async ({
    assert,
  }) => {
    const quota = new RecordingQuota(100_000)
    const app = await agentApp({
      config: { quota, quotaReserveTokens: 40, maxOutputTokens: 300 },
    })
    app.fake.reply({ text: ['fine'] })
    const message = 'x'.repeat(4000)
    const turn = await app.chat({ message })
    assert.deepEqual(deltasOf(await turn.sse.rest()), ['fine'])
    const [reserve] = quota.calls
    const held = Number(reserve.split(' ').at(-1))
    // a thousand tokens of message at four characters a token (and a short system prompt), plus the cap
    assert.isAtLeast(held, 1000 + 300)
    assert.isBelow(held, 1000 + 300 + 200)
    assert.equal(app.fake.requests.at(-1)!.body.max_tokens, 300)

    // without a cap nothing bounds the answer: the configured reserve is held
    const uncapped = new RecordingQuota(100_000)
    const plain = await agentApp({ config: { quota: uncapped, quotaReserveTokens: 40 } })
    plain.fake.reply({ text: ['fine'] })
    const uncappedTurn = await plain.chat({ message })
    await uncappedTurn.sse.rest()
    assert.match(uncapped.calls[0], / 40$/)
    assert.isUndefined(plain.fake.requests.at(-1)!.body.max_tokens)
  })

  test("an agent's own output cap wins over the config's", async ({ assert }) => {
    @agent({ name: 'brief', description: 'Answers briefly', maxOutputTokens: 50 })
    class BriefAgent {}
    const quota = new RecordingQuota(100_000)
    const app = await agentApp({
      config: { quota, maxOutputTokens: 300, agents: [BriefAgent] },
    })
    app.fake.reply({ text: ['ok'] })
    const turn = await app.chat({ message: 'hi' })
    await turn.sse.rest()
    assert.equal(app.fake.requests.at(-1)!.body.max_tokens, 50)
    const held = Number(quota.calls[0].split(' ').at(-1))
    assert.isAtLeast(held, 51)
    assert.isBelow(held, 300)
  })

  test('the hold of an instance that died is given back once its lease ends, and its late settle moves nothing', async ({
    assert,
  }) => {
    const app = await agentApp()
    const open = (clock: { now: () => number }) =>
      new LucidQuotaStore(() => app.db.connection(), 100, clock)
    const outcome = await deadInstanceScenario(open)
    assert.containSubset(outcome, DEAD_INSTANCE_OUTCOME)
    assert.isNotNull(outcome.deadHold)
    assert.isNotNull(outcome.afterLease)
    assert.isNotNull(outcome.fullRoom)
    // The day's row holds only the live holds, and their rows are all that is left
    const [row] = await app.db.from('agent_quota').where('actor_ref', 'erin')
    assert.deepEqual([Number(row.used_tokens), Number(row.reserved_tokens)], [30, 70])
    const holds = await app.db.from('agent_quota_holds').where('actor_ref', 'erin')
    assert.deepEqual(
      holds.map((hold) => [hold.id, Number(hold.tokens)]),
      [[outcome.fullRoom!.id, 70]]
    )
  })

  test('holds past their lease of actor-days nobody reserves again are given back by the sweep, once', async ({
    assert,
  }) => {
    const app = await agentApp()
    const clock = handClock()
    const store = new LucidQuotaStore(() => app.db.connection(), 100, clock)
    const quiet = await store.reserve('gina', '2030-02-01', 40, 1000)
    const renewed = await store.reserve('hugo', '2030-02-02', 30, 1000)
    clock.advance(900)
    await store.renew(renewed!, 1000)
    clock.advance(100)
    const rowOf = async (actorRef: string) => {
      const [row] = await app.db.from('agent_quota').where('actor_ref', actorRef)
      return [Number(row.used_tokens), Number(row.reserved_tokens)]
    }

    assert.deepEqual(await store.giveBackExpiredHolds({ dryRun: true }), { holds: 1, tokens: 40 })
    assert.deepEqual(await rowOf('gina'), [0, 40])
    assert.deepEqual(await store.giveBackExpiredHolds(), { holds: 1, tokens: 40 })
    assert.deepEqual(await rowOf('gina'), [0, 0])
    assert.deepEqual(await rowOf('hugo'), [0, 30])
    const left = await app.db.from('agent_quota_holds').select('id')
    assert.deepEqual(
      left.map((hold) => hold.id),
      [renewed!.id]
    )
    // The dead instance settling late moves nothing, and a second sweep finds nothing
    await store.settle(quiet!, 40)
    assert.deepEqual(await rowOf('gina'), [0, 0])
    assert.deepEqual(await store.giveBackExpiredHolds(), { holds: 0, tokens: 0 })
  })

  test('agent:prune gives back expired quota holds of the configured store (--dry-run counts them)', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { quotaLimitTokens: 100 } })
    const quota = app.manager.config.quota!.store
    const hold = await quota.reserve('ivan', '2030-03-01', 25)
    // Its instance died long ago: the lease ended
    await app.db.from('agent_quota_holds').where('id', hold!.id!).update({ expires_at: 0 })
    const run = async (args: string[]) => {
      const ace = await app.app.container.make('ace')
      ace.ui.switchMode('raw')
      const command = await ace.create(AgentPrune, args)
      await command.exec()
      const logs = command.ui.logger.getLogs()
      return logs.map((log: { message: string }) => log.message).join('\n')
    }
    assert.include(
      await run(['--dry-run']),
      'Dry run: 1 quota holds past their lease (25 tokens) would be given back'
    )
    assert.lengthOf(await app.db.from('agent_quota_holds'), 1)
    assert.include(await run([]), 'Gave back 1 quota holds past their lease (25 tokens)')
    assert.lengthOf(await app.db.from('agent_quota_holds'), 0)
    const [row] = await app.db.from('agent_quota').where('actor_ref', 'ivan')
    assert.equal(Number(row.reserved_tokens), 0)
  })

  test("a reservation writes the day's row once, and again when the row was removed", async ({
    assert,
  }) => {
    const app = await agentApp()
    const store = new LucidQuotaStore(() => app.db.connection(), 100)
    const first = await store.reserve('gina', '2030-01-03', 40)
    const second = await store.reserve('gina', '2030-01-03', 40)
    assert.isNotNull(first)
    assert.isNotNull(second)
    assert.isNull(await store.reserve('gina', '2030-01-03', 21))
    // emptied by hand while the instance runs: the next reservation starts the day again
    await app.db.from('agent_quota_holds').delete()
    await app.db.from('agent_quota').delete()
    const afterReset = await store.reserve('gina', '2030-01-03', 100)
    assert.isNotNull(afterReset)
    const rows = await app.db.from('agent_quota').where('actor_ref', 'gina')
    assert.deepEqual(
      rows.map((row) => [Number(row.used_tokens), Number(row.reserved_tokens)]),
      [[0, 100]]
    )
  })

  test('the one-step reservation and the transaction path (preparedStatements: false) take and refuse the same', async ({
    assert,
  }) => {
    const app = await agentApp()
    const outcomeOf = async (actorRef: string, preparedStatements: boolean) => {
      const store = new LucidQuotaStore(() => app.db.connection(), 100, { preparedStatements })
      const taken = [
        await store.reserve(actorRef, '2030-01-04', 60),
        await store.reserve(actorRef, '2030-01-04', 41),
        await store.reserve(actorRef, '2030-01-04', 40),
        await store.reserve(actorRef, '2030-01-04', 1),
      ].map((hold) => hold?.tokens ?? null)
      const [row] = await app.db.from('agent_quota').where('actor_ref', actorRef)
      const holds = await app.db.from('agent_quota_holds').where('actor_ref', actorRef)
      return {
        taken,
        reserved: Number(row.reserved_tokens),
        holds: holds.map((hold) => Number(hold.tokens)).sort((a, b) => a - b),
      }
    }
    const expected = { taken: [60, null, 40, null], reserved: 100, holds: [40, 60] }
    assert.deepEqual(await outcomeOf('one-step', true), expected)
    assert.deepEqual(await outcomeOf('transaction', false), expected)
  })

  test('a hold renewed before its lease ended stays held; once renewals stop it is given back', async ({
    assert,
  }) => {
    const app = await agentApp()
    const outcome = await renewedHoldScenario(
      (clock) => new LucidQuotaStore(() => app.db.connection(), 100, clock)
    )
    assert.isNotNull(outcome.hold)
    assert.isNull(outcome.whileRenewed)
    assert.isNotNull(outcome.afterRenewedLease)
  })

  test('a model call renews its hold every third of quotaHoldLeaseMs until it ends', async ({
    assert,
  }) => {
    const renewed: number[] = []
    let renewedTwice!: () => void
    const twice = new Promise<void>((resolve) => (renewedTwice = resolve))
    const store = new RecordingQuota(100)
    Object.assign(store, {
      async renew(_hold: QuotaHold, leaseMs: number) {
        renewed.push(leaseMs)
        if (renewed.length === 2) renewedTwice()
      },
    })
    const hold = { actorRef: 'gina', day: '2026-01-01', tokens: 10, id: 'h1' }
    const stop = keepHold({ store, reserveTokens: 10, holdLeaseMs: 30 }, hold)
    await twice
    stop()
    assert.deepEqual(renewed.slice(0, 2), [30, 30])
    // A store without renew, or no hold: nothing to keep
    assert.isFunction(
      keepHold({ store: new RecordingQuota(1), reserveTokens: 1, holdLeaseMs: 3 }, hold)
    )
    assert.isFunction(keepHold(undefined, null))
  })
})
