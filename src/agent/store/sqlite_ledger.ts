import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { withSqliteStatements, type SqliteStatements } from '../../shared/sqlite_statements.ts'
import { isDeadlockOrBusy } from '../../shared/transactions.ts'
import debug from '../debug.ts'
import type { RunOutcome, UsageInput, UsageRow } from './contract.ts'
import { pricedUsage, runEndOf, usageColumns } from './lucid_ledger.ts'
import { pricedAs, priceRow } from './lucid_pricing.ts'
import { runEndRollupWrites, usageRollupWrites, type RollupWrite } from './lucid_rollups.ts'
import { AGENT_TABLES } from './lucid_rows.ts'
import { bind } from './sqlite_turn.ts'

const PRICE_AT = `select * from ${AGENT_TABLES.pricing}
  where model_id = ? and effective_from <= ? order by effective_from desc, id desc limit 1`

const RUNNING_RUN = `select * from ${AGENT_TABLES.runs}
  where id = ? and status = 'running' limit 1`

const END_RUN = `update ${AGENT_TABLES.runs}
  set status = ?, error_code = ?, steps = ?, retries = ?, finished_at = ?, duration_ms = ?
  where id = ? and status = 'running'`

const quoted = (name: string) => `"${name}"`

/** `insert into <table> (<columns>) values (?, ...)`, columns in the row's order */
function insertSql(table: string, row: Record<string, unknown>) {
  const columns = Object.keys(row)
  return `insert into ${quoted(table)} (${columns.map(quoted).join(', ')}) values (${columns.map(() => '?').join(', ')})`
}

/** The upsert `addTo` (lucid_rollups.ts) builds through knex, as one statement text per shape */
function upsertSql({ table, key, increments }: RollupWrite) {
  const added = Object.keys(increments)
  return `${insertSql(table, { ...key, ...increments })} on conflict (${Object.keys(key).map(quoted).join(', ')}) do update set ${added
    .map((counter) => `${quoted(counter)} = ${quoted(table)}.${quoted(counter)} + ?`)
    .join(', ')}`
}

function upsert(sqlite: SqliteStatements, write: RollupWrite) {
  const values = [...Object.values(write.key), ...Object.values(write.increments)]
  sqlite.statement(upsertSql(write)).run(...values, ...Object.values(write.increments))
}

/**
 * The ledger writes that end a model call and a run (the usage row, the
 * run's end, their rollups) as cached better-sqlite3 prepared statements,
 * each group in one transaction: through knex they were a third of what a
 * turn allocated. The values bound are the ones knex binds (see `bind`),
 * so the rows are the Lucid path's.
 */
export class SqliteLedgerStatements {
  #client: () => QueryClientContract

  constructor(client: () => QueryClientContract) {
    this.#client = client
  }

  recordUsage(input: UsageInput): Promise<UsageRow> {
    const createdAt = new Date()
    return this.#transaction((sqlite) => {
      const row = pricedUsage(input, this.#priceAt(sqlite, input.model, createdAt))
      const columns = usageColumns(row, createdAt)
      sqlite
        .statement(insertSql(AGENT_TABLES.usage, columns))
        .run(...Object.values(columns).map(bind))
      for (const write of usageRollupWrites(row)) upsert(sqlite, write)
      return row
    })
  }

  finishRun(id: string, outcome: RunOutcome): Promise<void> {
    return this.#transaction((sqlite) => {
      const run = sqlite.statement(RUNNING_RUN).get(id) as Record<string, any> | undefined
      if (!run) return
      const finishedAt = new Date()
      const end = runEndOf(run, outcome, finishedAt)
      const { changes } = sqlite
        .statement(END_RUN)
        .run(
          end.status,
          end.errorCode,
          outcome.steps,
          end.retries,
          bind(finishedAt),
          end.durationMs,
          id
        )
      // Another writer ended it between the read and the update: counted once, by that writer
      if (changes !== 1) return
      for (const write of runEndRollupWrites(end)) upsert(sqlite, write)
    })
  }

  #priceAt(sqlite: SqliteStatements, model: string, at: Date) {
    for (const modelId of pricedAs(model)) {
      const row = sqlite.statement(PRICE_AT).get(modelId, bind(at))
      if (row) return priceRow(row)
    }
    return null
  }

  /** One transaction, run again (three times in all) when another process held the database */
  async #transaction<T>(work: (sqlite: SqliteStatements) => T): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withSqliteStatements(this.#client(), (sqlite) =>
          sqlite.transaction(() => work(sqlite))
        )
      } catch (error) {
        if (attempt >= 3 || !isDeadlockOrBusy(error)) throw error
        debug('ledger transaction retried after %s', (error as any).code)
      }
    }
  }
}
