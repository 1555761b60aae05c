/**
 * A mergeable latency histogram: fixed log-scale buckets, eight per doubling
 * (each about 9% wide), from 62.5 µs to about 262 s (the last bucket holds
 * everything slower). Two histograms merge by adding their buckets, so
 * minutes, routes and instances combine without keeping any sample, and a
 * percentile of the merge is as accurate as one of a single histogram.
 *
 * Stored as sparse `index:count` pairs, ascending (`"40:3,41:12"`). This
 * module imports nothing: the SQLite writer thread merges with it too.
 */

/** Buckets per doubling of the latency */
export const BUCKETS_PER_OCTAVE = 8
/** The first bucket ends at 2^-4 ms */
const LOWEST_EXPONENT = -4
/** 22 doublings: up to 2^18 ms */
export const BUCKET_COUNT = BUCKETS_PER_OCTAVE * 22

/** Bucket index to count; absent buckets are empty */
export type Histogram = Map<number, number>

/** The bucket a duration falls in */
export function bucketOf(durationMs: number) {
  if (!(durationMs > 0)) return 0
  const index = Math.floor((Math.log2(durationMs) - LOWEST_EXPONENT) * BUCKETS_PER_OCTAVE)
  return Math.min(BUCKET_COUNT - 1, Math.max(0, index))
}

/** The value a bucket stands for: its geometric middle, within 4.5% of any duration in it */
export function bucketValueMs(index: number) {
  return 2 ** (LOWEST_EXPONENT + (index + 0.5) / BUCKETS_PER_OCTAVE)
}

/** Adds one duration */
export function record(histogram: Histogram, durationMs: number) {
  const index = bucketOf(durationMs)
  histogram.set(index, (histogram.get(index) ?? 0) + 1)
}

/** Adds `other`'s buckets into `into` and returns it */
export function mergeInto(into: Histogram, other: Histogram) {
  for (const [index, count] of other) into.set(index, (into.get(index) ?? 0) + count)
  return into
}

/** The stored form: `index:count` pairs of the non-empty buckets, ascending */
export function encode(histogram: Histogram) {
  return [...histogram]
    .filter(([, count]) => count > 0)
    .sort((a, b) => a[0] - b[0])
    .map(([index, count]) => `${index}:${count}`)
    .join(',')
}

/** Reads the stored form; malformed pairs are skipped, never thrown */
export function decode(text: string | null | undefined): Histogram {
  return addEncoded(new Map(), text)
}

const COMMA = 44
const COLON = 58
const ZERO = 48
const NINE = 57

/**
 * Adds the buckets of a stored form into `into` and returns it: one pass
 * over the characters, no intermediate strings or maps, since the health
 * view merges a day of minutes per route (thousands of rows) per request.
 * A pair that is not `digits:digits`, an index out of range or a count that
 * is not a positive safe integer is skipped, never thrown.
 */
export function addEncoded(into: Histogram, text: string | null | undefined) {
  if (!text) return into
  const length = text.length
  let position = 0
  while (position < length) {
    let index = 0
    let count = 0
    let indexDigits = 0
    let countDigits = 0
    let colons = 0
    let valid = true
    for (; position < length; position++) {
      const code = text.charCodeAt(position)
      if (code === COMMA) break
      if (code === COLON) colons++
      else if (code < ZERO || code > NINE) valid = false
      else if (colons === 0) {
        index = index * 10 + code - ZERO
        indexDigits++
      } else {
        count = count * 10 + code - ZERO
        countDigits++
      }
    }
    position++
    if (!valid || colons !== 1 || indexDigits === 0 || countDigits === 0) continue
    if (index >= BUCKET_COUNT || count <= 0 || !Number.isSafeInteger(count)) continue
    into.set(index, (into.get(index) ?? 0) + count)
  }
  return into
}

/** Merges two stored forms */
export function mergeEncoded(a: string | null | undefined, b: string | null | undefined) {
  return encode(mergeInto(decode(a), decode(b)))
}

/** Durations counted */
export function total(histogram: Histogram) {
  let sum = 0
  for (const count of histogram.values()) sum += count
  return sum
}

/**
 * The duration at quantile `q` (0.5 for p50), as its bucket's value rounded
 * to 0.01 ms; null when the histogram is empty.
 */
export function quantile(histogram: Histogram, q: number): number | null {
  const count = total(histogram)
  if (count === 0) return null
  const rank = Math.max(1, Math.ceil(q * count))
  let seen = 0
  for (const index of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(index)!
    if (seen >= rank) return Math.round(bucketValueMs(index) * 100) / 100
  }
  return null
}
