import { useState, type FormEvent } from 'react'
import { useVersions } from 'adonis-atrium/collaboration/react'
import { useServerChanges } from './server_changes.ts'

const pad = (value: number) => String(value).padStart(2, '0')

/** `YYYY-MM-DD HH:MM:SS` in the browser's time zone */
function formatDate(value: string) {
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) return ''
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/** A document's named versions: save one, restore any (every open page sees the restore) */
export function Versions({ docName }: { docName: string }) {
  const { versions, error, refresh, create, restore } = useVersions({ docName })
  useServerChanges(docName, 'versions', refresh)
  const [label, setLabel] = useState('')

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    await create(label.trim() || undefined)
    setLabel('')
  }

  return (
    <section className="versions">
      <h3>Versions</h3>
      <form onSubmit={submit}>
        <input
          aria-label="Version label"
          value={label}
          placeholder="Version label"
          onChange={(event) => setLabel(event.target.value)}
        />{' '}
        <button>Save version</button>
      </form>
      {error ? <p className="error">{error.message}</p> : null}
      <ul>
        {versions.map((version) => (
          <li key={version.id}>
            #{version.seq} <span className="label">{version.label ?? ''}</span>{' '}
            <small className="muted">
              {formatDate(version.createdAt)} by {version.createdBy ?? '?'}
            </small>{' '}
            <button className="secondary" onClick={() => restore(version.id).catch(() => {})}>
              Restore
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}
