/**
 * One Automerge sync server in its own process: `atrium` (the collaboration
 * manager with the Automerge engine) or `automerge-repo` (the reference sync
 * server: a Repo with the WebSocket server adapter, no Atrium). Both repos
 * have a storage that keeps nothing, so both compute the saves a real server
 * makes and neither pays for a disk. Prints PORT=<n>; answers IPC `stats`
 * (memory after a collection) and `cpu` (process CPU time so far).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const kind = process.argv[2]
const server = createServer((_request, response) => response.end('ok'))
// every byte this server sends, closed sockets included: what its clients must read
const sockets = new Set<import('node:net').Socket>()
let bytesOfClosed = 0
server.on('connection', (socket) => {
  sockets.add(socket)
  socket.on('close', () => {
    sockets.delete(socket)
    bytesOfClosed += socket.bytesWritten
  })
})
const bytesSent = () =>
  [...sockets].reduce((sum, socket) => sum + socket.bytesWritten, bytesOfClosed)
let openDocuments: () => number = () => -1

if (kind === 'atrium') {
  const { normalizeConfig } = await import('../../../src/collaboration/define_config.ts')
  const { CollaborationManager } = await import('../../../src/collaboration/manager.ts')
  const manager = await CollaborationManager.create(
    normalizeConfig({
      engine: 'automerge',
      tokenSecret: 'bench-secret',
      storage: {
        loadDocument: async () => null,
        saveDocument: async () => {},
        appendUpdate: async () => {},
        compactDocument: async () => {},
        listVersions: async () => [],
        saveVersion: async () => {},
        loadVersionSnapshot: async () => null,
        pruneVersions: async () => 0,
        listComments: async () => [],
        saveComment: async () => {},
        deleteComment: async () => {},
      },
      authorize: () => ({ canRead: true, canWrite: true, canComment: true }),
    })
  )
  manager.attach(server)
  openDocuments = () => manager.openDocuments().length
} else if (kind === 'automerge-repo') {
  const { Repo } = await import('@automerge/automerge-repo')
  const { WebSocketServerAdapter } = await import('@automerge/automerge-repo-network-websocket')
  const { WebSocketServer } = await import('ws')
  const wss = new WebSocketServer({ noServer: true })
  server.on('upgrade', (request, socket, head) =>
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request))
  )
  const repo = new Repo({
    network: [new WebSocketServerAdapter(wss as any)],
    storage: {
      load: async () => undefined,
      save: async () => {},
      remove: async () => {},
      loadRange: async () => [],
      removeRange: async () => {},
    },
    // the reference sync server shares nothing unasked
    sharePolicy: async () => false,
  })
  openDocuments = () => Object.keys(repo.handles).length
} else {
  throw new Error(`Unknown server kind "${kind}"`)
}

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT=${(server.address() as AddressInfo).port}\n`)
})

process.on('message', (message: any) => {
  if (message?.cmd === 'cpu') {
    // no collection first: this reads the work done so far, and a GC would add to it
    const { user, system } = process.cpuUsage()
    process.send!({ id: message.id, cpuMicros: user + system, bytesSent: bytesSent() })
    return
  }
  if (message?.cmd === 'stats') {
    for (let index = 0; index < 3; index++) {
      global.gc?.()
    }
    const memory = process.memoryUsage()
    process.send!({
      id: message.id,
      heapUsed: memory.heapUsed,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      openDocuments: openDocuments(),
    })
  }
})
