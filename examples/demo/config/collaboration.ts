import env from '../start/env.ts'
import { defineConfig, relationalStorage } from 'adonis-atrium/collaboration'
import { announceWrites } from '../features/collaboration_changes.ts'

/**
 * The demo edits Yjs documents under "demo/:id" (the notes, the canvas) and
 * Automerge ones under "todos/:id" (the to-do list); anyone may read, write
 * and comment. The REST routes take the user from the x-demo-user header (the
 * demo has no login); the page fetches a token for each connection.
 */
export default defineConfig({
  documents: {
    'demo/:id': {
      authorize: () => ({ canRead: true, canWrite: true, canComment: true }),
    },
    'todos/:id': {
      engine: 'automerge',
      authorize: () => ({ canRead: true, canWrite: true, canComment: true }),
    },
  },
  storage: relationalStorage(),
  tokenSecret: env.get('COLLAB_TOKEN_SECRET'),
  routes: {
    // tells the open pages when comments or versions change
    middleware: [announceWrites],
    resolveUser: (ctx) => {
      const id = ctx.request.header('x-demo-user')
      return id ? { id, name: id } : null
    },
  },
})
