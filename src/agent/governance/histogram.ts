/**
 * Duration histograms with fixed log-scale buckets, so a p95 over any
 * window is a sum of bucket counts instead of a rank over every run.
 * Durations under `EXACT_BELOW_MS` are their own bucket; above it each
 * bucket is `GROWTH` times wider than the last (5% relative width), so the
 * bucket's upper bound is at most 5% above any duration it holds.
 */
const EXACT_BELOW_MS = 20
const GROWTH = 1.05
const LOG_GROWTH = Math.log(GROWTH)

/** The bucket of a duration in milliseconds (negative counts as 0) */
export function durationBucket(ms: number): number {
  const value = Math.max(0, Math.floor(ms))
  if (value < EXACT_BELOW_MS) return value
  return EXACT_BELOW_MS + Math.floor(Math.log(value / EXACT_BELOW_MS) / LOG_GROWTH)
}

/**
 * The largest whole millisecond in a bucket. Found through `durationBucket`
 * itself, so floating-point rounding can never put a bound outside its bucket.
 */
export function bucketUpperBound(bucket: number): number {
  if (bucket < EXACT_BELOW_MS) return bucket
  let bound = Math.floor(EXACT_BELOW_MS * GROWTH ** (bucket - EXACT_BELOW_MS + 1))
  while (bound > 0 && durationBucket(bound) > bucket) bound--
  while (durationBucket(bound + 1) <= bucket) bound++
  return bound
}

/**
 * The 95th percentile by nearest rank over bucket counts: the upper bound
 * of the smallest bucket whose cumulative count k satisfies
 * k * 100 >= n * 95. The exact nearest-rank p95 lies in that bucket, so the
 * answer is at most 5% above it (exact under 20 ms). Null without counts.
 */
export function p95FromBuckets(counts: Map<number, number>): number | null {
  const buckets = [...counts.entries()].filter(([, count]) => count > 0).sort((a, b) => a[0] - b[0])
  const total = buckets.reduce((sum, [, count]) => sum + count, 0)
  if (!total) return null
  let seen = 0
  for (const [bucket, count] of buckets) {
    seen += count
    if (seen * 100 >= total * 95) return bucketUpperBound(bucket)
  }
  return bucketUpperBound(buckets.at(-1)![0])
}
