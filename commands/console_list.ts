import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import stringHelpers from '@adonisjs/core/helpers/string'
import { ENTRY_TYPES, type EntryType } from '../src/console/types.ts'

/** Most entries one run prints */
const MAX_LIMIT = 1000

/** Unix ms of `--since`: a duration back from now (`15m`, `2h`) or an ISO time */
function sinceInstant(value: string, now: number): number | undefined {
  if (/^\d+(\.\d+)?\s*[a-z]+$/i.test(value.trim())) {
    try {
      const ms = stringHelpers.milliseconds.parse(value.trim())
      if (Number.isFinite(ms) && ms > 0) return now - ms
    } catch {
      return undefined
    }
    return undefined
  }
  const instant = Date.parse(value)
  return Number.isNaN(instant) ? undefined : instant
}

/**
 * Lists recorded entries, newest first, through the same store query as the
 * JSON API's lists: `--json` prints one JSON array of the summaries the API
 * returns (recorded already redacted) and nothing else on stdout, for
 * scripts and agents. Never prompts.
 */
export default class ConsoleList extends BaseCommand {
  static commandName = 'console:list'
  static description = 'List recorded console entries, newest first'
  static options: CommandOptions = { startApp: true }

  @flags.string({
    description: `Entry type: ${ENTRY_TYPES.join(', ')} or an extension's (all types when omitted)`,
  })
  declare type?: string

  @flags.number({ description: `How many entries, 1 to ${MAX_LIMIT}`, default: 20 })
  declare limit: number

  @flags.string({ description: 'Only entries since a duration ago (15m, 2h) or an ISO time' })
  declare since?: string

  @flags.boolean({ description: 'Print one JSON array on stdout' })
  declare json?: boolean

  #fail(message: string) {
    this.exitCode = 1
    this.logger.error(message)
  }

  async run() {
    const type = this.type?.replaceAll('-', '_')
    // the extensions' types are in the resolved config: read it only when the type is not built in
    if (type !== undefined && !(ENTRY_TYPES as readonly string[]).includes(type)) {
      const manager = await this.app.container.make('atrium.console')
      const types = [...ENTRY_TYPES, ...manager.config.customEntryTypes]
      if (!types.includes(type)) {
        return this.#fail(`Unknown --type "${this.type}": use ${types.join(', ')}`)
      }
    }
    const limit = this.limit ?? 20
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      return this.#fail(`--limit must be a whole number from 1 to ${MAX_LIMIT}`)
    }
    let since: number | undefined
    if (this.since !== undefined) {
      since = sinceInstant(this.since, Date.now())
      if (since === undefined) {
        return this.#fail(
          `Invalid --since "${this.since}": use a duration such as 15m or 2h, or an ISO time`
        )
      }
    }

    const { idAtTime } = await import('../src/console/ids.ts')
    const manager = await this.app.container.make('atrium.console')
    const page = await manager.store.list({
      type: type as EntryType | undefined,
      limit,
      since: since === undefined ? undefined : idAtTime(since),
    })

    if (this.json) {
      this.logger.log(JSON.stringify(page.data))
      return
    }
    if (page.data.length === 0) {
      this.logger.info('No entries')
      return
    }
    const table = this.ui.table()
    table.head(['Time', 'Type', 'Status', 'Duration', 'Summary', 'Batch'])
    for (const entry of page.data) {
      table.row([
        new Date(entry.createdAt).toISOString(),
        entry.type,
        [entry.method, entry.status].filter((part) => part !== null).join(' '),
        entry.durationMs === null ? '' : `${entry.durationMs.toFixed(1)} ms`,
        entry.summary.length > 80 ? `${entry.summary.slice(0, 79)}…` : entry.summary,
        entry.batchId === entry.id ? '' : entry.batchId,
      ])
    }
    table.render()
    if (page.nextCursor) this.logger.info(`More entries exist: raise --limit or narrow --since`)
  }
}
