import { useCallback } from 'react'
import { createVersion, listVersions, restoreVersion } from '../client/rest.ts'
import type { CollabVersion } from '../client/types.ts'
import { useCollabClient } from './context.ts'
import { useRemoteList } from './use_remote_list.ts'

/**
 * Named versions of a document (first page of 200): `create(label?)`
 * snapshots it, `restore(versionId)` writes that content into the live
 * document (every connected client sees it).
 */
export function useVersions({ docName }: { docName: string }) {
  const { config } = useCollabClient()
  const list = useRemoteList<CollabVersion>(docName, () =>
    listVersions(config, docName, { size: 200 })
  )
  const { mutate } = list
  const create = useCallback(
    (label?: string) => mutate(() => createVersion(config, docName, label)),
    [config, docName, mutate]
  )
  const restore = useCallback(
    (versionId: string) => mutate(() => restoreVersion(config, docName, versionId)),
    [config, docName, mutate]
  )
  return {
    versions: list.items,
    loading: list.loading,
    error: list.error,
    refresh: list.refresh,
    create,
    restore,
  }
}
