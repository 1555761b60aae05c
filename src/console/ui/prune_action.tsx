import { useState } from 'react'
import { api } from './api.ts'

/** `{ request: 3, query: 0, rollups: 1 }` as "3 request, 1 rollups", or nothing deleted */
function deletedText(deleted: Record<string, number>) {
  const parts = Object.entries(deleted)
    .filter(([, count]) => count > 0)
    .map(([type, count]) => `${count} ${type}`)
  return parts.length
    ? `Pruned: deleted ${parts.join(', ')}.`
    : 'Pruned: nothing was old enough to delete.'
}

/**
 * "Prune now": `POST /prune`, which the server runs only when
 * `authorizeAction` allows `prune`; a refusal shows the API's message.
 */
export function PruneNow(props: { onPruned: () => void }) {
  const [busy, setBusy] = useState(false)
  const [result, setResult] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)

  async function prune() {
    setBusy(true)
    setResult(null)
    setError(null)
    try {
      const { data } = await api.prune()
      setResult(deletedText(data.deleted))
      props.onPruned()
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="prune-now">
      <button type="button" onClick={prune} disabled={busy}>
        {busy ? 'Pruning…' : 'Prune now'}
      </button>
      {result && <p role="status">{result}</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}
