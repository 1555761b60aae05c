import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { queryPrepared } from '../../shared/postgres_statements.ts'
import { withSqliteStatements } from '../../shared/sqlite_statements.ts'
import { AGENT_TABLES } from '../store/lucid_rows.ts'

const { quota, quotaHolds } = AGENT_TABLES

/** A reservation that fits: the hold it writes, the day's row it moves */
export interface FittingReservation {
  holdId: string
  actorRef: string
  day: string
  tokens: number
  limitTokens: number
  expiresAt: number
}

const TAKE_ON_SQLITE = `update ${quota} set reserved_tokens = reserved_tokens + ?
  where actor_ref = ? and day = ? and used_tokens + reserved_tokens + ? <= ?`

const INSERT_HOLD_ON_SQLITE = `insert into ${quotaHolds}
  (id, actor_ref, day, tokens, expires_at) values (?, ?, ?, ?, ?)`

/**
 * The hold is inserted only when the update took the tokens: both happen in
 * the statement or neither does. The update locks the day's row first, as
 * every other quota write does.
 */
const RESERVE_ON_POSTGRES = `with took as (
  update ${quota} set reserved_tokens = reserved_tokens + $1
  where actor_ref = $2 and day = $3 and used_tokens + reserved_tokens + $1 <= $4
  returning actor_ref, day
)
insert into ${quotaHolds} (id, actor_ref, day, tokens, expires_at)
select $5::varchar, actor_ref, day, $1::bigint, $6::bigint from took
returning id`

/**
 * The common reservation (the day's row exists and the tokens fit) without
 * a Lucid transaction: on better-sqlite3 two prepared statements in one
 * synchronous transaction, on PostgreSQL one named prepared statement. True when the
 * tokens were taken and the hold written; false when they did not fit or
 * the row is missing, and the caller takes the transaction path, which
 * knows what to do then. `undefined` on other dialects.
 */
export async function reserveInOneStep(
  client: QueryClientContract,
  reservation: FittingReservation
): Promise<boolean | undefined> {
  const { holdId, actorRef, day, tokens, limitTokens, expiresAt } = reservation
  if (client.dialect.name === 'better-sqlite3') {
    return withSqliteStatements(client, ({ statement, transaction }) =>
      transaction(() => {
        const took = statement(TAKE_ON_SQLITE).run(tokens, actorRef, day, tokens, limitTokens)
        if (took.changes !== 1) return false
        statement(INSERT_HOLD_ON_SQLITE).run(holdId, actorRef, day, tokens, expiresAt)
        return true
      })
    )
  }
  if (client.dialect.name === 'postgres') {
    const result = await queryPrepared(client, RESERVE_ON_POSTGRES, [
      tokens,
      actorRef,
      day,
      limitTokens,
      holdId,
      expiresAt,
    ])
    return result.rows.length === 1
  }
  return undefined
}
