import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import debug from '../debug.ts'
import type { PricePer1m } from '../pricing/money.ts'
import type { ModelPriceRow, PricingStore } from './contract.ts'
import { AGENT_TABLES, toDate } from './lucid_rows.ts'

const nullableNumber = (value: unknown) =>
  value === null || value === undefined ? null : Number(value)

export function priceRow(row: any): ModelPriceRow {
  return {
    id: Number(row.id),
    modelId: row.model_id,
    inputPricePer1m: Number(row.input_price_per_1m),
    outputPricePer1m: Number(row.output_price_per_1m),
    cacheWritePricePer1m: nullableNumber(row.cache_write_price_per_1m),
    cacheReadPricePer1m: nullableNumber(row.cache_read_price_per_1m),
    effectiveFrom: toDate(row.effective_from)!,
  }
}

/**
 * The model ids a usage row's model label is priced under, in order: the
 * exact label, then the model id after the last `:`
 * (`anthropic.messages:claude-sonnet-4-5` is priced as `claude-sonnet-4-5`).
 */
export function pricedAs(model: string) {
  return model.includes(':') ? [model, model.slice(model.lastIndexOf(':') + 1)] : [model]
}

/**
 * Effective-dated prices in `agent_pricing`. Config defaults are inserted
 * once per process, before the first price is read, for the models that
 * have no row yet: a price set over HTTP or Ace is never overwritten.
 */
export class LucidPricingStore implements PricingStore {
  #connect: () => QueryClientContract
  #defaults: Record<string, PricePer1m> = {}
  #seeded?: Promise<void>

  constructor(connect: () => QueryClientContract) {
    this.#connect = connect
  }

  useDefaults(defaults: Record<string, PricePer1m>) {
    this.#defaults = defaults
    this.#seeded = undefined
  }

  /** Inserts the config defaults of unpriced models; retried on the next call if it failed */
  ensureSeeded() {
    this.#seeded ??= this.#seed().catch((error) => {
      this.#seeded = undefined
      throw error
    })
    return this.#seeded
  }

  async #seed() {
    const models = Object.keys(this.#defaults)
    if (!models.length) return
    const client = this.#connect()
    const priced = await client
      .from(AGENT_TABLES.pricing)
      .whereIn('model_id', models)
      .distinct('model_id')
    const known = new Set(priced.map((row: any) => row.model_id))
    for (const model of models.filter((name) => !known.has(name))) {
      await this.#insert(client, model, this.#defaults[model])
      debug('seeded the price of %s from config/agent.ts', model)
    }
  }

  async #insert(client: QueryClientContract, modelId: string, price: PricePer1m) {
    const now = new Date()
    const row = {
      model_id: modelId,
      input_price_per_1m: price.inputPricePer1m,
      output_price_per_1m: price.outputPricePer1m,
      cache_write_price_per_1m: price.cacheWritePricePer1m,
      cache_read_price_per_1m: price.cacheReadPricePer1m,
      effective_from: now,
      created_at: now,
    }
    const [inserted] = await client
      .insertQuery()
      .table(AGENT_TABLES.pricing)
      .insert(row)
      .returning('id')
    const id = typeof inserted === 'object' ? (inserted as any).id : inserted
    return priceRow({ ...row, id })
  }

  async setPrice(modelId: string, price: PricePer1m) {
    await this.ensureSeeded()
    return this.#insert(this.#connect(), modelId, price)
  }

  async current() {
    await this.ensureSeeded()
    const client = this.#connect()
    const now = new Date()
    // Newest effective row per model: the one no later row of the same model supersedes
    const rows = await client
      .from(`${AGENT_TABLES.pricing} as price`)
      .where('price.effective_from', '<=', now)
      .whereNotExists((later) => {
        later
          .from(`${AGENT_TABLES.pricing} as later`)
          .whereColumn('later.model_id', 'price.model_id')
          .where('later.effective_from', '<=', now)
          .where((newer) => {
            newer
              .whereColumn('later.effective_from', '>', 'price.effective_from')
              .orWhere((tie) => {
                tie
                  .whereColumn('later.effective_from', '=', 'price.effective_from')
                  .whereColumn('later.id', '>', 'price.id')
              })
          })
      })
      .orderBy('price.model_id', 'asc')
      .select('price.*')
    return rows.map(priceRow)
  }

  /** The price in effect at `at` for a usage row's model label (see `pricedAs`) */
  async priceAt(client: QueryClientContract, model: string, at: Date) {
    for (const modelId of pricedAs(model)) {
      const row = await client
        .from(AGENT_TABLES.pricing)
        .where('model_id', modelId)
        .where('effective_from', '<=', at)
        .orderBy('effective_from', 'desc')
        .orderBy('id', 'desc')
        .first()
      if (row) return priceRow(row)
    }
    return null
  }
}
