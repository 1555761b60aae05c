import { ConsoleInvalidQueryException, ConsoleNotFoundException } from '../errors.ts'
import { isEntryId } from '../ids.ts'
import type { ConsoleStore } from '../stores/contract.ts'
import type { ConsoleEntry, EntryType } from '../types.ts'

/**
 * The entry a route's `:id` names: 400 when it is no entry id, 404 (naming
 * it as `label`) when there is none of `type`.
 */
export async function findEntry(
  store: ConsoleStore,
  id: string,
  options: { type?: EntryType; label?: string } = {}
): Promise<ConsoleEntry> {
  if (!isEntryId(id)) throw new ConsoleInvalidQueryException('"id" must be an entry id', 'id')
  const entry = await store.find(id)
  if (!entry || (options.type && entry.type !== options.type)) {
    throw new ConsoleNotFoundException(`${options.label ?? 'Entry'} ${id} not found`)
  }
  return entry
}
