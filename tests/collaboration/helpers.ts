import * as Y from 'yjs'
import { WebSocket } from 'ws'
import { WebsocketProvider } from 'y-websocket'
import { getActiveTest } from '@japa/runner'
import type { ApplicationService } from '@adonisjs/core/types'
import { setupApp } from '../helpers.ts'
import { defineConfig } from '../../src/collaboration/define_config.ts'
import { signCollabToken } from '../../src/collaboration/tokens.ts'
import type {
  CollaborationConfigInput,
  CollaborationStorage,
} from '../../src/collaboration/types.ts'
import type { CollaborationManager } from '../../src/collaboration/manager.ts'

// y-websocket's Node client adds a process "exit" listener per provider; tests open up to 20 at once
process.setMaxListeners(50)

export const SECRET = 'collab-test-secret'

export const allow = { canRead: true, canWrite: true, canComment: true }

/**
 * Boots an app with the collaboration provider on a real HTTP server.
 */
export async function setupCollabApp(
  config: CollaborationConfigInput<any> = {},
  options: { database?: boolean; bindings?: Record<string, unknown> } = {}
) {
  const bindings = options.bindings ?? {}
  const testApp = await setupApp({
    providers: [
      // values the app's own providers would bind (an @adonisjs/redis manager)
      async () => ({
        default: class {
          constructor(protected app: ApplicationService) {}
          register() {
            for (const [key, value] of Object.entries(bindings)) {
              this.app.container.bindValue(key as any, value as any)
            }
          }
        },
      }),
      () => import('./fixtures/exception_handler_provider.ts'),
      () => import('../../providers/collaboration_provider.ts'),
    ],
    database: options.database,
    config: {
      collaboration: defineConfig({
        tokenSecret: SECRET,
        debounce: 100,
        authorize: () => allow,
        ...config,
      }),
    },
  })
  const manager = (await testApp.app.container.make('atrium.collaboration')) as CollaborationManager
  return { ...testApp, manager, wsBase: `${testApp.url.replace('http', 'ws')}/collaboration` }
}

export function tokenFor(
  docName: string,
  userId = 'u1',
  options: { secret?: string; ttl?: number; name?: string } = {}
) {
  return signCollabToken(
    { userId, docName, ...(options.name ? { user: { name: options.name } } : {}) },
    options.secret ?? SECRET,
    options.ttl
  )
}

/**
 * A real y-websocket client, destroyed when the test ends. `headers` go on
 * its upgrade requests (what a client could add to its own handshake).
 */
export function connectClient(
  wsBase: string,
  docName: string,
  token = tokenFor(docName),
  options: { headers?: Record<string, string> } = {}
) {
  const doc = new Y.Doc()
  const headers = options.headers
  const provider = new WebsocketProvider(wsBase, docName, doc, {
    WebSocketPolyfill: headers
      ? (class extends WebSocket {
          constructor(url: string, protocols?: string | string[]) {
            super(url, protocols, { headers })
          }
        } as any)
      : (WebSocket as any),
    params: { token },
    disableBc: true,
    maxBackoffTime: 200,
  })
  getActiveTest()?.cleanup(() => {
    provider.destroy()
    doc.destroy()
  })
  const synced = new Promise<void>((resolve) => {
    if (provider.synced) {
      resolve()
    }
    provider.on('sync', (isSynced: boolean) => isSynced && resolve())
  })
  return { doc, provider, synced, text: doc.getText('content') }
}

/**
 * Opens a raw socket and resolves with its close code and reason.
 */
export function closeOf(url: string): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url)
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }))
    socket.on('error', reject)
  })
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeout = 5000,
  what = 'condition'
) {
  const start = Date.now()
  while (!(await check())) {
    if (Date.now() - start > timeout) {
      throw new Error(`Timed out waiting for ${what}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The text stored for a document (state plus update log).
 */
export async function storedText(storage: CollaborationStorage, docName: string, root = 'content') {
  const stored = await storage.loadDocument(docName)
  if (!stored) {
    return null
  }
  const doc = new Y.Doc()
  if (stored.state.byteLength) {
    Y.applyUpdate(doc, stored.state)
  }
  for (const update of stored.updates ?? []) {
    Y.applyUpdate(doc, update)
  }
  return doc.getText(root).toString()
}

/**
 * A storage wrapper without the update log, so only debounced saves write.
 */
export function withoutLog(storage: CollaborationStorage): CollaborationStorage {
  return {
    loadDocument: (name) => storage.loadDocument(name),
    saveDocument: (name, state) => storage.saveDocument(name, state),
    listVersions: (name, page) => storage.listVersions(name, page),
    saveVersion: (name, version, snapshot) => storage.saveVersion(name, version, snapshot),
    loadVersionSnapshot: (name, id) => storage.loadVersionSnapshot(name, id),
    pruneVersions: (options) => storage.pruneVersions(options),
    listComments: (name, space, page) => storage.listComments(name, space, page),
    saveComment: (name, comment) => storage.saveComment(name, comment),
    deleteComment: (name, id) => storage.deleteComment(name, id),
  }
}
