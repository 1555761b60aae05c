import { test } from '@japa/runner'
import {
  addEncoded,
  BUCKET_COUNT,
  bucketOf,
  decode,
  encode,
  mergeEncoded,
  quantile,
  record,
  total,
  type Histogram,
} from '../../src/console/rollups/histogram.ts'

function histogramOf(durations: number[]) {
  const histogram: Histogram = new Map()
  for (const duration of durations) record(histogram, duration)
  return histogram
}

test.group('Console latency histogram', () => {
  test('merging two encoded halves gives the histogram of the whole', ({ assert }) => {
    const durations = Array.from({ length: 1000 }, (_, index) => 0.2 + index * 1.7)
    const whole = histogramOf(durations)
    const merged = mergeEncoded(
      encode(histogramOf(durations.slice(0, 400))),
      encode(histogramOf(durations.slice(400)))
    )
    assert.equal(merged, encode(whole))
    for (const q of [0.5, 0.9, 0.99]) {
      const exact = durations[Math.ceil(q * durations.length) - 1]
      assert.closeTo(quantile(decode(merged), q)!, exact, exact * 0.05)
    }
  })

  test('durations out of range land in the first and last buckets', ({ assert }) => {
    assert.equal(bucketOf(0), 0)
    assert.equal(bucketOf(-5), 0)
    assert.equal(bucketOf(Number.NaN), 0)
    assert.equal(bucketOf(10 * 3600_000), BUCKET_COUNT - 1)
    assert.equal(total(histogramOf([0, 1e12, Number.POSITIVE_INFINITY])), 3)
  })

  test('a malformed stored histogram decodes its valid pairs and never throws', ({ assert }) => {
    const decoded = decode(
      `3:2,x:1,4:-1,5:1.5,${BUCKET_COUNT}:1,,7,:,8:1e400,9:2:1,10:${2 ** 53},11:0,3:1`
    )
    assert.deepEqual([...decoded], [[3, 3]])
    assert.isNull(quantile(decode(''), 0.5))
    assert.equal(encode(decode(null)), '')
  })

  test('a stored histogram adds into a running sum, bucket by bucket', ({ assert }) => {
    const sum = decode('3:2,40:1')
    addEncoded(sum, '3:1,41:5')
    addEncoded(sum, 'x')
    assert.deepEqual(
      [...sum].sort((a, b) => a[0] - b[0]),
      [
        [3, 3],
        [40, 1],
        [41, 5],
      ]
    )
    assert.equal(encode(sum), mergeEncoded(mergeEncoded('3:2,40:1', '3:1,41:5'), ''))
  })
})
