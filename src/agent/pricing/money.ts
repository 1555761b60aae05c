/**
 * Money in the agent gateway is kept in integers: micro-units of the
 * currency (1 000 000 per dollar, euro, ...), so sums in SQL and in
 * JavaScript never drift the way floats do.
 */

export const MICROS_PER_UNIT = 1_000_000

/** The highest accepted price: one currency unit per token */
export const MAX_PRICE_PER_1M = 1_000_000

const DECIMAL = /^(\d{1,7})(?:\.(\d{1,6}))?$/

/**
 * A price per million tokens, written as a decimal string (`"3.75"`) or a
 * number (`3.75`), as micro-units. Null when it is not a finite number from
 * 0 to 1 000 000 with at most 6 decimals.
 */
export function priceToMicros(value: unknown): number | null {
  let text: string
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null
    // String(0.1 + 0.2) has 17 decimals and is refused, as it should be
    text = String(value)
  } else if (typeof value === 'string') {
    text = value.trim()
  } else {
    return null
  }
  const match = DECIMAL.exec(text)
  if (!match) return null
  const micros = Number(match[1]) * MICROS_PER_UNIT + Number((match[2] ?? '').padEnd(6, '0'))
  return micros > MAX_PRICE_PER_1M * MICROS_PER_UNIT ? null : micros
}

/** Micro-units as a decimal string with 6 decimals: 1234567 is "1.234567" */
export function formatMicros(micros: number): string {
  const negative = micros < 0
  const digits = String(Math.abs(Math.trunc(micros))).padStart(7, '0')
  const text = `${digits.slice(0, -6)}.${digits.slice(-6)}`
  return negative ? `-${text}` : text
}

/** A price row's four prices, in micro-units per million tokens */
export interface PricePer1m {
  inputPricePer1m: number
  outputPricePer1m: number
  /** Null falls back to the input price */
  cacheWritePricePer1m: number | null
  /** Null falls back to the input price */
  cacheReadPricePer1m: number | null
}

/** Token counts of one model call, in disjoint buckets */
export interface TokenBuckets {
  uncachedInputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  outputTokens: number
  reasoningTokens: number
}

/**
 * The cost of one model call in micro-units: every bucket at its price,
 * reasoning billed as output, summed exactly (BigInt) and rounded half up
 * once, so a row's cost never carries a float error.
 */
export function costOf(tokens: TokenBuckets, price: PricePer1m): number {
  const at = (count: number, perMillion: number) => BigInt(count) * BigInt(perMillion)
  const input = price.inputPricePer1m
  const scaled =
    at(tokens.uncachedInputTokens, input) +
    at(tokens.cacheReadTokens, price.cacheReadPricePer1m ?? input) +
    at(tokens.cacheWriteTokens, price.cacheWritePricePer1m ?? input) +
    at(tokens.outputTokens + tokens.reasoningTokens, price.outputPricePer1m)
  return Number((scaled + 500_000n) / 1_000_000n)
}
