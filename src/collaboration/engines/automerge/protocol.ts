/**
 * What the server reads of the automerge-repo WebSocket protocol's
 * messages, checked before anything reaches the server's repo.
 */
import type { PeerMetadata } from '@automerge/automerge-repo'

/** The only version of the automerge-repo WebSocket protocol */
export const PROTOCOL_V1 = '1'
/** The envelope key of automerge-repo's presence messages */
export const PRESENCE_MARKER = '__presence'
/** Longest peer id or storage id a client may present */
const MAX_ID_LENGTH = 128

export function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength > 0
}

export function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH
}

/**
 * What a client may say about itself: a storage id and whether it is
 * ephemeral, nothing else.
 */
export function peerMetadataOf(value: unknown): PeerMetadata {
  const metadata: PeerMetadata = {}
  if (value && typeof value === 'object') {
    const { storageId, isEphemeral } = value as Record<string, unknown>
    if (isId(storageId)) {
      metadata.storageId = storageId as PeerMetadata['storageId']
    }
    if (typeof isEphemeral === 'boolean') {
      metadata.isEphemeral = isEphemeral
    }
  }
  return metadata
}
