import * as A from '@automerge/automerge'
import { Repo, type DocHandle, type PeerId } from '@automerge/automerge-repo'
import { WebSocketClientAdapter } from '@automerge/automerge-repo-network-websocket'
import { getActiveTest } from '@japa/runner'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'
import type { CollaborationStorage } from '../../src/collaboration/types.ts'
import { tokenFor } from './helpers.ts'

let clients = 0

/**
 * An unmodified automerge-repo client: a `Repo` with the WebSocket client
 * adapter on the document's URL (token in the query), shut down when the
 * test ends.
 */
export function connectRepo(wsBase: string, docName: string, token = tokenFor(docName)) {
  const path = docName.split('/').map(encodeURIComponent).join('/')
  return connectRepoTo(`${wsBase}/${path}`, token, automergeDocumentId(docName))
}

/**
 * A client on a document's WebSocket URL (as `GET /token` gives it).
 */
export function connectRepoTo(wsUrl: string, token: string, documentId?: string) {
  const adapter = new WebSocketClientAdapter(`${wsUrl}?token=${token}`, 100)
  // an automerge-repo client that has heard no server after one second finds
  // documents unavailable: on a loaded machine, wait for the server first
  const connected = new Promise<void>((resolve) => adapter.once('peer-candidate', () => resolve()))
  const repo = new Repo({
    network: [adapter],
    peerId: `client-${++clients}` as PeerId,
  })
  let closed = false
  const close = async () => {
    if (!closed) {
      closed = true
      stopRetrying({ adapter })
      await repo.shutdown().catch(() => {})
    }
  }
  getActiveTest()?.cleanup(close)
  return { repo, adapter, close, documentId, connected }
}

/**
 * Connects a client and waits for the document the server serves.
 */
export async function openDoc<T = any>(wsBase: string, docName: string, token?: string) {
  const client = connectRepo(wsBase, docName, token)
  await client.connected
  const handle = await client.repo.find<T>(client.documentId as any)
  return { ...client, handle }
}

/** No reconnection once the server is gone on purpose */
export function stopRetrying(client: { adapter: WebSocketClientAdapter }) {
  // a reconnection timer already armed then finds nothing to do
  Object.assign(client.adapter, { retryInterval: 0, connect: () => {} })
}

/** The JSON of a handle's document */
export function contentOf(handle: DocHandle<any>) {
  return A.toJS(handle.doc()) as Record<string, any>
}

/** The document a storage holds for a name (state plus update log), or null */
export async function storedDoc(storage: CollaborationStorage, docName: string) {
  const stored = await storage.loadDocument(docName)
  if (!stored) {
    return null
  }
  let doc = A.init<Record<string, any>>()
  for (const part of [stored.state, ...(stored.updates ?? [])]) {
    if (part.byteLength) {
      doc = A.loadIncremental(doc, part)
    }
  }
  return A.toJS(doc)
}
