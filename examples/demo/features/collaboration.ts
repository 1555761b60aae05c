import type { DemoFeature } from './main.ts'
import { escapeHtml, layout } from './layout.ts'
import { streamChanges } from './collaboration_changes.ts'
import { entryTags, sendBuiltFile, sendExcalidrawFont } from './collaboration_assets.ts'

/**
 * Collaborative editing: open the page in two windows (as two users). The
 * page is React (resources/collaboration, built by Vite) on Atrium's hooks:
 * notes on Yjs, a to-do list on Automerge and an Excalidraw canvas, each
 * with presence, comments and versions.
 */
export const collaboration: DemoFeature = {
  title: 'Collaboration',
  description:
    'Edit notes (Yjs), a to-do list (Automerge) and a canvas (Excalidraw) live from two windows, with presence, comments and versions.',
  path: '/collaboration-demo',
  routes(router) {
    router.get('/collaboration-demo/assets/*', sendBuiltFile)
    router.get('/collaboration-demo/excalidraw/fonts/*', sendExcalidrawFont)
    router.get('/collaboration-demo/changes', streamChanges)

    router.get('/collaboration-demo', async ({ request, response }) => {
      const user =
        String(request.qs().user ?? 'alice')
          .replace(/[^\w-]/g, '')
          .slice(0, 20) || 'alice'
      const other = user === 'alice' ? 'bob' : 'alice'
      const tags = await entryTags('page.tsx')
      response.header('content-type', 'text/html; charset=utf-8')
      return layout(
        'Collaboration',
        `<p>You are <strong>${escapeHtml(user)}</strong>. Open <a href="/collaboration-demo?user=${escapeHtml(other)}" target="_blank">this page as ${escapeHtml(other)}</a>
        in a second window and edit in either: the notes, the to-dos, the canvas, the people present, comments and versions follow.</p>
        ${
          tags
            ? `<div id="collaboration-root" data-user="${escapeHtml(user)}"><p class="muted">Loading…</p></div>`
            : '<p class="error">The page is not built: run <code>npm run build:demo</code> (or <code>npm run demo</code>, which builds it).</p>'
        }`,
        tags ?? '',
        '/collaboration-demo'
      )
    })
  },
}
