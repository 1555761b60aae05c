/**
 * One Atrium instance of a multiInstance deployment in its own process:
 * documents shared through the local Redis under argv[2], file-system
 * storage under argv[3] (each instance its own: the benchmark reads no
 * stored state). argv[4] is the engine (`yjs` when absent). Prints PORT=<n>.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
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
