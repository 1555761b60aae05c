import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { ConsoleLeasesMissingException } from '../errors.ts'
import type { Lease } from './contract.ts'

export const LEASES_TABLE = 'console_leases'

function affectedRows(result: unknown) {
  return Number(Array.isArray(result) ? result[0] : result)
}

/**
 * Takes a lease row: an expired one (or one this owner or the yielding owner holds) by a
 * conditional update, a missing one by an insert that ignores a conflict;
 * then the row says who won. Of many processes racing, the database lets one
 * update or insert win, and every one of them reads the same owner.
 */
export async function acquireLease(client: QueryClientContract, lease: Lease, now = Date.now()) {
  try {
    const updated = await client
      .from(LEASES_TABLE)
      .where('name', lease.name)
      .where((query) => {
        query.where('expires_at', '<=', now).orWhere('owner', lease.owner)
        if (lease.yieldingOwner) query.orWhere('owner', lease.yieldingOwner)
      })
      .update({ owner: lease.owner, expires_at: lease.expiresAt })
    if (affectedRows(updated) === 0) {
      await client
        .table(LEASES_TABLE)
        .insert({ name: lease.name, owner: lease.owner, expires_at: lease.expiresAt })
        .onConflict('name')
        .ignore()
    }
    const row = await client.from(LEASES_TABLE).where('name', lease.name).select('owner').first()
    return row?.owner === lease.owner
  } catch (error) {
    if (await client.schema.hasTable(LEASES_TABLE).catch(() => true)) throw error
    throw new ConsoleLeasesMissingException(
      `Table "${LEASES_TABLE}" is missing: run "node ace migration:run" (the console_leases migration), or set prune.lock to false in config/console.ts`
    )
  }
}

export async function releaseLease(
  client: QueryClientContract,
  name: string,
  owner: string,
  handOver?: { owner: string; expiresAt: number }
) {
  const held = client.from(LEASES_TABLE).where({ name, owner })
  if (handOver) await held.update({ owner: handOver.owner, expires_at: handOver.expiresAt })
  else await held.delete()
}
