import { api, type Entry } from './api.ts'
import { duration } from './format.ts'
import { href } from './router.ts'
import { useLoad } from './use_load.ts'
import { TraceLink } from './entry_detail.tsx'

interface Span {
  entry: Entry
  /** ms from the batch's first start */
  offset: number
  length: number
  duplicates: number
}

/**
 * Entries are stamped (to the millisecond) when they finish; one with a
 * duration started that long before. The batch's own entry (the request, the
 * job's execution, the task's run: its id is the batch's) encloses everything
 * its batch did, so it comes first and its start is the axis' zero, even when
 * the stamps' rounding puts a child a fraction of a millisecond earlier.
 */
function spans(entries: Entry[]) {
  const sqlCounts = new Map<string, number>()
  for (const entry of entries) {
    if (entry.type === 'query') {
      const sql = String(entry.content.sql ?? entry.summary)
      sqlCounts.set(sql, (sqlCounts.get(sql) ?? 0) + 1)
    }
  }
  const startOf = (entry: Entry) => entry.createdAt - (entry.durationMs ?? 0)
  const root =
    entries.find((entry) => entry.id === entry.batchId) ??
    entries.find((entry) => entry.type === 'request')
  const begin = root ? startOf(root) : Math.min(...entries.map(startOf))
  const end = Math.max(...entries.map((entry) => entry.createdAt))
  const total = Math.max(end - begin, 1)
  const list: Span[] = entries.map((entry) => ({
    entry,
    offset: Math.max(startOf(entry) - begin, 0),
    length: entry.durationMs ?? 0,
    duplicates:
      entry.type === 'query' ? (sqlCounts.get(String(entry.content.sql ?? entry.summary)) ?? 0) : 0,
  }))
  list.sort(
    (a, b) =>
      Number(b.entry === root) - Number(a.entry === root) ||
      a.offset - b.offset ||
      a.entry.id.localeCompare(b.entry.id)
  )
  return { list, total }
}

/** Everything one batch did, in order, each as a bar on its own entry's time axis */
export function BatchTimeline(props: { id: string }) {
  const result = useLoad(`batch:${props.id}`, () => api.batch(props.id))
  if (result.state === 'loading') return <p className="muted">Loading…</p>
  if (result.state === 'error')
    return (
      <p className="error" role="alert">
        {result.message}
      </p>
    )
  const { list, total } = spans(result.value.data.entries)
  const duplicated = list.filter((span) => span.duplicates > 1).length
  return (
    <article>
      <h2>Batch timeline</h2>
      <p className="meta">
        {list.length} entries over {duration(total)}
        <TraceLink trace={list.find((span) => span.entry.trace)?.entry.trace} />
        {duplicated > 0 && <span className="tag warn">{duplicated} duplicated queries</span>}
      </p>
      <table className="timeline">
        <thead>
          <tr>
            <th>Offset</th>
            <th>Type</th>
            <th>Entry</th>
            <th>Duration</th>
            <th className="bar-cell">Timeline</th>
          </tr>
        </thead>
        <tbody>
          {list.map((span) => (
            <tr key={span.entry.id} data-type={span.entry.type}>
              <td className="num">+{duration(span.offset)}</td>
              <td>
                <span className="type">{span.entry.type}</span>
              </td>
              <td className="summary">
                <a href={href(['entries', span.entry.id])}>{span.entry.summary}</a>
                {span.duplicates > 1 && (
                  <span className="tag warn">×{span.duplicates} duplicate</span>
                )}
              </td>
              <td className="num">{duration(span.entry.durationMs)}</td>
              <td className="bar-cell">
                <div className="track">
                  <div
                    className={`bar bar-${span.entry.type}`}
                    style={{
                      left: `${(span.offset / total) * 100}%`,
                      width: `max(2px, ${(span.length / total) * 100}%)`,
                    }}
                  />
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  )
}
