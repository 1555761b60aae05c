import type { AgentConfigInput } from '../../src/agent/main.ts'
import { agentApp, bodyOf, deltasOf } from './helpers.ts'

/** Each call holds this much; the fake bills exactly as much, so the limit admits limit / it calls */
export const RACE_RESERVE = 100
const RACE_USAGE = { prompt_tokens: 60, completion_tokens: 40, total_tokens: RACE_RESERVE }

/**
 * 50 turns of one actor sent at once against a budget of 10 calls, through
 * HTTP: what each turn ended with, what the quota says, what the model saw.
 */
export async function fiftyConcurrentTurns(limitTokens: number, quota: Partial<AgentConfigInput>) {
  const app = await agentApp({ config: { quotaReserveTokens: RACE_RESERVE, ...quota } })
  app.fake.reply(...Array.from({ length: 50 }, () => ({ text: ['ok'], usage: RACE_USAGE })))
  const outcomes = await Promise.all(
    Array.from({ length: 50 }, async (_, index) => {
      const { sse } = await app.chat({ message: `turn ${index}` })
      const frames = await sse.rest()
      const last = frames.at(-1)
      if (last?.event === 'error') return last.data.code as string
      return deltasOf(frames).join('') === 'ok' ? 'answered' : 'unexpected'
    })
  )
  const { usedTokens } = await bodyOf(await app.request('GET', '/quota/today'))
  return {
    app,
    answered: outcomes.filter((outcome) => outcome === 'answered').length,
    refused: outcomes.filter((outcome) => outcome === 'quota_exceeded').length,
    usedTokens: usedTokens as number,
    modelCalls: app.fake.requests.length,
    limitTokens,
  }
}
