/**
 * One Atrium instance of a multiInstance deployment in its own process:
 * documents shared through the local Redis under argv[2], file-system
 * storage under argv[3] (each instance its own: the benchmark reads no
 * stored state). argv[4] is the engine (`yjs` when absent). Prints PORT=<n>.
 */
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { normalizeConfig } from '../../../src/collaboration/define_config.ts'
import { CollaborationManager } from '../../../src/collaboration/manager.ts'
import { FileSystemStorage } from '../../../src/collaboration/storage/file_system.ts'

const [redisPrefix, directory, engine = 'yjs'] = process.argv.slice(2)
const manager = await CollaborationManager.create(
  normalizeConfig({
    engine: engine as 'yjs' | 'automerge',
    tokenSecret: 'bench-secret',
    storage: new FileSystemStorage(directory),
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisPrefix,
    multiInstance: true,
    authorize: () => ({ canRead: true, canWrite: true, canComment: true }),
  })
)
const server = createServer((_request, response) => response.end('ok'))
manager.attach(server)
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT=${(server.address() as AddressInfo).port}\n`)
})

/**
 * Phase tracing for the Automerge benchmark (`AUTOMERGE_TRACE=1`): `trace`
 * starts recording when each writer's value lands in this instance's copy
 * of a document and when the instance writes to the last `observers`
 * sockets opened (wall-clock ms), `traced` answers and clears the records.
 */
const landed: Array<[key: string, value: number, at: number]> = []
/** When this instance wrote to its observers' sockets (wall-clock ms), for the send phase */
const writes: number[] = []
const sockets: Socket[] = []
let observed = new Set<Socket>()
if (process.env.AUTOMERGE_TRACE === '1') {
  server.on('connection', (socket) => {
    sockets.push(socket)
    socket.once('close', () => sockets.splice(sockets.indexOf(socket), 1))
    const write = socket.write.bind(socket) as (...args: any[]) => boolean
    socket.write = (...args: any[]) => {
      if (observed.has(socket)) {
        writes.push(performance.timeOrigin + performance.now())
      }
      return write(...args)
    }
  })
}
process.on('message', async (message: any) => {
  if (message?.cmd === 'trace') {
    // the observers connect last: writes to writers' sockets are their sync replies
    observed = new Set(sockets.slice(-message.observers))
    await manager.withLiveDocument({
      docName: message.docName,
      run: (handle) =>
        handle.on('change', ({ patches }: { patches: any[] }) => {
          const at = performance.timeOrigin + performance.now()
          for (const patch of patches) {
            if (
              patch.action === 'put' &&
              patch.path.length === 1 &&
              typeof patch.value === 'number'
            ) {
              landed.push([patch.path[0], patch.value, at])
            }
          }
        }),
    })
    process.send!({ id: message.id })
  } else if (message?.cmd === 'traced') {
    process.send!({ id: message.id, landed: landed.splice(0), writes: writes.splice(0) })
  }
})
