import { assertCollaborationPackages } from '../../boot.ts'
import type { CollabEngine, CollabEngineHost } from '../engine.ts'

/** The optional packages the Automerge engine loads */
export const AUTOMERGE_PACKAGES = ['@automerge/automerge-repo', '@automerge/automerge']

/**
 * Builds the Automerge engine once its packages are known to be installed:
 * a missing one is one line naming `npm install <packages>`.
 */
export async function createAutomergeEngine(host: CollabEngineHost): Promise<CollabEngine> {
  assertCollaborationPackages(AUTOMERGE_PACKAGES)
  const { AutomergeEngine } = await import('./engine.ts')
  return new AutomergeEngine(host)
}
