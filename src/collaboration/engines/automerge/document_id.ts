import { createHash } from 'node:crypto'

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

/**
 * Base58check (the encoding of automerge-repo document ids): the payload
 * and the first four bytes of its double SHA-256, in base 58.
 */
function base58check(payload: Uint8Array): string {
  const first = createHash('sha256').update(payload).digest()
  const checksum = createHash('sha256').update(first).digest().subarray(0, 4)
  const bytes = Buffer.concat([payload, checksum])
  let value = BigInt(`0x${bytes.toString('hex')}`)
  let encoded = ''
  while (value > 0n) {
    encoded = ALPHABET[Number(value % 58n)] + encoded
    value /= 58n
  }
  for (const byte of bytes) {
    if (byte !== 0) {
      break
    }
    encoded = `1${encoded}`
  }
  return encoded
}

/**
 * The automerge-repo document id of a collaboration document: the first
 * 16 bytes of SHA-256("atrium:collaboration:" + name), base58check-encoded
 * like every automerge-repo id. Deterministic and stable: the same name
 * gives the same id on every instance and after every restart, so a client
 * (or the `GET /token` answer) can name the document without a lookup.
 */
export function automergeDocumentId(docName: string): string {
  const digest = createHash('sha256').update(`atrium:collaboration:${docName}`).digest()
  return base58check(digest.subarray(0, 16))
}

/**
 * The `automerge:` URL of a collaboration document, for `repo.find()`.
 */
export function automergeUrl(docName: string): string {
  return `automerge:${automergeDocumentId(docName)}`
}
