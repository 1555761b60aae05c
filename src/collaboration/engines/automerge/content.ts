import * as A from '@automerge/automerge'
import { diffStrings } from '../yjs/content.ts'
import type { CollabDocumentSeed } from '../../types.ts'

/** Actor of the first change of a never-stored document, the same everywhere */
const GENESIS_ACTOR = '00000000000000000000000000000000'

/**
 * The first state of a document nothing seeded: one empty change with a
 * fixed actor, time and message (the document's name), so every instance
 * that creates it creates the same change, and no two documents share it.
 */
export function genesisState(docName: string): Uint8Array {
  const doc = A.emptyChange(A.init({ actor: GENESIS_ACTOR }), { time: 0, message: docName })
  return withFree(doc, () => A.save(doc))
}

/**
 * Runs `use` on a document made for one computation, then frees its
 * WebAssembly memory at once instead of whenever the collector gets to it.
 */
export function withFree<T>(doc: A.Doc<any>, use: (doc: A.Doc<any>) => T): T {
  try {
    return use(doc)
  } finally {
    A.free(doc)
  }
}

/**
 * Bytes for a declaration's `load` result: Automerge bytes as they are, an
 * Automerge document saved, a plain object written as the first change.
 * Null for nothing (or for something Automerge cannot read).
 */
export function seedState(seed: CollabDocumentSeed): Uint8Array | null {
  if (seed instanceof Uint8Array) {
    if (!seed.byteLength) {
      return null
    }
    withFree(A.load(seed), () => {})
    return seed
  }
  if (seed && typeof seed === 'object') {
    return A.isAutomerge(seed)
      ? A.save(seed)
      : withFree(A.from(seed as Record<string, unknown>), (doc) => A.save(doc))
  }
  return null
}

/** A document from stored bytes (a snapshot followed by any increments) */
export function docFromState<T = any>(state: Uint8Array): A.Doc<T> {
  return A.loadIncremental(A.init<T>(), state)
}

/** Concatenated chunks: what `loadIncremental` reads in one go */
export function concatChunks(chunks: Uint8Array[]): Uint8Array {
  const parts = chunks.filter((chunk) => chunk.byteLength)
  return parts.length === 1 ? parts[0] : Buffer.concat(parts)
}

/**
 * Stored parts (a state, log entries, a newer state) as one saved document:
 * Automerge changes are identified by hash, so a change held by several
 * parts is kept once.
 */
export function mergeChunks(parts: Uint8Array[]): Uint8Array {
  return withFree(docFromState(concatChunks(parts)), (doc) => A.save(doc))
}

/**
 * The text layout on Automerge: the root string `content`, empty otherwise.
 */
export function textOfDoc(doc: A.Doc<any>): string {
  const content = (doc as Record<string, unknown>).content
  return typeof content === 'string' ? content : ''
}

/** One string per document that `diff` compares: the text, else the JSON */
export function flatten(doc: A.Doc<any>): string {
  const content = (doc as Record<string, unknown>).content
  return typeof content === 'string' ? content : JSON.stringify(A.toJS(doc))
}

export function diffDocs(a: Uint8Array, b: Uint8Array) {
  return diffStrings(withFree(docFromState(a), flatten), withFree(docFromState(b), flatten))
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function sameJson(a: unknown, b: unknown) {
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * Makes the map `live` (inside a change) hold `target` with new operations:
 * texts are spliced where they differ (`updateText`), maps patched key by
 * key, anything else replaced where it differs, keys absent from `target`
 * deleted. Content a later change deleted comes back as new content.
 */
export function restoreInto(live: Record<string, any>, target: Record<string, unknown>) {
  for (const key of Object.keys(live)) {
    if (!Object.hasOwn(target, key)) {
      delete live[key]
    }
  }
  for (const [key, value] of Object.entries(target)) {
    const current = live[key]
    if (typeof value === 'string' && typeof current === 'string') {
      if (current !== value) {
        A.updateText(live as A.Doc<unknown>, [key], value)
      }
    } else if (isPlainObject(value) && isPlainObject(current)) {
      restoreInto(current, value)
    } else if (!sameJson(current, value)) {
      live[key] = value
    }
  }
}

/**
 * A read-only peer's sync message with its changes taken out. Its heads are
 * replaced by heads the server has (the peer's last sync point), so the
 * server neither asks for the changes it dropped nor answers forever: the
 * peer keeps receiving every change, and nothing it wrote reaches anyone.
 */
export function withoutChanges(doc: A.Doc<unknown>, data: Uint8Array): Uint8Array {
  const message = A.decodeSyncMessage(data)
  if (message.changes.length === 0 && A.hasHeads(doc, message.heads)) {
    return data
  }
  let heads = message.heads
  if (!A.hasHeads(doc, heads)) {
    const lastSync = message.have[0]?.lastSync ?? []
    heads = lastSync.filter((hash) => A.hasHeads(doc, [hash]))
  }
  return A.encodeSyncMessage({ ...message, heads, changes: [] })
}
