import type * as Y from 'yjs'
import { COLLAB_DOC_ORIGIN, type CollabDoc } from './collab_doc.ts'

/**
 * One editor's view of a document: read its state, write a new one (only
 * the difference reaches the document), observe remote changes.
 */
export interface EditorBinding<S> {
  read(): S
  write(next: S): void
  observe(callback: () => void): () => void
}

/** How an editor's state maps onto a Yjs document (`useCollabEditor`) */
export interface EditorAdapter<S> {
  empty(): S
  create(doc: CollabDoc, editorId: string): EditorBinding<S>
}

function observeDeep(type: Y.AbstractType<any>, callback: () => void) {
  const observer = () => callback()
  type.observeDeep(observer)
  return () => type.unobserveDeep(observer)
}

/**
 * Plain text in a `Y.Text` named after the editor. A write replaces only
 * the changed middle (common prefix and suffix kept), so concurrent edits
 * at different places both survive.
 */
export function createTextAdapter(): EditorAdapter<string> {
  return {
    empty: () => '',
    create(doc, editorId) {
      const text = doc.doc.getText(editorId)
      return {
        read: () => text.toString(),
        write(next) {
          const current = text.toString()
          if (current === next) return
          let start = 0
          const shortest = Math.min(current.length, next.length)
          while (start < shortest && current[start] === next[start]) start++
          let end = 0
          while (
            end < shortest - start &&
            current[current.length - 1 - end] === next[next.length - 1 - end]
          ) {
            end++
          }
          doc.doc.transact(() => {
            text.delete(start, current.length - start - end)
            text.insert(start, next.slice(start, next.length - end))
          }, COLLAB_DOC_ORIGIN)
        },
        observe: (callback) => observeDeep(text, callback),
      }
    },
  }
}

/** The fields of an Excalidraw element the adapter reads; the rest is carried as is */
export interface ExcalidrawElementLike {
  id: string
  version?: number
  versionNonce?: number
  index?: string | null
  isDeleted?: boolean
  [key: string]: unknown
}

/** Excalidraw's own rule: the higher version wins, a tie goes to the lower nonce */
function newer(candidate: ExcalidrawElementLike, stored: ExcalidrawElementLike | undefined) {
  if (!stored) return true
  const a = candidate.version ?? 0
  const b = stored.version ?? 0
  if (a !== b) return a > b
  return (candidate.versionNonce ?? 0) < (stored.versionNonce ?? 0)
}

/**
 * Excalidraw scenes: each element is one entry of a `Y.Map` keyed by its
 * id, merged by Excalidraw's version rule, so two users drawing different
 * shapes never overwrite each other. Deletions travel as Excalidraw's own
 * `isDeleted` tombstones. Excalidraw itself is not imported: pass the
 * elements the app gets from its `onChange`.
 */
export function createExcalidrawAdapter(): EditorAdapter<ExcalidrawElementLike[]> {
  return {
    empty: () => [],
    create(doc, editorId) {
      const elements = doc.doc.getMap<ExcalidrawElementLike>(editorId)
      return {
        read: () =>
          [...elements.values()].sort((a, b) => {
            const left = a.index ?? ''
            const right = b.index ?? ''
            return left === right ? (a.id < b.id ? -1 : 1) : left < right ? -1 : 1
          }),
        write(next) {
          doc.doc.transact(() => {
            for (const element of next) {
              if (newer(element, elements.get(element.id))) {
                elements.set(element.id, JSON.parse(JSON.stringify(element)))
              }
            }
          }, COLLAB_DOC_ORIGIN)
        },
        observe: (callback) => observeDeep(elements, callback),
      }
    },
  }
}

/** tldraw records by id (`editor.store.getStoreSnapshot('document').store`) */
export type TldrawRecords = Record<string, { id: string; [key: string]: unknown }>

/**
 * tldraw documents: each store record is one entry of a `Y.Map` keyed by
 * its id; a write sets the records that changed and removes those gone.
 * tldraw itself is not imported: pass the records from its store.
 */
export function createTldrawAdapter(): EditorAdapter<TldrawRecords> {
  return {
    empty: () => ({}),
    create(doc, editorId) {
      const records = doc.doc.getMap<TldrawRecords[string]>(editorId)
      return {
        read: () => Object.fromEntries(records.entries()),
        write(next) {
          doc.doc.transact(() => {
            for (const id of [...records.keys()]) {
              if (!(id in next)) records.delete(id)
            }
            for (const [id, record] of Object.entries(next)) {
              const stored = records.get(id)
              if (!stored || JSON.stringify(stored) !== JSON.stringify(record)) {
                records.set(id, JSON.parse(JSON.stringify(record)))
              }
            }
          }, COLLAB_DOC_ORIGIN)
        },
        observe: (callback) => observeDeep(records, callback),
      }
    },
  }
}

/** The spec's name of the Excalidraw adapter */
export const createCanvasAdapterA = createExcalidrawAdapter
/** The spec's name of the tldraw adapter */
export const createCanvasAdapterB = createTldrawAdapter

/** The part of Excalidraw's imperative API scene sync needs */
export interface ExcalidrawApiLike {
  getSceneElements(): readonly ExcalidrawElementLike[]
  updateScene(scene: { elements: readonly ExcalidrawElementLike[] }): void
  onChange(
    callback: (elements: readonly ExcalidrawElementLike[], ...rest: any[]) => void
  ): () => void
}

/**
 * Keeps an Excalidraw canvas and one document key in sync: the scene is
 * last-write-wins on that key. Returns the function that stops it.
 */
export function bindExcalidrawScene(
  doc: CollabDoc,
  api: ExcalidrawApiLike,
  editorId = 'excalidraw'
): () => void {
  let lastWritten = ''
  const fingerprint = (elements: readonly ExcalidrawElementLike[]) =>
    elements.map((element) => `${element.id}:${element.version ?? 0}`).join(',')
  const apply = () => {
    const scene = doc.read<{ elements: ExcalidrawElementLike[] }>(editorId)
    if (!scene?.elements) return
    lastWritten = fingerprint(scene.elements)
    if (fingerprint(api.getSceneElements()) !== lastWritten) {
      api.updateScene({ elements: scene.elements })
    }
  }
  apply()
  const stopRemote = doc.onUpdate((keys, local) => {
    if (!local && keys.includes(editorId)) apply()
  })
  const stopLocal = api.onChange((elements) => {
    const next = fingerprint(elements)
    if (next === lastWritten) return
    lastWritten = next
    doc.write(editorId, { elements: JSON.parse(JSON.stringify(elements)) })
  })
  return () => {
    stopRemote()
    stopLocal()
  }
}
