import { useEffect, useState, type FormEvent } from 'react'
import { api, type EntryPage, type EntrySummary } from './api.ts'
import { duration, statusClass, time } from './format.ts'
import { href, navigate } from './router.ts'
import { LIST_SCREENS, type Filter } from './screens.ts'
import { useLoad } from './use_load.ts'

const PAGE_SIZE = '50'

/**
 * A keyset-paged list: the first page, then "Load more" with the cursor the
 * last page returned. Nothing is ever counted, so it stays fast however many
 * entries the store holds.
 */
export function useEntryPages(key: string, fetchPage: (before?: string) => Promise<EntryPage>) {
  const [rows, setRows] = useState<EntrySummary[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    let current = true
    setRows([])
    setCursor(null)
    setError(null)
    setLoading(true)
    fetchPage().then(
      (page) => {
        if (!current) return
        setRows(page.data)
        setCursor(page.nextCursor)
        setLoading(false)
      },
      (failure: Error) => {
        if (!current) return
        setError(failure.message)
        setLoading(false)
      }
    )
    return () => {
      current = false
    }
    // `key` names everything `fetchPage` reads
  }, [key])

  async function loadMore() {
    if (!cursor) return
    setLoading(true)
    try {
      const page = await fetchPage(cursor)
      setRows((previous) => [...previous, ...page.data])
      setCursor(page.nextCursor)
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setLoading(false)
    }
  }

  return { rows, cursor, loading, error, loadMore }
}

export function EntryTable(props: {
  rows: EntrySummary[]
  showType?: boolean
  cursor: string | null
  loading: boolean
  error: string | null
  onMore: () => void
}) {
  return (
    <section>
      {props.error && (
        <p className="error" role="alert">
          {props.error}
        </p>
      )}
      <table className="entries">
        <thead>
          <tr>
            <th>When</th>
            {props.showType && <th>Type</th>}
            <th>Summary</th>
            <th>Status</th>
            <th>Duration</th>
            <th>Tags</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.id} className={row.slow ? 'slow' : undefined}>
              <td className="nowrap">{time(row.createdAt)}</td>
              {props.showType && <td>{row.type}</td>}
              <td className="summary">
                <a href={href(['entries', row.id])}>{row.summary}</a>
              </td>
              <td className={statusClass(row.status)}>{row.status ?? ''}</td>
              <td className="num">{duration(row.durationMs)}</td>
              <td>
                {row.tags.map((tag) => (
                  <span key={tag} className="tag">
                    {tag}
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!props.loading && props.rows.length === 0 && !props.error && (
        <p className="empty">Nothing recorded yet.</p>
      )}
      {props.loading && <p className="muted">Loading…</p>}
      {props.cursor && !props.loading && (
        <button type="button" className="more" onClick={props.onMore}>
          Load more
        </button>
      )}
    </section>
  )
}

/** The filter bar: its values live in the hash, so a filtered list is a link */
export function FilterBar(props: {
  segments: string[]
  filters: Filter[]
  params: URLSearchParams
}) {
  const value = (name: string) => props.params.get(name) ?? ''
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const next: Record<string, string | undefined> = {}
    for (const [key, entry] of form.entries()) next[key] = String(entry).trim() || undefined
    navigate(href(props.segments, next))
  }
  return (
    <form className="filters" onSubmit={submit} key={props.params.toString()}>
      <input name="q" type="search" placeholder="Search words" defaultValue={value('q')} />
      {props.filters.includes('type') && <TypeSelect value={value('type')} />}
      {props.filters.includes('status') && (
        <input
          name="status"
          placeholder="Status (404, 5xx)"
          defaultValue={value('status')}
          size={14}
        />
      )}
      {props.filters.includes('method') && (
        <select name="method" defaultValue={value('method')}>
          <option value="">Any method</option>
          {['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'].map((method) => (
            <option key={method}>{method}</option>
          ))}
        </select>
      )}
      {props.filters.includes('tag') && (
        <input name="tag" placeholder="Tag" defaultValue={value('tag')} size={10} />
      )}
      {props.filters.includes('slow') && (
        <label className="check">
          <input
            name="slow"
            type="checkbox"
            value="true"
            defaultChecked={value('slow') === 'true'}
          />
          Slow only
        </label>
      )}
      <button type="submit">Apply</button>
    </form>
  )
}

/** Every built-in type, then the extensions' entry types once `GET /extensions` answered */
function TypeSelect(props: { value: string }) {
  const extensions = useLoad('extensions', () => api.extensions())
  const custom =
    extensions.state === 'done'
      ? extensions.value.data.flatMap((extension) =>
          extension.entryTypes.map(({ type }) => ({ type, extension: extension.name }))
        )
      : []
  return (
    // mounted again with the extensions' options, so a custom type in the hash is selected
    <select name="type" defaultValue={props.value} aria-label="Type" key={extensions.state}>
      <option value="">Every type</option>
      {LIST_SCREENS.map((screen) => (
        <option key={screen.type} value={screen.type}>
          {screen.label}
        </option>
      ))}
      {custom.map(({ type, extension }) => (
        <option key={type} value={type}>
          {`${type} (${extension})`}
        </option>
      ))}
    </select>
  )
}

/** The list parameters the hash carries, as the API reads them */
export function listParams(params: URLSearchParams, keys: string[]) {
  const picked: Record<string, string | undefined> = { limit: PAGE_SIZE }
  for (const key of keys) picked[key] = params.get(key) ?? undefined
  return picked
}
