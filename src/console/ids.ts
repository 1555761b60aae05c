import { randomBytes } from 'node:crypto'

let lastMs = 0
let sequence = 0

/**
 * Time-ordered entry ids: 12 hex digits of Unix ms, 6 of a per-ms sequence,
 * 6 random (12 random for an explicit instant). Fixed width lowercase hex sorts the same in every database, so
 * keyset pages and age cutoffs use the primary key alone.
 */
export function entryId(at?: number): string {
  // an explicit instant (imports, tests) is not part of the monotonic sequence
  if (at !== undefined) {
    return `${Math.floor(at).toString(16).padStart(12, '0')}${randomBytes(6).toString('hex')}`
  }
  let now = Date.now()
  if (now <= lastMs) {
    sequence++
    now = lastMs
  } else {
    lastMs = now
    sequence = 0
  }
  const time = now.toString(16).padStart(12, '0')
  const seq = (sequence & 0xffffff).toString(16).padStart(6, '0')
  return `${time}${seq}${randomBytes(3).toString('hex')}`
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
