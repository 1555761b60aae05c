import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/** better-sqlite3's prepared statement, as Atrium's hot paths use it */
export interface SqliteStatement {
  run(...values: unknown[]): { changes: number; lastInsertRowid: number | bigint }
  get(...values: unknown[]): unknown
  all(...values: unknown[]): unknown[]
}

export interface SqliteStatements {
  /** The statement for `sql`, prepared once per connection */
  statement(sql: string): SqliteStatement
  /** Runs `body` in one transaction (a savepoint inside an open one) */
  transaction<R>(body: () => R): R
}

/** Prepared statements per raw connection: knex prepares every statement again on every call */
const STATEMENTS = new WeakMap<object, Map<string, SqliteStatement>>()

/**
 * Runs synchronous better-sqlite3 work on a connection taken from the pool
 * (or the open transaction's), waiting for it like any query, with cached
 * prepared statements.
 */
export async function withSqliteStatements<T>(
  client: QueryClientContract,
  work: (sqlite: SqliteStatements) => T
): Promise<T> {
  const knex = client.getWriteClient().client
  const connection = await knex.acquireConnection()
  try {
    let cache = STATEMENTS.get(connection)
    if (!cache) {
      cache = new Map()
      STATEMENTS.set(connection, cache)
    }
    const statements = cache
    return work({
      statement(sql) {
        let prepared = statements.get(sql)
        if (!prepared) {
          prepared = connection.prepare(sql) as SqliteStatement
          statements.set(sql, prepared)
        }
        return prepared
      },
      transaction: (body) => connection.transaction(body)(),
    })
  } finally {
    await knex.releaseConnection(connection)
  }
}
