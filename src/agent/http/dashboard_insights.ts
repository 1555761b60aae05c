import type { HttpContext, Router } from '@adonisjs/core/http'
import { importOptional } from '../../shared/optional_import.ts'
import { AgentInvalidRequestException, AgentNotImplementedException } from '../errors.ts'
import { PRICE_RULE, readPrice } from '../pricing/config.ts'
import { formatMicros, priceToMicros } from '../pricing/money.ts'
import type { InsightQueries, ModelPriceRow, PricingStore } from '../store/contract.ts'
import { MAX_LIMIT, dayWindow, integer, manager } from './dashboard_params.ts'
import { streamAgentEvents } from './live_stream.ts'
import { assertNoNul } from './requests.ts'

/** One model's price in effect, prices as decimal strings per million tokens */
export interface CurrentModelPrice {
  id: number
  modelId: string
  inputPricePer1m: string
  outputPricePer1m: string
  /** Null: billed at the input price */
  cacheWritePricePer1m: string | null
  /** Null: billed at the input price */
  cacheReadPricePer1m: string | null
  effectiveFrom: string
}

export function currentModelPrice(row: ModelPriceRow): CurrentModelPrice {
  const optional = (micros: number | null) => (micros === null ? null : formatMicros(micros))
  return {
    id: row.id,
    modelId: row.modelId,
    inputPricePer1m: formatMicros(row.inputPricePer1m),
    outputPricePer1m: formatMicros(row.outputPricePer1m),
    cacheWritePricePer1m: optional(row.cacheWritePricePer1m),
    cacheReadPricePer1m: optional(row.cacheReadPricePer1m),
    effectiveFrom: row.effectiveFrom.toISOString(),
  }
}

async function insights(ctx: HttpContext): Promise<InsightQueries> {
  const agents = await manager(ctx)
  const queries = agents.config.store.insights
  if (!queries) {
    throw new AgentNotImplementedException('The agent store does not provide the spend aggregates')
  }
  return queries
}

async function pricing(ctx: HttpContext): Promise<PricingStore> {
  const agents = await manager(ctx)
  const store = agents.config.store.pricing
  if (!store) throw new AgentNotImplementedException('The agent store does not keep model prices')
  return store
}

let priceValidator: Promise<{ validate(data: unknown): Promise<any> }> | undefined

/** The `POST /pricing` body schema, compiled once VineJS is first needed */
async function compilePriceValidator() {
  const { default: vine } = await importOptional<typeof import('@vinejs/vine')>(
    '@vinejs/vine',
    'POST /pricing of the agent governance API'
  )
  const price = vine.createRule((value, _options, field) => {
    if (priceToMicros(value) === null) {
      field.report(`"${field.name}" must be ${PRICE_RULE}`, 'price', field)
    }
  })
  const priceField = () => vine.any().use(price())
  return vine.compile(
    vine.object({
      modelId: vine.string().trim().minLength(1).maxLength(191),
      inputPricePer1m: priceField(),
      outputPricePer1m: priceField(),
      cacheWritePricePer1m: priceField().optional(),
      cacheReadPricePer1m: priceField().optional(),
    })
  )
}

/** `POST /pricing`: a new price effective now; 400 naming the first bad field */
async function setPrice(ctx: HttpContext) {
  const store = await pricing(ctx)
  priceValidator ??= compilePriceValidator().catch((error) => {
    priceValidator = undefined
    throw error
  })
  let body: any
  try {
    const validator = await priceValidator
    body = await validator.validate(ctx.request.body())
  } catch (error: any) {
    if (error?.code !== 'E_VALIDATION_ERROR') throw error
    const [first] = error.messages ?? []
    throw new AgentInvalidRequestException(
      first?.message ?? 'Invalid price',
      first?.field ?? undefined
    )
  }
  assertNoNul(body.modelId, 'modelId')
  const price = readPrice(body)
  if (Array.isArray(price)) throw new AgentInvalidRequestException(price[1], price[0])
  const row = await store.setPrice(body.modelId, price)
  ctx.response.status(201)
  return currentModelPrice(row)
}

/**
 * The aggregate routes, the prices and the live stream of the governance
 * API, mounted inside its group (same middleware, same authorization).
 */
export function registerInsightRoutes(router: Router) {
  router
    .get('spend', async (ctx) => {
      const window = dayWindow(ctx.request.qs())
      const queries = await insights(ctx)
      return queries.spend(window)
    })
    .as('spend')
  router
    .get('top-threads', async (ctx) => {
      const qs = ctx.request.qs()
      const window = dayWindow(qs)
      const limit = integer(qs.limit, 'limit', 10, MAX_LIMIT)
      const queries = await insights(ctx)
      return queries.topThreads(window, limit)
    })
    .as('top_threads')
  router
    .get('reliability', async (ctx) => {
      const window = dayWindow(ctx.request.qs())
      const queries = await insights(ctx)
      return queries.reliability(window)
    })
    .as('reliability')
  router
    .get('tools', async (ctx) => {
      const window = dayWindow(ctx.request.qs())
      const queries = await insights(ctx)
      return queries.tools(window)
    })
    .as('tools')
  router
    .get('pricing', async (ctx) => {
      const store = await pricing(ctx)
      const rows = await store.current()
      return rows.map(currentModelPrice)
    })
    .as('pricing')
  router.post('pricing', setPrice).as('pricing.set')
  router
    .get('stream', async (ctx) => {
      const agents = await manager(ctx)
      await streamAgentEvents(ctx, {
        heartbeatMs: agents.config.sse.heartbeatMs,
        onShutdown: (close) => agents.onShutdown(close),
      })
    })
    .as('stream')
}
