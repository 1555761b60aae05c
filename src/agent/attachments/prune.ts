import debug from '../debug.ts'
import { AgentConfigException } from '../errors.ts'
import { CONFIG_FILE } from '../config_checks.ts'
import type { AgentStore, MessageRow } from '../store/contract.ts'
import type { AttachmentStaging } from './staging.ts'

/** Ids asked of the store at once: one query each batch */
const BATCH = 100

/** What `agent:prune` found and deleted (or would delete, on a dry run) */
export interface AttachmentPruneReport {
  /** Attachments older than the age limit that were looked at */
  examined: number
  /** Those no message of a live thread references: deleted, or to delete on a dry run */
  unreferenced: string[]
}

/**
 * Deletes the bytes of attachments that no message of a live thread
 * references and that were stored before `olderThan`: uploads never sent,
 * and files of deleted threads or truncated messages. The age keeps an
 * upload alive between `POST /attachments` and the chat that sends it.
 */
export async function pruneAttachments(options: {
  staging: AttachmentStaging | null
  store: AgentStore
  olderThan: Date
  dryRun?: boolean
}): Promise<AttachmentPruneReport> {
  const { staging, store, olderThan } = options
  if (!staging) {
    throw new AgentConfigException(
      `Nothing to prune: "attachments.staging" is not set in ${CONFIG_FILE}`
    )
  }
  if (!staging.list || !staging.delete) {
    throw new AgentConfigException(
      `The "attachments.staging" of ${CONFIG_FILE} cannot be pruned: it needs list() and delete() (stagings.fs() has both)`
    )
  }
  if (!store.attachmentsInUse) {
    throw new AgentConfigException(
      `The agent store of ${CONFIG_FILE} cannot tell which attachments messages reference (attachmentsInUse); stores.lucid() can`
    )
  }
  const report: AttachmentPruneReport = { examined: 0, unreferenced: [] }
  let batch: string[] = []
  const flush = async () => {
    const inUse = await store.attachmentsInUse!(batch)
    for (const id of batch) {
      if (inUse.has(id)) continue
      report.unreferenced.push(id)
      if (!options.dryRun) await staging.delete!(id)
    }
    batch = []
  }
  for await (const entry of staging.list()) {
    if (entry.storedAt >= olderThan) continue
    report.examined++
    batch.push(entry.id)
    if (batch.length === BATCH) await flush()
  }
  if (batch.length) await flush()
  return report
}

/**
 * Deletes the bytes of the attachments of a deleted thread (or of its
 * truncated messages) unless a message of a live thread (a fork) still
 * references them. It never fails the delete: what it misses,
 * `agent:prune` deletes later.
 */
export async function deleteThreadAttachments(
  staging: AttachmentStaging | null,
  store: AgentStore,
  ids: string[]
) {
  if (!ids.length || !staging?.delete || !store.attachmentsInUse) return
  try {
    const inUse = await store.attachmentsInUse(ids)
    for (const id of ids) if (!inUse.has(id)) await staging.delete(id)
  } catch (error) {
    debug('attachments of a deleted thread kept: %s', (error as Error)?.message)
  }
}

/** The attachment ids the messages carry */
export function attachmentIdsOf(messages: MessageRow[]) {
  return messages.flatMap((message) => (message.attachments ?? []).map(({ id }) => id))
}
