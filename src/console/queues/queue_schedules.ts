import { importOptional } from '../../shared/optional_import.ts'
import type { ConsoleScheduledTask, ConsoleScheduleManager } from './contract.ts'

/** The part of `@boringnode/queue`'s public API the schedule manager reads */
interface BoringQueue {
  QueueManager: {
    use(adapter?: string): {
      listSchedules(): Promise<
        Array<{
          id: string
          name: string
          cronExpression: string | null
          everyMs: number | null
          timezone: string
          nextRunAt: Date | null
          lastRunAt: Date | null
          status: string
        }>
      >
    }
  }
}

/**
 * A schedule manager over `@adonisjs/queue` (`@boringnode/queue`) schedules:
 * each one's job, cron expression or interval, next and last run. The queue
 * keeps no outcome of a run, so `lastStatus` is `paused` for a paused
 * schedule and null otherwise. Reads the `adapter` named in config/queue.ts,
 * the default one unless named.
 */
export function queueSchedules(options: { adapter?: string } = {}): ConsoleScheduleManager {
  let queue: BoringQueue | undefined
  return {
    driver: options.adapter ? `queue:${options.adapter}` : 'queue',
    async init() {
      queue = await importOptional<BoringQueue>(
        '@boringnode/queue',
        'queueSchedules() in config/console.ts'
      )
    },
    async listTasks(): Promise<ConsoleScheduledTask[]> {
      const schedules = await queue!.QueueManager.use(options.adapter).listSchedules()
      return schedules.map((schedule) => ({
        // a schedule's id defaults to its job's name; a custom id names which one it is
        name: schedule.id === schedule.name ? schedule.name : `${schedule.name} (${schedule.id})`,
        expression: schedule.cronExpression
          ? `${schedule.cronExpression} ${schedule.timezone}`
          : `every ${schedule.everyMs} ms`,
        nextRunAt: schedule.status === 'paused' ? null : schedule.nextRunAt,
        lastRunAt: schedule.lastRunAt,
        lastStatus: schedule.status === 'paused' ? 'paused' : null,
      }))
    },
  }
}
