import { api, type ConsoleExtensionInfo } from './api.ts'
import { ListView } from './list_views.tsx'
import { href } from './router.ts'
import type { ListScreen } from './screens.ts'
import { useLoad } from './use_load.ts'

/** Rows a provider's array is shown with at most: the rest is counted, not rendered */
const MAX_ROWS = 500

function cell(value: unknown) {
  if (value === null || value === undefined) return ''
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/**
 * A data provider's JSON, shown without knowing its shape: an array of
 * objects as a table (one column per key), an object as key-value rows,
 * anything else as text.
 */
export function GenericData(props: { value: unknown }) {
  const { value } = props
  if (Array.isArray(value)) {
    if (value.length === 0) return <p className="empty">No rows.</p>
    const rows = value.slice(0, MAX_ROWS)
    const columns = [
      ...new Set(
        rows.flatMap((row) => (row && typeof row === 'object' ? Object.keys(row) : ['value']))
      ),
    ]
    return (
      <>
        <table className="entries">
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column}>{column}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={index}>
                {columns.map((column) => (
                  <td key={column}>
                    {cell(row && typeof row === 'object' ? (row as any)[column] : row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        {value.length > MAX_ROWS && <p className="muted">{value.length - MAX_ROWS} more rows.</p>}
      </>
    )
  }
  if (value && typeof value === 'object') {
    return (
      <table className="kv">
        <tbody>
          {Object.entries(value).map(([key, item]) => (
            <tr key={key}>
              <th>{key}</th>
              <td>{cell(item)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )
  }
  return <pre>{cell(value)}</pre>
}

function ExtensionPage(props: { name: string; provider: string; title: string }) {
  const { name, provider } = props
  const load = useLoad(`${name}/${provider}`, () => api.extensionData(name, provider))
  return (
    <>
      <h2>{props.title}</h2>
      {load.state === 'loading' && <p className="muted">Loading…</p>}
      {load.state === 'error' && (
        <p className="error" role="alert">
          {load.message}
        </p>
      )}
      {load.state === 'done' && <GenericData value={load.value.data} />}
    </>
  )
}

function ExtensionIndex(props: { extensions: ConsoleExtensionInfo[] }) {
  if (props.extensions.length === 0) {
    return <p className="empty">No extensions in config/console.ts.</p>
  }
  return (
    <>
      {props.extensions.map((extension) => (
        <section key={extension.name}>
          <h3>{extension.name}</h3>
          <ul>
            {extension.pages.map((page) => (
              <li key={page.provider}>
                <a href={href(['extensions', extension.name, page.provider])}>{page.title}</a>
              </li>
            ))}
            {extension.entryTypes.map(({ type }) => (
              <li key={type}>
                <a href={href(['extensions', extension.name, 'entries', type])}>{type} entries</a>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </>
  )
}

/**
 * The "Extensions" screen: `#/extensions` lists each extension's pages and
 * entry types, `#/extensions/<name>/<provider>` shows a page,
 * `#/extensions/<name>/entries/<type>` lists a custom type's entries.
 */
export function ExtensionsView(props: { segments: string[]; params: URLSearchParams }) {
  const [, name, second, type] = props.segments
  const load = useLoad('extensions', () => api.extensions())
  if (load.state === 'loading') return <p className="muted">Loading…</p>
  if (load.state === 'error') {
    return (
      <p className="error" role="alert">
        {load.message}
      </p>
    )
  }
  const extensions = load.value.data
  const extension = extensions.find((item) => item.name === name)
  if (!name) {
    return (
      <>
        <h2>Extensions</h2>
        <ExtensionIndex extensions={extensions} />
      </>
    )
  }
  if (extension && second === 'entries' && type) {
    const declared = extension.entryTypes.find((item) => item.type === type)
    if (declared) {
      const screen = {
        path: type,
        label: `${type} entries`,
        type,
        filters: ['tag'],
        segments: props.segments,
      }
      return <ListView key={type} screen={screen as ListScreen} params={props.params} />
    }
  }
  const page = extension?.pages.find((item) => item.provider === second)
  if (!extension || !page) return <p className="error">No such extension page.</p>
  return <ExtensionPage name={extension.name} provider={page.provider} title={page.title} />
}
