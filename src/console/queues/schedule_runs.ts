import diagnosticsChannel from 'node:diagnostics_channel'

/** What a scheduler tells the console about the task it is about to run */
export interface ScheduledTaskRun {
  /** The task's name, or the command it runs (`reports:send`) */
  name: string
  /** Its cron expression or a readable interval (`every 5m`), when the scheduler knows it */
  expression?: string
  /** Which scheduler ran it (`adonisjs-scheduler`, `cron`...) */
  scheduler?: string
}

/**
 * The tracing channel a scheduled task's run is published on. Any scheduler
 * can publish to it; `traceScheduledTask` is the short way.
 */
export const SCHEDULE_RUN_CHANNEL = 'atrium.schedule.run'

/** The channel itself, one per process like the ones `@boringnode/queue` publishes */
export const scheduleRunChannel = diagnosticsChannel.tracingChannel<unknown, any>(
  SCHEDULE_RUN_CHANNEL
)

/**
 * Runs one scheduled task's work and lets `watchers.schedules()` record the
 * run: start, duration, outcome and error. The result and a throw pass
 * through unchanged; without the watcher it costs a property read.
 */
export function traceScheduledTask<T>(
  task: ScheduledTaskRun,
  run: () => T | Promise<T>
): Promise<Awaited<T>> {
  // a fresh object per run: the watcher keys its start time on it
  const message = { name: task.name, expression: task.expression, scheduler: task.scheduler }
  return scheduleRunChannel.tracePromise(async (): Promise<Awaited<T>> => await run(), message)
}
