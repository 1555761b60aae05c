import { WriteBatcher } from '../../batcher.ts'
import type { ClaimBatchResult, ClaimItem, ClaimWriter, MarkItem } from '../claim_writer.ts'

/**
 * Group commit of claims and marks over one dialect's batch statements:
 * the claims added in one tick commit together, before any handler runs.
 */
export abstract class BatchedClaimWriter implements ClaimWriter {
  readonly writesPayments = true
  #claims = new WriteBatcher<ClaimItem, ClaimBatchResult>({
    key: (item) => `${item.provider}\0${item.eventId}`,
    // A second delivery of an event in the same batch loses the insert race
    duplicate: () => ({ claimed: false }),
    run: (items) => this.#runClaims(items),
  })
  #marks = new WriteBatcher<MarkItem, void>({
    key: (item) => `${item.provider}\0${item.eventId}`,
    run: async (items) => {
      await this.runMarks(items)
      return items.map(() => undefined)
    },
  })

  /** Inserts the batch's ledger rows, and the payment rows of the ones it inserted */
  protected abstract runClaims(items: ClaimItem[]): Promise<ClaimBatchResult[]>
  /** Marks the batch's rows processed */
  protected abstract runMarks(items: MarkItem[]): Promise<void>

  claim(item: ClaimItem) {
    return this.#claims.add(item)
  }

  mark(item: MarkItem) {
    return this.#marks.add(item)
  }

  async #runClaims(items: ClaimItem[]): Promise<ClaimBatchResult[]> {
    try {
      return await this.runClaims(items)
    } catch (error) {
      // The batcher retries a failed batch item by item; only a lone item gets here
      if (items.length > 1 || !items[0].payment) {
        throw error
      }
      // A payment row the database refuses must not cost the ledger row: record
      // the claim alone; sync then fails (and marks) the event
      return this.runClaims([{ ...items[0], payment: undefined }])
    }
  }
}
