import type { WebSocket } from 'ws'
import type { SocketGuard } from '../../server/connection.ts'
import type { CollabSession } from '../engine.ts'
import type { YjsRoom } from './room.ts'

export interface Connection {
  socket: WebSocket
  guard: SocketGuard
  session: CollabSession
  room: YjsRoom
  readOnly: boolean
  /** Order of arrival in the room */
  seq: number
  /** Awareness client ids this connection owns (created on first use) */
  clients?: Set<number>
}

/** The connection a socket serves, kept on the socket so listeners need no closure */
const CONNECTION = Symbol('atrium:collab:connection')
type ServedSocket = WebSocket & { [CONNECTION]: Connection }

function onSocketMessage(this: WebSocket, data: Buffer) {
  const connection = (this as ServedSocket)[CONNECTION]
  if (connection.guard.admit()) {
    connection.room.receive(connection, data)
  }
}

function onSocketClose(this: WebSocket) {
  const connection = (this as ServedSocket)[CONNECTION]
  connection.room.leave(connection)
}

/** Routes the socket's messages and its close to the connection's room */
export function listen(socket: WebSocket, connection: Connection) {
  ;(socket as ServedSocket)[CONNECTION] = connection
  socket.on('message', onSocketMessage)
  socket.on('close', onSocketClose)
}
