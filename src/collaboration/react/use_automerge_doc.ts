import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react'
import { useDocSession } from './use_collab_doc.ts'

/**
 * What the hook needs of an automerge-repo `DocHandle` (the `doc` of an
 * Automerge transport).
 */
export interface AutomergeHandleLike<T> {
  doc(): T | undefined | Promise<T | undefined>
  docSync?(): T | undefined
  change(fn: (doc: T) => void): void
  on(event: 'change', listener: (...args: any[]) => void): unknown
  off(event: 'change', listener: (...args: any[]) => void): unknown
}

/**
 * The handle's document now: automerge-repo 2 answers `doc()` at once (and
 * deprecates `docSync()`); 1.x answers it with a promise, and `docSync()` then.
 * A deleted or unavailable document is null.
 */
function current<T>(handle: AutomergeHandleLike<T>): T | null {
  try {
    const value = handle.doc()
    if (!(value instanceof Promise)) return value ?? null
    value.catch(() => {})
    return handle.docSync?.() ?? null
  } catch {
    return null
  }
}

/**
 * An Automerge document: `doc` (null until loaded), `change(fn)`,
 * `status`, `synced`, and `pendingChanges` (local changes made since the
 * connection was last synced). Needs the Automerge transport as the
 * provider's `createTransport`.
 */
export function useAutomergeDoc<T>({ docName }: { docName: string }) {
  const { snapshot } = useDocSession(docName)
  const handle = (snapshot.transport?.doc ?? null) as AutomergeHandleLike<T> | null
  const value = useRef<T | null>(null)
  const [pendingChanges, setPendingChanges] = useState(0)

  const subscribe = useCallback(
    (listener: () => void) => {
      if (!handle) return () => {}
      const onChange = () => {
        value.current = current(handle)
        listener()
      }
      onChange()
      handle.on('change', onChange)
      return () => handle.off('change', onChange)
    },
    [handle]
  )
  const doc = useSyncExternalStore(subscribe, () => (handle ? value.current : null))

  useEffect(() => {
    if (snapshot.synced) setPendingChanges(0)
  }, [snapshot.synced])

  const change = useCallback(
    (fn: (doc: T) => void) => {
      if (!handle) throw new Error(`"${docName}" is not loaded yet`)
      handle.change(fn)
      if (!snapshot.synced) setPendingChanges((count) => count + 1)
    },
    [handle, docName, snapshot.synced]
  )

  return {
    doc,
    status: snapshot.status,
    synced: snapshot.synced,
    pendingChanges,
    error: snapshot.error,
    change,
  }
}

/** The spec's name of `useAutomergeDoc` */
export const useCrdtBDoc = useAutomergeDoc
