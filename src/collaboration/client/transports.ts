import type * as Y from 'yjs'
import { HostedCollabTransport, SelfHostedCollabTransport } from './yjs_transport.ts'
import type { CollabTokenInfo, CollabTransport, TransportContext } from './types.ts'

/**
 * The transport for the engine the token names: Yjs on the app's socket,
 * PartyKit and PartyServer rooms through their Yjs protocol. Automerge
 * documents need `createAutomergeTransport({ Repo, BrowserWebSocketClientAdapter })`
 * as `createTransport`, so that apps without Automerge never bundle it.
 */
export async function defaultTransportFactory(
  info: CollabTokenInfo,
  doc: Y.Doc,
  docName: string,
  context: TransportContext
): Promise<CollabTransport> {
  switch (info.engine ?? 'yjs') {
    case 'yjs':
      return new SelfHostedCollabTransport(info, doc, docName, context)
    case 'partykit':
    case 'partyserver':
      return new HostedCollabTransport(info, doc, docName, context)
    case 'automerge':
      throw new Error(
        `"${docName}" is an Automerge document: pass createAutomergeTransport({ Repo, BrowserWebSocketClientAdapter }) as createTransport`
      )
    default:
      throw new Error(`Unknown collaboration engine "${info.engine}"`)
  }
}
