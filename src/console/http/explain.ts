import type { HttpContext } from '@adonisjs/core/http'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import {
  ConsoleExplainFailedException,
  ConsoleExplainNotConfiguredException,
  ConsoleInvalidQueryException,
} from '../errors.ts'
import { findEntry } from './find_entry.ts'
import type { ConsoleManager } from '../manager.ts'

/** A recorded query as `explainQuery` receives it */
export interface RecordedQuery {
  sql: string
  /** As recorded: redacted values are the text `[redacted]` */
  bindings: unknown[]
  /** The Lucid connection that ran it */
  connection: string
}

/** `explainQuery` in config/console.ts: the host decides how (and whether) a query is explained */
export type QueryExplainer = (query: RecordedQuery, ctx: HttpContext) => unknown | Promise<unknown>

/** A statement the explainers agree to plan: one SELECT (or WITH … SELECT), whole */
const READ_STATEMENT = /^\s*(?:select|with)\b/i

/**
 * A ready `explainQuery` for Lucid connections: the database's own plan of a
 * recorded SELECT, never run (`EXPLAIN` without `ANALYZE`): PostgreSQL's
 * `EXPLAIN (FORMAT JSON)`, MySQL/MariaDB's `EXPLAIN FORMAT=JSON`, SQLite's
 * `EXPLAIN QUERY PLAN`. Anything else, several statements or a query cut when
 * recorded is refused with a 400.
 */
export function explainWithLucid(): QueryExplainer {
  return async (query, ctx) => {
    const sql = query.sql.trim().replace(/;\s*$/, '')
    if (!READ_STATEMENT.test(sql) || sql.includes(';')) {
      throw new ConsoleInvalidQueryException('Only a single SELECT statement is explained', 'id')
    }
    if (sql.endsWith('…')) {
      throw new ConsoleInvalidQueryException('The query was cut when recorded', 'id')
    }
    const db = await ctx.containerResolver.make('lucid.db')
    try {
      return await planOf(db.connection(query.connection), sql, query.bindings)
    } catch (error) {
      // the query ran when recorded; what fails now is the database's answer, not the server
      const reason = String((error as Error)?.message ?? error).slice(0, 1000)
      throw new ConsoleExplainFailedException(`The database could not plan this query: ${reason}`)
    }
  }
}

/** The database's own plan of one SELECT, through the Lucid connection that ran it */
async function planOf(connection: QueryClientContract, sql: string, recordedBindings: unknown[]) {
  const dialect = connection.dialect.name
  const prefix =
    dialect === 'postgres'
      ? 'EXPLAIN (FORMAT JSON) '
      : dialect === 'mysql'
        ? 'EXPLAIN FORMAT=JSON '
        : dialect === 'better-sqlite3' || dialect === 'sqlite3' || dialect === 'libsql'
          ? 'EXPLAIN QUERY PLAN '
          : 'EXPLAIN '
  const [text, bindings] =
    dialect === 'postgres' ? knexPlaceholders(sql, recordedBindings) : [sql, recordedBindings]
  const result = await connection.rawQuery(prefix + text, bindings as any[])
  // each driver wraps rows its own way
  if (dialect === 'postgres') return result.rows
  if (dialect === 'mysql') return result[0]
  return result
}

/**
 * PostgreSQL queries are recorded with its own `$1` placeholders, and Lucid's
 * raw queries take `?`: a literal `?` (a JSON operator) is escaped, each `$n`
 * becomes `?` with its binding in that order.
 */
function knexPlaceholders(sql: string, bindings: unknown[]): [string, unknown[]] {
  const ordered: unknown[] = []
  const text = sql.replaceAll('?', '\\?').replace(/\$(\d+)/g, (_match, index: string) => {
    ordered.push(bindings[Number(index) - 1])
    return '?'
  })
  return [text, ordered]
}

/** `POST /entries/:id/explain`: a mutation, since it runs SQL on the app's database */
export function explainHandler(manager: ConsoleManager) {
  return async (ctx: HttpContext) => {
    await manager.gates.authorizeAction(ctx, 'explain a query')
    const explainer = manager.config.explainQuery
    if (!explainer) throw new ConsoleExplainNotConfiguredException()
    const entry = await findEntry(manager.store, ctx.params.id, {
      type: 'query',
      label: 'Query entry',
    })
    const content = entry.content as Record<string, any>
    const plan = await explainer(
      {
        sql: String(content.sql ?? ''),
        bindings: Array.isArray(content.bindings) ? content.bindings : [],
        connection: String(content.connection ?? ''),
      },
      ctx
    )
    return { data: { plan } }
  }
}
