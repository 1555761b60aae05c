import { useState } from 'react'
import { api, type EntrySummary } from './api.ts'
import { EntryTable, FilterBar, listParams, useEntryPages } from './entry_list.tsx'
import { ExceptionFamilies } from './health_view.tsx'
import { useLiveTail, type LiveState } from './live_tail.ts'
import type { ListScreen } from './screens.ts'
import { useLoad } from './use_load.ts'

/** One type's entries, newest first, with its filters */
export function ListView(props: { screen: ListScreen; params: URLSearchParams }) {
  const { screen, params } = props
  const query = listParams(params, ['q', ...screen.filters])
  const pages = useEntryPages(`${screen.path}?${params.toString()}`, (before) =>
    api.list(screen.path, { ...query, before })
  )
  // the tail pushes every new entry of the type: offered on the unfiltered list only
  const unfiltered = params.toString() === ''
  const liveAvailable = useLoad('live', () => api.liveTail())
  const [following, setFollowing] = useState(false)
  const live = useLiveTail(following && unfiltered ? screen.type : null)
  const rows = live.rows.length ? mergeNewest(live.rows, pages.rows) : pages.rows
  return (
    <>
      <h2>{screen.label}</h2>
      {screen.type === 'exception' && <GroupedExceptions />}
      {screen.type === 'query' && <SlowQueryHint />}
      <FilterBar
        segments={screen.segments ?? [screen.path]}
        filters={screen.filters}
        params={params}
      />
      {unfiltered && liveAvailable.state === 'done' && liveAvailable.value && (
        <LiveToggle
          following={following}
          state={live.state}
          skipped={live.skipped}
          onToggle={() => setFollowing(!following)}
        />
      )}
      <EntryTable {...pages} rows={rows} onMore={pages.loadMore} />
    </>
  )
}

/** Pushed rows above the loaded pages, each entry once */
function mergeNewest(pushed: EntrySummary[], loaded: EntrySummary[]) {
  const seen = new Set(pushed.map((row) => row.id))
  return [...pushed, ...loaded.filter((row) => !seen.has(row.id))]
}

const LIVE_LABELS: Record<LiveState, string> = {
  off: '',
  connecting: 'Connecting…',
  live: 'Live: new entries appear at the top',
  failed: 'Live tail unavailable',
}

function LiveToggle(props: {
  following: boolean
  state: LiveState
  skipped: number
  onToggle: () => void
}) {
  return (
    <p className="live">
      <button type="button" aria-pressed={props.following} onClick={props.onToggle}>
        {props.following ? 'Stop live tail' : 'Live tail'}
      </button>{' '}
      <span className="muted" role="status">
        {LIVE_LABELS[props.state]}
        {props.skipped > 0 && ` (${props.skipped} left out in bursts)`}
      </span>
    </p>
  )
}

/** Exceptions grouped by family (class and normalised message), from the health pulse */
function GroupedExceptions() {
  const health = useLoad('exceptions', () => api.health(60))
  if (health.state === 'loading') return <p className="muted">Loading families…</p>
  if (health.state === 'error')
    return (
      <p className="error" role="alert">
        {health.message}
      </p>
    )
  return (
    <section>
      <h3>Families, last hour</h3>
      <ExceptionFamilies families={health.value.data.exceptions.families} />
    </section>
  )
}

function SlowQueryHint() {
  return (
    <p className="muted">
      “Slow only” lists queries past the watcher's <code>slowMs</code>; a request's batch timeline
      marks the queries it ran more than once.
    </p>
  )
}

/** Every type at once, by words of the summary */
export function SearchView(props: { params: URLSearchParams }) {
  const { params } = props
  const q = params.get('q') ?? ''
  const query = listParams(params, ['q', 'type'])
  const pages = useEntryPages(`search?${params.toString()}`, (before) =>
    q ? api.search({ ...query, before }) : Promise.resolve({ data: [], nextCursor: null })
  )
  return (
    <>
      <h2>Search</h2>
      <FilterBar segments={['search']} filters={['type']} params={params} />
      {q ? (
        <EntryTable {...pages} showType onMore={pages.loadMore} />
      ) : (
        <p className="muted">Type words of an entry's summary: a path, a log message, SQL…</p>
      )}
    </>
  )
}
