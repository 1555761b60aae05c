import { CollabConfigError, CollabRoomError } from './errors.ts'
import type { CollabEngineName, CollaborationConfig } from './types.ts'

/** PartyKit and PartyServer documents live in a room worker, not in this app */
export function isHostedEngine(engine: CollabEngineName) {
  return engine === 'partykit' || engine === 'partyserver'
}

/** The room's HTTP URL: `roomHost` with `ws`/`wss` read as `http`/`https` (https by default) */
export function roomHttpUrl(
  hosted: NonNullable<CollaborationConfig['hosted']>,
  docName: string
): string {
  const host = hosted.roomHost.replace(/\/+$/, '')
  const base = /^wss?:\/\//.test(host)
    ? host.replace(/^ws/, 'http')
    : /^https?:\/\//.test(host)
      ? host
      : `https://${host}`
  return `${base}/parties/${hosted.party}/${encodeURIComponent(docName)}`
}

/** The hosted block, when it has the secret the room worker checks pushed states with */
export function assertCanPushToRoom(config: Pick<CollaborationConfig, 'hosted'>) {
  const hosted = config.hosted
  if (!hosted?.workerSecret) {
    throw new CollabConfigError(
      'Restoring a version of a hosted document needs "hosted.workerSecret" in config/collaboration.ts: the room worker only takes states sent with it'
    )
  }
  return { ...hosted, workerSecret: hosted.workerSecret }
}

/**
 * Sends a document state to its room, which merges it and sends the
 * difference to every open editor (a restored version is new changes the
 * room has not seen). Authenticated by `hosted.workerSecret`.
 */
export async function pushStateToRoom(
  config: Pick<CollaborationConfig, 'hosted'>,
  docName: string,
  state: Uint8Array
) {
  const hosted = assertCanPushToRoom(config)
  let status: number
  try {
    const response = await fetch(roomHttpUrl(hosted, docName), {
      method: 'POST',
      headers: {
        'x-collab-worker-secret': hosted.workerSecret,
        'content-type': 'application/octet-stream',
      },
      // a copy on its own ArrayBuffer, the body type fetch accepts
      body: new Uint8Array(state),
      signal: AbortSignal.timeout(hosted.fetchTimeoutMs),
    })
    status = response.status
    await response.body?.cancel()
  } catch (error: any) {
    throw new CollabRoomError(
      `The room worker of "${docName}" could not be reached (${error?.name ?? 'Error'}): the restored version is stored and shows when the room next loads`
    )
  }
  if (status < 200 || status >= 300) {
    throw new CollabRoomError(
      `The room worker of "${docName}" answered ${status}: the restored version is stored and shows when the room next loads (is the worker's COLLAB_WORKER_SECRET the app's hosted.workerSecret, and the worker scaffold current?)`
    )
  }
}
