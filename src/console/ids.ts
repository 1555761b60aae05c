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
  let now = Date.now()
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
  const time = timeHex
  const seq = (sequence & 0xffffff).toString(16).padStart(6, '0')
  return `${time}${seq}${randomHex(3)}`
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
