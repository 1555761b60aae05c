/**
 * One collaboration server in its own process, so its CPU and memory are
 * measured alone: `atrium`, `y-websocket` (@y/websocket-server) or
 * `hocuspocus` (@hocuspocus/server). Prints PORT=<n>; answers IPC `stats`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

const kind = process.argv[2]
const server = createServer((_request, response) => response.end('ok'))
let openDocuments: () => number = () => -1
let listening: Server | undefined

if (kind === 'atrium') {
  const { normalizeConfig } = await import('../../../src/collaboration/define_config.ts')
  const { CollaborationManager } = await import('../../../src/collaboration/manager.ts')
  const { InMemoryCollaborationStorage } =
    await import('../../../src/collaboration/storage/memory.ts')
  const manager = await CollaborationManager.create(
    normalizeConfig({
      tokenSecret: 'bench-secret',
      // the memory scenario runs without storage, as the anchors keep none; the
      // others keep the in-memory storage and its update log, a conservative load
      storage:
        process.argv[3] === 'no-storage'
          ? {
              loadDocument: async () => null,
              saveDocument: async () => {},
              listVersions: async () => [],
              saveVersion: async () => {},
              loadVersionSnapshot: async () => null,
              pruneVersions: async () => 0,
              listComments: async () => [],
              saveComment: async () => {},
              deleteComment: async () => {},
            }
          : new InMemoryCollaborationStorage(),
      authorize: () => ({ canRead: true, canWrite: true, canComment: true }),
    })
  )
  manager.attach(server)
  openDocuments = () => manager.openDocuments().length
} else if (kind === 'y-websocket') {
  const { WebSocketServer } = await import('ws')
  const utils: any = await import('@y/websocket-server/utils')
  const wss = new WebSocketServer({ noServer: true })
  wss.on('connection', (socket, request) =>
    utils.setupWSConnection(socket, request, {
      docName: (request.url ?? '').slice('/collaboration/'.length).split('?')[0],
    })
  )
  server.on('upgrade', (request, socket, head) =>
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request))
  )
  openDocuments = () => utils.docs.size
} else if (kind === 'hocuspocus') {
  // its own server, as its docs set it up: `new Server(...)` then `listen()`,
  // default options (updates and awareness batched per event-loop turn)
  const { Server } = await import('@hocuspocus/server')
  const hocuspocus = new Server({
    port: 0,
    address: '127.0.0.1',
    quiet: true,
    stopOnSignals: false,
  })
  await hocuspocus.listen()
  openDocuments = () => hocuspocus.hocuspocus.getDocumentsCount()
  listening = hocuspocus.httpServer
} else {
  throw new Error(`Unknown server kind "${kind}"`)
}

if (listening) {
  process.stdout.write(`PORT=${(listening.address() as AddressInfo).port}\n`)
} else {
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`PORT=${(server.address() as AddressInfo).port}\n`)
  })
}

process.on('message', (message: any) => {
  if (message?.cmd === 'exit') {
    // a clean exit writes the CPU profile when run with --cpu-prof
    process.exit(0)
  }
  if (message?.cmd === 'stats') {
    for (let index = 0; index < 3; index++) {
      global.gc?.()
    }
    const memory = process.memoryUsage()
    process.send!({
      id: message.id,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      external: memory.external,
      cpu: process.cpuUsage(),
      openDocuments: openDocuments(),
    })
  }
})
