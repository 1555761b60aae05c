import { useEffect, useState } from 'react'
import { Bars, RunColumns } from './bars.tsx'
import { GOVERNANCE, json, post } from './api.ts'

interface SpendRow {
  modelCalls: number
  uncachedInputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  outputTokens: number
  reasoningTokens: number
  costMicros: number
  cost: string
}

interface Governance {
  spend: {
    byModel: Array<SpendRow & { model: string }>
    byActor: Array<SpendRow & { actorRef: string }>
  }
  reliability: {
    metrics: {
      runs: number
      succeeded: number
      failed: number
      cancelled: number
      successRate: number | null
      p95DurationMs: number | null
    }
    trend: Array<{ day: string; succeeded: number; failed: number; cancelled: number }>
  }
  tools: Array<{
    toolName: string
    calls: number
    failed: number
    rejected: number
    denied: number
  }>
  approvals: Array<{ toolCallId: string; toolName: string; actorRef: string; input: unknown }>
}

const tokensOf = (row: SpendRow) =>
  row.uncachedInputTokens +
  row.cacheReadTokens +
  row.cacheWriteTokens +
  row.outputTokens +
  row.reasoningTokens

const count = (value: number, word: string) => `${value} ${word}${value === 1 ? '' : 's'}`

const spendText = (row: SpendRow) =>
  `$${row.cost} · ${count(row.modelCalls, 'call')} · ${tokensOf(row)} tokens`

const percent = (rate: number | null) => (rate === null ? '–' : `${Math.round(rate * 1000) / 10}%`)

async function load(): Promise<Governance> {
  const [spend, reliability, tools, approvals] = await Promise.all([
    json<Governance['spend']>(`${GOVERNANCE}/spend`),
    json<Governance['reliability']>(`${GOVERNANCE}/reliability`),
    json<Governance['tools']>(`${GOVERNANCE}/tools`),
    json<Governance['approvals']>(`${GOVERNANCE}/approvals`),
  ])
  return { spend, reliability, tools, approvals }
}

/**
 * The governance API drawn for a person: spend by model and by actor,
 * reliability of the last 30 days, tool statistics and the calls waiting
 * for approval (decided here as an admin would). Reloads when `version`
 * changes, that is after every frame that changes a figure.
 */
export function GovernanceView({ version }: { version: number }) {
  const [data, setData] = useState<Governance | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [own, setOwn] = useState(0)
  useEffect(() => {
    let current = true
    load()
      .then((next) => current && (setData(next), setError(null)))
      .catch((failure: Error) => current && setError(failure.message))
    return () => {
      current = false
    }
  }, [version, own])

  const decide = (toolCallId: string, approved: boolean) =>
    post(`${GOVERNANCE}/approvals/${encodeURIComponent(toolCallId)}`, { approved })
      .catch((failure: Error) => setError(failure.message))
      .finally(() => setOwn((value) => value + 1))

  if (!data) return <section id="governance">{error ?? 'Loading…'}</section>
  const { metrics } = data.reliability
  return (
    <section id="governance" aria-label="Governance">
      <h2>
        Governance <small className="muted">last 30 days, from {GOVERNANCE}</small>
      </h2>
      {error && <p className="error">{error}</p>}
      <h3>Spend by model</h3>
      <div id="spend-by-model">
        <Bars
          empty="No model call yet."
          bars={data.spend.byModel.map((row) => ({
            key: row.model,
            label: row.model,
            value: row.costMicros,
            text: spendText(row),
          }))}
        />
      </div>
      <h3>Spend by actor</h3>
      <div id="spend-by-actor">
        <Bars
          empty="No model call yet."
          bars={data.spend.byActor.map((row) => ({
            key: row.actorRef,
            label: row.actorRef,
            value: row.costMicros,
            text: spendText(row),
          }))}
        />
      </div>
      <h3>Reliability</h3>
      <p id="reliability">
        {count(metrics.runs, 'run')} · {metrics.succeeded} succeeded · {metrics.failed} failed ·{' '}
        {metrics.cancelled} cancelled · success {percent(metrics.successRate)} · p95{' '}
        {metrics.p95DurationMs === null ? '–' : `${metrics.p95DurationMs} ms`}
      </p>
      <RunColumns days={data.reliability.trend} />
      <h3>Tools</h3>
      <div id="tool-stats">
        <Bars
          empty="No tool call yet."
          bars={data.tools.map((row) => ({
            key: row.toolName,
            label: row.toolName,
            value: row.calls,
            text: `${count(row.calls, 'call')} · ${row.rejected} rejected · ${row.failed} failed · ${row.denied} denied`,
          }))}
        />
      </div>
      <h3>Pending approvals</h3>
      <ul id="pending-approvals">
        {data.approvals.length === 0 && <li className="muted">None waiting.</li>}
        {data.approvals.map((call) => (
          <li key={call.toolCallId}>
            <code>{call.toolName}</code> for {call.actorRef}:{' '}
            <code>{JSON.stringify(call.input)}</code>{' '}
            <button onClick={() => decide(call.toolCallId, true)}>Approve</button>{' '}
            <button onClick={() => decide(call.toolCallId, false)}>Reject</button>
          </li>
        ))}
      </ul>
    </section>
  )
}
