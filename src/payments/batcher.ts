/**
 * Group commit for one kind of write: the items added during one tick of
 * the event loop go to the database as one statement, and each caller
 * awaits the result of its own item once that statement has committed.
 */
export interface WriteBatcherOptions<Item> {
  /** Runs one batch; returns one result per item, in order */
  run(items: Item[]): Promise<unknown[]>
  /** An item's key: two items sharing a key never go to the database in one statement */
  key(item: Item): string
  /**
   * The result of an item whose key an earlier item of the same batch holds,
   * given once the batch has run. Without it, such an item waits for a later batch.
   */
  duplicate?(item: Item): unknown
  /** Largest batch (default 64) */
  maxBatch?: number
  /** Batches in flight at once; more items wait and coalesce (default 2) */
  maxInFlight?: number
}

interface Pending<Item> {
  item: Item
  resolve(value: unknown): void
  reject(error: unknown): void
}

export class WriteBatcher<Item, Result> {
  #options: Required<Omit<WriteBatcherOptions<Item>, 'duplicate'>> &
    Pick<WriteBatcherOptions<Item>, 'duplicate'>
  #pending: Pending<Item>[] = []
  #scheduled = false
  #inFlight = 0

  constructor(options: WriteBatcherOptions<Item>) {
    this.#options = { maxBatch: 64, maxInFlight: 2, ...options }
  }

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#pending.push({ item, resolve: resolve as (value: unknown) => void, reject })
      if (!this.#scheduled) {
        this.#scheduled = true
        setImmediate(() => {
          this.#scheduled = false
          this.#flush()
        })
      }
    })
  }

  #flush() {
    while (this.#pending.length && this.#inFlight < this.#options.maxInFlight) {
      const batch = this.#take()
      this.#inFlight++
      this.#execute(batch).finally(() => {
        this.#inFlight--
        this.#flush()
      })
    }
  }

  /** The next batch, oldest first, and the duplicates that ride along with it */
  #take() {
    const batch: Pending<Item>[] = []
    const duplicates: Pending<Item>[] = []
    const keys = new Set<string>()
    const rest: Pending<Item>[] = []
    for (const entry of this.#pending) {
      const key = this.#options.key(entry.item)
      if (keys.has(key) && this.#options.duplicate) {
        duplicates.push(entry)
      } else if (batch.length >= this.#options.maxBatch || keys.has(key)) {
        rest.push(entry)
      } else {
        keys.add(key)
        batch.push(entry)
      }
    }
    this.#pending = rest
    return { batch, duplicates }
  }

  async #execute({ batch, duplicates }: { batch: Pending<Item>[]; duplicates: Pending<Item>[] }) {
    await this.#run(batch)
    // Answered only after the batch ran, as if their statement had met its row
    for (const entry of duplicates) {
      try {
        entry.resolve(this.#options.duplicate!(entry.item))
      } catch (error) {
        entry.reject(error)
      }
    }
  }

  async #run(batch: Pending<Item>[]) {
    try {
      const results = await this.#options.run(batch.map(({ item }) => item))
      batch.forEach((entry, index) => entry.resolve(results[index]))
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error)
        return
      }
      // One bad row (or a deadlock) fails the whole statement and nothing was
      // written: each item runs alone so only its own caller sees its error
      await Promise.all(
        batch.map(async (entry) => {
          try {
            const [result] = await this.#options.run([entry.item])
            entry.resolve(result)
          } catch (itemError) {
            entry.reject(itemError)
          }
        })
      )
    }
  }
}
