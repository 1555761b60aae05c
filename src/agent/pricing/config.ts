import { AgentConfigException } from '../errors.ts'
import type { ModelPriceInput } from '../types.ts'
import { MAX_PRICE_PER_1M, priceToMicros, type PricePer1m } from './money.ts'

const FIELDS = [
  'inputPricePer1m',
  'outputPricePer1m',
  'cacheWritePricePer1m',
  'cacheReadPricePer1m',
] as const

/** What a price accepts, for error messages */
export const PRICE_RULE = `a number or decimal string from 0 to ${MAX_PRICE_PER_1M} with at most 6 decimals`

/**
 * Reads one price body (config default, HTTP or Ace) into micro-units.
 * Returns the first problem as `[field, message]` instead of throwing, so
 * each caller raises its own error.
 */
export function readPrice(
  input: Partial<Record<(typeof FIELDS)[number], unknown>>
): PricePer1m | [field: string, message: string] {
  const price: Record<string, number | null> = {}
  for (const field of FIELDS) {
    const value = input[field]
    const optional = field.startsWith('cache')
    if (optional && (value === undefined || value === null)) {
      price[field] = null
      continue
    }
    const micros = priceToMicros(value)
    if (micros === null) return [field, `"${field}" must be ${PRICE_RULE}`]
    price[field] = micros
  }
  return price as unknown as PricePer1m
}

/**
 * Validates `pricing` of config/agent.ts: default prices per model id,
 * inserted for models that have no price row yet.
 */
export function resolvePricing(
  pricing: Record<string, ModelPriceInput> | undefined,
  file: string
): Record<string, PricePer1m> {
  if (pricing === undefined) return {}
  if (!pricing || typeof pricing !== 'object' || Array.isArray(pricing)) {
    throw new AgentConfigException(
      `Invalid "pricing" in ${file}: expected { '<modelId>': { inputPricePer1m, outputPricePer1m } }`
    )
  }
  const resolved: Record<string, PricePer1m> = {}
  for (const [modelId, input] of Object.entries(pricing)) {
    if (!modelId || modelId.length > 191) {
      throw new AgentConfigException(
        `Invalid model id in "pricing" of ${file}: use 1 to 191 characters`
      )
    }
    const price = readPrice(input ?? {})
    if (Array.isArray(price)) {
      throw new AgentConfigException(
        `Invalid "pricing.${modelId}.${price[0]}" in ${file}: it must be ${PRICE_RULE}`
      )
    }
    resolved[modelId] = price
  }
  return resolved
}
