import { useCallback, useEffect, useState, type FormEvent } from 'react'
import { api, whenUnauthenticated, type AuthState } from './api.ts'
import { AuthScreen } from './auth_screen.tsx'
import { BatchTimeline } from './batch_timeline.tsx'
import { EntryDetail } from './entry_detail.tsx'
import { ExtensionsView } from './extensions_view.tsx'
import { HealthView } from './health_view.tsx'
import { ListView, SearchView } from './list_views.tsx'
import { QueueJobsView, QueuesView, SchedulesView } from './queues_view.tsx'
import { href, navigate, useRoute } from './router.ts'
import { LIST_SCREENS, screenOf } from './screens.ts'

type Boot = { state: 'loading' } | { state: 'error'; message: string } | AuthState

/**
 * Asks `/auth/me` first: signed in (or no session gate) shows the dashboard,
 * otherwise the auth screen for the configured modes. A 401 from any later
 * call asks again, which lands back on the auth screen.
 */
export function App() {
  const [boot, setBoot] = useState<Boot>({ state: 'loading' })
  const check = useCallback(() => {
    api.me().then(setBoot, (error: Error) => setBoot({ state: 'error', message: error.message }))
  }, [])
  useEffect(() => {
    whenUnauthenticated(check)
    check()
  }, [check])

  if ('state' in boot) {
    return boot.state === 'loading' ? (
      <p className="muted boot">Loading…</p>
    ) : (
      <p className="error boot" role="alert">
        {boot.message}
      </p>
    )
  }
  if ('modes' in boot) return <AuthScreen modes={boot.modes} onSignedIn={check} />
  const user = 'user' in boot ? boot.user : null
  async function signOut() {
    await api.logout().catch(() => {})
    check()
  }
  return <Dashboard userName={user ? (user.name ?? user.id) : null} onSignOut={signOut} />
}

function SearchBox() {
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const q = String(new FormData(event.currentTarget).get('q') ?? '').trim()
    navigate(href(['search'], { q }))
  }
  return (
    <form className="search" role="search" onSubmit={submit}>
      <input name="q" type="search" placeholder="Search entries" aria-label="Search entries" />
    </form>
  )
}

function Dashboard(props: { userName: string | null; onSignOut: () => void }) {
  const route = useRoute()
  const [first = 'requests', second, third] = route.segments
  const screen = screenOf(first)
  const current = (name: string) => (first === name ? 'page' : undefined)

  let view
  if (screen) view = <ListView key={screen.path} screen={screen} params={route.params} />
  else if (first === 'entries' && second) view = <EntryDetail key={second} id={second} />
  else if (first === 'batches' && second) view = <BatchTimeline key={second} id={second} />
  else if (first === 'search') view = <SearchView params={route.params} />
  else if (first === 'health') view = <HealthView params={route.params} />
  else if (first === 'extensions') {
    view = <ExtensionsView segments={route.segments} params={route.params} />
  } else if (first === 'queues' && second && third) {
    view = <QueueJobsView driver={second} queue={third} params={route.params} />
  } else if (first === 'queues') view = <QueuesView />
  else if (first === 'schedules') view = <SchedulesView />
  else view = <p className="error">No such screen.</p>

  return (
    <div className="layout">
      <header>
        <a className="brand" href={href(['requests'])}>
          Console
        </a>
        <SearchBox />
        {props.userName !== null && (
          <span className="user">
            {props.userName}{' '}
            <button type="button" className="signout" onClick={props.onSignOut}>
              Sign out
            </button>
          </span>
        )}
      </header>
      <nav>
        {LIST_SCREENS.map((item) => (
          <a key={item.path} href={href([item.path])} aria-current={current(item.path)}>
            {item.label}
          </a>
        ))}
        <a href={href(['health'])} aria-current={current('health')}>
          Health
        </a>
        <a href={href(['extensions'])} aria-current={current('extensions')}>
          Extensions
        </a>
        <a href={href(['queues'])} aria-current={current('queues')}>
          Queues
        </a>
        <a href={href(['schedules'])} aria-current={current('schedules')}>
          Schedules
        </a>
      </nav>
      <main>{view}</main>
    </div>
  )
}
