import { useState, type ReactNode } from 'react'
import { api, type QueueJob } from './api.ts'
import { dateTime, json } from './format.ts'
import { href } from './router.ts'
import { useLoad, type Load } from './use_load.ts'

function Failure(props: { message: string }) {
  return (
    <p className="error" role="alert">
      {props.message}
    </p>
  )
}

function loaded<T>(load: Load<T>, render: (value: T) => ReactNode) {
  if (load.state === 'loading') return <p className="muted">Loading…</p>
  if (load.state === 'error') return <Failure message={load.message} />
  return render(load.value)
}

/**
 * A screen listing each manager's own table, or a hint naming the option to
 * set when there is none; a manager that failed shows its error above it.
 */
function ManagerSections<Manager extends { driver: string; error: string | null }>(props: {
  title: string
  load: Load<{ data: Manager[] }>
  none: ReactNode
  columns: string[]
  rows: (manager: Manager) => ReactNode
}) {
  return (
    <>
      <h2>{props.title}</h2>
      {loaded(props.load, ({ data }) =>
        data.length === 0 ? (
          <p className="empty">{props.none}</p>
        ) : (
          data.map((manager) => (
            <section key={manager.driver}>
              <h3>{manager.driver}</h3>
              {manager.error && <Failure message={manager.error} />}
              <table className="entries">
                <thead>
                  <tr>
                    {props.columns.map((column) => (
                      <th key={column}>{column}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>{props.rows(manager)}</tbody>
              </table>
            </section>
          ))
        )
      )}
    </>
  )
}

/** Every queue manager's queues with their counts per state, each state a link to its jobs */
export function QueuesView() {
  const queues = useLoad('queues', () => api.queues())
  return (
    <ManagerSections
      title="Queues"
      load={queues}
      none={
        <>
          No queue manager: list one in <code>queueManagers</code> of config/console.ts.
        </>
      }
      columns={['Queue', 'Jobs per state']}
      rows={(manager) =>
        manager.queues.map((queue) => (
          <tr key={queue.name}>
            <td>
              <a href={href(['queues', manager.driver, queue.name])}>{queue.name}</a>
            </td>
            <td>
              {Object.entries(queue.counts).map(([state, count]) => (
                <a
                  key={state}
                  className="tag"
                  href={href(['queues', manager.driver, queue.name], { state })}
                >
                  {state} {count}
                </a>
              ))}
            </td>
          </tr>
        ))
      }
    />
  )
}

/**
 * One queue's jobs in one state (or all), a page at a time, with retry and
 * remove buttons: the server runs them only when `authorizeAction` allows.
 */
export function QueueJobsView(props: { driver: string; queue: string; params: URLSearchParams }) {
  const { driver, queue, params } = props
  const state = params.get('state') ?? undefined
  const cursor = params.get('cursor') ?? undefined
  const [version, setVersion] = useState(0)
  const [notice, setNotice] = useState<string | null>(null)
  const jobs = useLoad(`${driver}/${queue}?${params.toString()}#${version}`, () =>
    api.jobs(driver, queue, { state, cursor })
  )

  async function act(job: QueueJob, action: 'retry' | 'remove') {
    setNotice(null)
    try {
      if (action === 'retry') await api.retryJob(driver, queue, job.id)
      else await api.removeJob(driver, queue, job.id)
      setNotice(`${action === 'retry' ? 'Retried' : 'Removed'} job ${job.id}`)
      setVersion(version + 1)
    } catch (failure) {
      setNotice((failure as Error).message)
    }
  }

  return (
    <>
      <h2>
        <a href={href(['queues'])}>Queues</a> / {driver} / {queue}
        {state ? ` (${state})` : ''}
      </h2>
      {notice && <p role="status">{notice}</p>}
      {loaded(jobs, ({ data, nextCursor }) => (
        <>
          {data.length === 0 ? (
            <p className="empty">No jobs.</p>
          ) : (
            <table className="entries">
              <thead>
                <tr>
                  <th>Job</th>
                  <th>State</th>
                  <th>Attempts</th>
                  <th>Created</th>
                  <th>Payload and error</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {data.map((job) => (
                  <tr key={job.id}>
                    <td>
                      {job.name} <span className="muted">{job.id}</span>
                    </td>
                    <td>{job.state}</td>
                    <td className="num">{job.attempts ?? ''}</td>
                    <td className="nowrap">{job.createdAt ? dateTime(job.createdAt) : ''}</td>
                    <td>
                      {job.error && <p className="error">{job.error}</p>}
                      <details>
                        <summary>Payload</summary>
                        <pre>{json(job.payload)}</pre>
                      </details>
                    </td>
                    <td className="nowrap">
                      <button type="button" onClick={() => act(job, 'retry')}>
                        Retry
                      </button>{' '}
                      <button type="button" onClick={() => act(job, 'remove')}>
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {nextCursor && (
            <a
              className="more"
              href={href(['queues', driver, queue], { state, cursor: nextCursor })}
            >
              Next page
            </a>
          )}
        </>
      ))}
    </>
  )
}

/** Every schedule manager's tasks: expression, next and last run, last status */
export function SchedulesView() {
  const schedules = useLoad('schedules', () => api.schedules())
  return (
    <ManagerSections
      title="Schedules"
      load={schedules}
      none={
        <>
          No schedule manager: list one in <code>scheduleManagers</code> of config/console.ts.
        </>
      }
      columns={['Task', 'Expression', 'Next run', 'Last run', 'Last status']}
      rows={(manager) =>
        manager.tasks.map((task) => (
          <tr key={task.name}>
            <td>{task.name}</td>
            <td>
              <code>{task.expression}</code>
            </td>
            <td className="nowrap">{task.nextRunAt ? dateTime(task.nextRunAt) : ''}</td>
            <td className="nowrap">{task.lastRunAt ? dateTime(task.lastRunAt) : ''}</td>
            <td>{task.lastStatus ?? ''}</td>
          </tr>
        ))
      }
    />
  )
}
