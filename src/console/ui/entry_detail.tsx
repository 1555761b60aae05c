import type { ReactNode } from 'react'
import { api, type Entry, type EntryTrace } from './api.ts'
import { CpuProfileDetail } from './flame_graph.tsx'
import { dateTime, duration, json, statusClass } from './format.ts'
import { DiagnoseAction, ExplainAction, RequestActions } from './entry_actions.tsx'
import { href } from './router.ts'
import { useLoad } from './use_load.ts'

function Field(props: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </>
  )
}

function text(value: unknown) {
  if (value === null || value === undefined) return ''
  return typeof value === 'string' ? value : json(value)
}

function Block(props: { title: string; value: unknown }) {
  if (props.value === null || props.value === undefined || props.value === '') return null
  return (
    <section>
      <h3>{props.title}</h3>
      <pre>{text(props.value)}</pre>
    </section>
  )
}

function HeadersTable(props: { headers: unknown }) {
  if (!props.headers || typeof props.headers !== 'object') return null
  return (
    <section>
      <h3>Headers</h3>
      <table className="kv">
        <tbody>
          {Object.entries(props.headers as Record<string, unknown>).map(([name, value]) => (
            <tr key={name}>
              <th>{name}</th>
              <td>{text(value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}

/** A trace id, a link to the tracing backend when `traceLink` is set */
export function TraceLink(props: { trace?: EntryTrace }) {
  const { trace } = props
  if (!trace) return null
  const label = `trace ${trace.traceId}${trace.sampled === false ? ' (not sampled)' : ''}`
  return (
    <span className="trace" title={trace.spanId ? `parent span ${trace.spanId}` : undefined}>
      {' · '}
      {trace.url ? (
        <a href={trace.url} target="_blank" rel="noopener noreferrer">
          {label}
        </a>
      ) : (
        label
      )}
    </span>
  )
}

/** What each type's content shows first; everything else is in "Content" */
function TypeDetail(props: { entry: Entry }) {
  const { entry } = props
  const content = entry.content
  switch (entry.type) {
    case 'request':
      return (
        <>
          <dl className="fields">
            <Field label="Method">{text(content.method)}</Field>
            <Field label="URL">{text(content.path)}</Field>
            <Field label="Route">{text(content.route)}</Field>
            <Field label="Status">
              <span className={statusClass(entry.status)}>{text(content.status)}</span>
            </Field>
            <Field label="Duration">{duration(entry.durationMs)}</Field>
            <Field label="IP">{text(content.ip)}</Field>
            <Field label="User">{text(content.user)}</Field>
          </dl>
          <RequestActions id={entry.id} />
          <Block title="Query string" value={content.query} />
          <HeadersTable headers={content.headers} />
          <Block title="Body" value={content.body} />
        </>
      )
    case 'exception':
    case 'client_error':
      return (
        <>
          <dl className="fields">
            <Field label="Class">{text(content.class ?? content.name)}</Field>
            <Field label="Message">{text(content.message)}</Field>
            <Field label="Status">{text(content.status)}</Field>
          </dl>
          {entry.type === 'exception' && (
            <DiagnoseAction id={entry.id} stored={content.aiDiagnosis} />
          )}
          <Block title="Stack" value={content.stack} />
        </>
      )
    case 'query':
      return (
        <>
          <dl className="fields">
            <Field label="Time">{duration(entry.durationMs)}</Field>
            <Field label="Connection">{text(content.connection)}</Field>
            <Field label="Error">{text(content.error)}</Field>
          </dl>
          <Block title="SQL" value={content.sql} />
          <Block title="Bindings" value={content.bindings} />
          <ExplainAction id={entry.id} />
        </>
      )
    case 'log':
      return (
        <>
          <dl className="fields">
            <Field label="Level">{text(content.level)}</Field>
            <Field label="Message">{text(content.message)}</Field>
          </dl>
          <Block title="Context" value={content.context} />
        </>
      )
    case 'job':
      return (
        <>
          <dl className="fields">
            <Field label="Job">{text(content.name)}</Field>
            <Field label="Queue">{text(content.queue)}</Field>
            <Field label="Status">{text(content.status ?? content.kind)}</Field>
            <Field label="Attempt">{text(content.attempt)}</Field>
            <Field label="Duration">{duration(entry.durationMs)}</Field>
            <Field label="Error">{text(content.error)}</Field>
            <Field label="Next retry">{text(content.nextRetryAt)}</Field>
          </dl>
          <Block title="Stack" value={content.stack} />
        </>
      )
    case 'schedule':
      return (
        <>
          <dl className="fields">
            <Field label="Task">{text(content.name)}</Field>
            <Field label="Expression">{text(content.expression)}</Field>
            <Field label="Scheduler">{text(content.scheduler)}</Field>
            <Field label="Started">{text(content.startedAt)}</Field>
            <Field label="Status">{text(content.status)}</Field>
            <Field label="Duration">{duration(entry.durationMs)}</Field>
            <Field label="Error">{text(content.error)}</Field>
          </dl>
          <Block title="Stack" value={content.stack} />
        </>
      )
    case 'event':
      return (
        <>
          <dl className="fields">
            <Field label="Event">{text(content.name)}</Field>
            <Field label="Kind">{content.classBased ? 'class-based event' : 'named event'}</Field>
            <Field label="Payload size">
              {typeof content.payloadBytes === 'number' ? `${content.payloadBytes} bytes` : ''}
              {content.truncated ? ' (truncated: the first bytes are shown)' : ''}
            </Field>
          </dl>
          <Block title="Payload" value={content.payload} />
        </>
      )
    case 'cpu_profile':
      return <CpuProfileDetail entry={entry} />
    default:
      return null
  }
}

export function EntryDetail(props: { id: string }) {
  const result = useLoad(`entry:${props.id}`, () => api.entry(props.id))
  if (result.state === 'loading') return <p className="muted">Loading…</p>
  if (result.state === 'error')
    return (
      <p className="error" role="alert">
        {result.message}
      </p>
    )
  const entry = result.value.data
  return (
    <article className="entry">
      <h2>
        <span className="type">{entry.type}</span> {entry.summary}
      </h2>
      <p className="meta">
        {dateTime(entry.createdAt)} · <a href={href(['batches', entry.batchId])}>Batch timeline</a>
        <TraceLink trace={entry.trace} />
        {entry.tags.map((tag) => (
          <span key={tag} className="tag">
            {tag}
          </span>
        ))}
      </p>
      <TypeDetail entry={entry} />
      {/* a profile's content is its tree, drawn above */}
      {entry.type !== 'cpu_profile' && <Block title="Content" value={entry.content} />}
    </article>
  )
}
