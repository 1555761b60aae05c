import { reportCollaborationError } from '../../observability.ts'
import type { CollabEngineHost } from '../engine.ts'
import { genesisState, mergeChunks, seedState } from './content.ts'

/**
 * The bytes a never-stored document starts from: the declaration's seed,
 * else the same empty first change everywhere. Persisted before anyone is
 * served, so a seed runs once per document.
 */
export async function initialState(host: CollabEngineHost, docName: string): Promise<Uint8Array> {
  let state: Uint8Array | null = null
  try {
    state = seedState(await host.seed(docName))
  } catch (error) {
    reportCollaborationError({ scope: 'storage', operation: 'load', docName, error })
  }
  state ??= genesisState(docName)
  const storage = host.storage
  try {
    // another instance may have created and changed it since this one read nothing
    await (host.cluster && storage.compactDocument
      ? storage.compactDocument(docName, state, mergeChunks)
      : storage.saveDocument(docName, state))
  } catch (error) {
    reportCollaborationError({ scope: 'storage', operation: 'saveDocument', docName, error })
  }
  return state
}
