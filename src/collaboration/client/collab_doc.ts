import type * as Y from 'yjs'

/** Transaction origin of `CollabDoc.write`, so observers can tell local writes */
export const COLLAB_DOC_ORIGIN = Symbol.for('atrium:collab-doc')

/**
 * Key-value access to a Yjs document: each key is a root shared map entry
 * (the map `state`), last write wins per key. Editors with richer
 * structures use the document itself (`collabDoc.doc`).
 */
export class CollabDoc {
  readonly doc: Y.Doc
  readonly map: Y.Map<unknown>

  constructor(doc: Y.Doc, mapName = 'state') {
    this.doc = doc
    this.map = doc.getMap(mapName)
  }

  read<T = unknown>(key: string): T | undefined {
    return this.map.get(key) as T | undefined
  }

  write(key: string, value: unknown) {
    this.doc.transact(() => this.map.set(key, value), COLLAB_DOC_ORIGIN)
  }

  /**
   * Calls `callback` with the changed keys after each change, local or
   * remote (`local` tells which). Returns an unsubscribe.
   */
  onUpdate(callback: (keys: string[], local: boolean) => void): () => void {
    const observer = (event: Y.YMapEvent<unknown>, transaction: Y.Transaction) =>
      callback([...event.keysChanged], transaction.origin === COLLAB_DOC_ORIGIN)
    this.map.observe(observer)
    return () => this.map.unobserve(observer)
  }
}
