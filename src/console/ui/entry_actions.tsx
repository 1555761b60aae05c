import { useEffect, useState } from 'react'
import { dateTime, json } from './format.ts'
import { api, type Diagnosis } from './api.ts'
import { href } from './router.ts'

type Replay = { status: number; batchId: string | null; notes: string[] }

/**
 * A request entry's tools: its cURL command (shown, and copied when the
 * browser allows it) and a replay, which the server runs only when
 * `authorizeAction` allows "replay a request".
 */
export function RequestActions(props: { id: string }) {
  const [curl, setCurl] = useState<{ command: string; notes: string[] } | null>(null)
  const [replay, setReplay] = useState<Replay | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  async function copyCurl() {
    setError(null)
    try {
      const { data } = await api.curl(props.id)
      setCurl(data)
      // the clipboard needs a secure context; the command stays on screen either way
      await navigator.clipboard?.writeText(data.command).catch(() => {})
    } catch (failure) {
      setError((failure as Error).message)
    }
  }

  async function runReplay() {
    setError(null)
    setBusy(true)
    try {
      const { data } = await api.replay(props.id)
      setReplay(data)
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="request-actions">
      <button type="button" onClick={copyCurl}>
        Copy as cURL
      </button>{' '}
      <button type="button" onClick={runReplay} disabled={busy}>
        {busy ? 'Replaying…' : 'Replay'}
      </button>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {curl && (
        <>
          <pre className="curl">{curl.command}</pre>
          <Notes notes={curl.notes} />
        </>
      )}
      {replay && (
        <p role="status">
          Replayed: answered {replay.status}
          {replay.batchId && (
            <>
              {' '}
              — <a href={href(['batches', replay.batchId])}>its batch</a>
            </>
          )}
          <Notes notes={replay.notes} />
        </p>
      )}
    </section>
  )
}

function Notes(props: { notes: string[] }) {
  if (props.notes.length === 0) return null
  return (
    <ul className="muted">
      {props.notes.map((note) => (
        <li key={note}>{note}</li>
      ))}
    </ul>
  )
}

/** A query entry's plan, through the host's `explainQuery` (501 without one) */
export function ExplainAction(props: { id: string }) {
  const [plan, setPlan] = useState<unknown>(undefined)
  const [error, setError] = useState<string | null>(null)
  async function explain() {
    setError(null)
    try {
      const { data } = await api.explain(props.id)
      setPlan(data.plan)
    } catch (failure) {
      setError((failure as Error).message)
    }
  }
  return (
    <section className="request-actions">
      <button type="button" onClick={explain}>
        Explain
      </button>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {plan !== undefined && (
        <pre className="plan">{typeof plan === 'string' ? plan : json(plan)}</pre>
      )}
    </section>
  )
}

let aiStatus: Promise<boolean> | undefined

/** Asked once per page load: the config does not change under a running page */
function diagnosisAvailable() {
  aiStatus ??= api
    .aiStatus()
    .then(({ data }) => data.diagnosis)
    .catch(() => false)
  return aiStatus
}

/**
 * An exception's AI diagnosis: the stored answer when there is one, else a
 * "Diagnose" button, shown only when the API says `ai` is configured. The
 * server runs it only when `authorizeAction` allows "diagnose an exception".
 */
export function DiagnoseAction(props: { id: string; stored?: unknown }) {
  const stored = isDiagnosis(props.stored) ? props.stored : null
  const [available, setAvailable] = useState(false)
  const [diagnosis, setDiagnosis] = useState<Diagnosis | null>(stored)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    let live = true
    diagnosisAvailable().then((yes) => live && setAvailable(yes))
    return () => {
      live = false
    }
  }, [])

  async function diagnose() {
    setError(null)
    setBusy(true)
    try {
      const { data } = await api.diagnose(props.id)
      setDiagnosis(data)
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setBusy(false)
    }
  }

  if (!diagnosis && !available) return null
  return (
    <section className="diagnosis">
      <h3>AI diagnosis</h3>
      {!diagnosis && (
        <button type="button" onClick={diagnose} disabled={busy}>
          {busy ? 'Diagnosing…' : 'Diagnose'}
        </button>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {diagnosis && (
        <>
          <pre className="diagnosis-text">{diagnosis.text}</pre>
          <p className="muted">
            {diagnosis.model} · {dateTime(diagnosis.createdAt)}
          </p>
        </>
      )}
    </section>
  )
}

function isDiagnosis(value: unknown): value is Diagnosis {
  return typeof value === 'object' && value !== null && typeof (value as any).text === 'string'
}
