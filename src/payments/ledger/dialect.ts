import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import debug from '../debug.ts'

/**
 * What the store needs to know about a database, decided once from the
 * connection's dialect so call sites test a capability, never a name.
 */
export interface DialectCapabilities {
  /** `insert ... returning` tells which rows an `on conflict do nothing` inserted */
  supportsReturning: boolean
  /** `select ... for update` locks rows (SQLite locks the whole database instead) */
  supportsRowLocks: boolean
  /** An ignored insert shows only in `changes()` on the same connection */
  reportsChangesPerConnection: boolean
  /** Which claim writer runs the ledger's hot path */
  claimWriter: 'postgres' | 'sqlite' | 'statement'
}

/** Capabilities of the connection's dialect */
export function capabilitiesOf(client: QueryClientContract): DialectCapabilities {
  const name = client.dialect.name
  if (name === 'postgres') {
    return {
      supportsReturning: true,
      supportsRowLocks: true,
      reportsChangesPerConnection: false,
      claimWriter: 'postgres',
    }
  }
  if (name === 'better-sqlite3' || name === 'sqlite3' || name === 'libsql') {
    return {
      supportsReturning: false,
      supportsRowLocks: false,
      reportsChangesPerConnection: true,
      // Prepared statements need better-sqlite3's synchronous driver
      claimWriter: name === 'better-sqlite3' ? 'sqlite' : 'statement',
    }
  }
  // MySQL and MariaDB: an ignored insert reports insertId 0
  return {
    supportsReturning: false,
    supportsRowLocks: true,
    reportsChangesPerConnection: false,
    claimWriter: 'statement',
  }
}

/** A duplicate key on any supported database */
export function isUniqueViolation(error: any) {
  return (
    error?.code === '23505' ||
    error?.code === 'ER_DUP_ENTRY' ||
    error?.errno === 1062 ||
    error?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    error?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    (error?.code === 'SQLITE_CONSTRAINT' && /UNIQUE/.test(String(error?.message)))
  )
}

/**
 * Errors after which the whole transaction can run again unchanged:
 * PostgreSQL serialization failure and deadlock (40001, 40P01), MySQL
 * deadlock and lock wait timeout (1213, 1205), SQLite busy, and a duplicate
 * key met by a concurrent first insert (the next attempt finds the row).
 */
export function isRetryable(error: any) {
  return (
    error?.code === '40001' ||
    error?.code === '40P01' ||
    error?.errno === 1213 ||
    error?.errno === 1205 ||
    error?.code === 'ER_LOCK_DEADLOCK' ||
    error?.code === 'ER_LOCK_WAIT_TIMEOUT' ||
    error?.code === 'SQLITE_BUSY' ||
    isUniqueViolation(error)
  )
}

/** Attempts of one sync transaction before its error reaches the caller */
export const MAX_ATTEMPTS = 6

/**
 * Runs `work` (one whole transaction) again after a retryable error, at
 * most `MAX_ATTEMPTS` times, with a short random pause so the transactions
 * that collided do not collide again in step.
 */
export async function withRetry<T>(label: string, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) {
        throw error
      }
      debug('%s: retry %d after %s', label, attempt, (error as any)?.code ?? 'error')
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt))
    }
  }
}
