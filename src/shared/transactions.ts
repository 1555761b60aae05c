import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'

/** A deadlock or a busy database ends a transaction that is safe to run again */
export function isDeadlockOrBusy(error: any) {
  return (
    error?.errno === 1213 ||
    error?.code === 'ER_LOCK_DEADLOCK' ||
    error?.code === '40P01' ||
    error?.code === '40001' ||
    error?.code === 'SQLITE_BUSY'
  )
}

/**
 * Runs `work` in a transaction, again (up to three times in all) when the
 * database ended it as a deadlock victim or busy: writers adding to the same
 * rollup rows can meet in MariaDB's gap locks even in key order. `retried`
 * hears each retry's error code, for the feature's debug log.
 */
export async function retryingTransaction<Result>(
  client: QueryClientContract,
  work: (trx: TransactionClientContract) => Promise<Result>,
  retried: (code: string) => void
): Promise<Result> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.transaction(work)
    } catch (error) {
      if (attempt >= 3 || !isDeadlockOrBusy(error)) throw error
      retried((error as any).code)
    }
  }
}
