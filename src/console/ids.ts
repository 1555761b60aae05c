import { randomFillSync } from 'node:crypto'

let lastMs = 0
let sequence = 0
let timeHexMs = -1
let timeHex = ''

/**
 * Random hex drawn from one pooled buffer: a `randomBytes` call per id costs
 * more than everything else a recorded query does, so refill 4 KiB at a time.
 */
const POOL = Buffer.alloc(4096)
let poolOffset = POOL.length

/** Two hex digits per byte value: `Buffer#toString('hex')` on a few bytes costs a native call */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

function randomHex(bytes: number) {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL)
    poolOffset = 0
  }
  let hex = ''
  for (let index = 0; index < bytes; index++) hex += HEX[POOL[poolOffset + index]]
  poolOffset += bytes
  return hex
}

/**
 * Time-ordered entry ids: 12 hex digits of Unix ms, 6 of a per-ms sequence,
 * 6 random (12 random for an explicit instant). Fixed width lowercase hex sorts the same in every database, so
 * keyset pages and age cutoffs use the primary key alone.
 */
export function entryId(at?: number): string {
  // an explicit instant (imports, tests) is not part of the monotonic sequence
  if (at !== undefined) {
    return `${Math.floor(at).toString(16).padStart(12, '0')}${randomHex(6)}`
  }
  return sequentialId(Date.now())
}

/** The character codes of each byte value's two hex digits, high digit first */
const HEX_CODES = Uint8Array.from(HEX.join(''), (digit) => digit.charCodeAt(0))

/**
 * The next id of the monotonic sequence for the clock reading `now` (the
 * recorder reads the clock once for an entry's id and its time). The twelve
 * digits after the time are one `String.fromCharCode`: a `toString(16)`, a
 * `padStart` and a concatenation per digit pair allocated several strings per
 * id, and ids are made five times per recorded request.
 */
export function sequentialId(now: number): string {
  if (now <= lastMs) {
    sequence++
    now = lastMs
  } else {
    lastMs = now
    sequence = 0
  }
  if (now !== timeHexMs) {
    timeHexMs = now
    timeHex = now.toString(16).padStart(12, '0')
  }
  if (poolOffset + 3 > POOL.length) {
    randomFillSync(POOL)
    poolOffset = 0
  }
  const high = ((sequence >>> 16) & 0xff) * 2
  const middle = ((sequence >>> 8) & 0xff) * 2
  const low = (sequence & 0xff) * 2
  const first = POOL[poolOffset] * 2
  const second = POOL[poolOffset + 1] * 2
  const third = POOL[poolOffset + 2] * 2
  poolOffset += 3
  return (
    timeHex +
    String.fromCharCode(
      HEX_CODES[high],
      HEX_CODES[high + 1],
      HEX_CODES[middle],
      HEX_CODES[middle + 1],
      HEX_CODES[low],
      HEX_CODES[low + 1],
      HEX_CODES[first],
      HEX_CODES[first + 1],
      HEX_CODES[second],
      HEX_CODES[second + 1],
      HEX_CODES[third],
      HEX_CODES[third + 1]
    )
  )
}

/** The smallest id recorded at or after `ms`: ids below it are older */
export function idAtTime(ms: number): string {
  return `${Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')}${'0'.repeat(12)}`
}

const ID = /^[0-9a-f]{24}$/

/** True for a well-formed entry id (cursors and path parameters are checked with it) */
export function isEntryId(value: unknown): value is string {
  return typeof value === 'string' && ID.test(value)
}
