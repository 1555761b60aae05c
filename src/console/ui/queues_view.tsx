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

/** Every queue manager's queues with their counts per state, each state a link to its jobs */
export function QueuesView() {
  const queues = useLoad('queues', () => api.queues())
  return (
    <>
      <h2>Queues</h2>
      {loaded(queues, ({ data }) =>
        data.length === 0 ? (
          <p className="empty">
            No queue manager: list one in <code>queueManagers</code> of config/console.ts.
          </p>
        ) : (
          data.map((manager) => (
            <section key={manager.driver}>
              <h3>{manager.driver}</h3>
              {manager.error && <Failure message={manager.error} />}
              <table className="entries">
                <thead>
                  <tr>
                    <th>Queue</th>
                    <th>Jobs per state</th>
                  </tr>
                </thead>
                <tbody>
                  {manager.queues.map((queue) => (
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
                  ))}
                </tbody>
              </table>
            </section>
          ))
        )
      )}
    </>
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
    <>
      <h2>Schedules</h2>
      {loaded(schedules, ({ data }) =>
        data.length === 0 ? (
          <p className="empty">
            No schedule manager: list one in <code>scheduleManagers</code> of config/console.ts.
          </p>
        ) : (
          data.map((manager) => (
            <section key={manager.driver}>
              <h3>{manager.driver}</h3>
              {manager.error && <Failure message={manager.error} />}
              <table className="entries">
                <thead>
                  <tr>
                    <th>Task</th>
                    <th>Expression</th>
                    <th>Next run</th>
                    <th>Last run</th>
                    <th>Last status</th>
                  </tr>
                </thead>
                <tbody>
                  {manager.tasks.map((task) => (
                    <tr key={task.name}>
                      <td>{task.name}</td>
                      <td>
                        <code>{task.expression}</code>
                      </td>
                      <td className="nowrap">{task.nextRunAt ? dateTime(task.nextRunAt) : ''}</td>
                      <td className="nowrap">{task.lastRunAt ? dateTime(task.lastRunAt) : ''}</td>
                      <td>{task.lastStatus ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          ))
        )
      )}
    </>
  )
}
