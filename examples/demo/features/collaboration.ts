import type { DemoFeature } from './main.ts'
import { escapeHtml, layout } from './layout.ts'
import { importMap, readModule } from './browser_modules.ts'
import { streamChanges } from './collaboration_changes.ts'

const ASSETS = '/collaboration-demo/modules/'

/**
 * Script of the page: a textarea bound to a Y.Text through y-websocket,
 * peers from awareness, and comments and versions through the REST routes,
 * reloaded when the server announces a change.
 * Each connection gets a fresh token: a token is checked when a socket opens
 * and lives 300 s, and y-websocket gives up after a 44xx close.
 */
/** JSON safe inside a <script> element (no `</script>` can close it early) */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')

const script = (user: string, docName: string, wsBase: string) => `
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'

const user = ${scriptJson(user)}
const docName = ${scriptJson(docName)}
const freshToken = async () => {
  const response = await fetch('/collaboration/token?doc=' + encodeURIComponent(docName), {
    headers: { 'x-demo-user': user },
  })
  return (await response.json()).token
}
// every value another client or the server sent is escaped before it meets innerHTML
const escape = (value) => String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])
const pad = (n) => String(n).padStart(2, '0')
const formatDate = (value) => {
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) return ''
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds())
}
const doc = new Y.Doc()
const provider = new WebsocketProvider(${scriptJson(wsBase)}, docName, doc, {
  params: { token: await freshToken() },
})
provider.on('connection-close', async () => {
  provider.params.token = await freshToken()
})
const text = doc.getText('content')
const area = document.querySelector('#editor')
const status = document.querySelector('#status')
const colors = ['#e8590c', '#2f9e44', '#1971c2', '#9c36b5', '#c2255c']
provider.awareness.setLocalStateField('user', { name: user, color: colors[user.length % colors.length] })
provider.on('status', ({ status: value }) => (status.textContent = value))
provider.on('sync', (synced) => synced && (area.disabled = false))

area.addEventListener('input', () => {
  const before = text.toString()
  const after = area.value
  let start = 0
  while (start < before.length && start < after.length && before[start] === after[start]) start++
  let end = 0
  while (end < before.length - start && end < after.length - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]) end++
  doc.transact(() => {
    if (before.length - start - end > 0) text.delete(start, before.length - start - end)
    if (after.length - start - end > 0) text.insert(start, after.slice(start, after.length - end))
  }, 'local')
})
text.observe((event, transaction) => {
  if (transaction.origin === 'local') return
  const { selectionStart, selectionEnd } = area
  const shift = (position) => {
    let index = 0
    let result = position
    for (const change of event.delta) {
      if (change.retain) index += change.retain
      else if (change.insert) { if (index < position) result += change.insert.length; index += change.insert.length }
      else if (change.delete) { if (index < position) result -= Math.min(change.delete, position - index) }
    }
    return result
  }
  area.value = text.toString()
  area.setSelectionRange(shift(selectionStart), shift(selectionEnd))
})

const renderPeers = () => {
  const peers = [...provider.awareness.getStates().values()].map((state) => state.user).filter(Boolean)
  document.querySelector('#peers').innerHTML = peers
    .map((peer) => '<span class="peer" style="background:' +
      (/^#[0-9a-f]{6}$/i.test(peer.color) ? peer.color : '#868e96') + '">' + escape(peer.name) + '</span>')
    .join(' ')
}
provider.awareness.on('change', renderPeers)
renderPeers()

const api = async (method, path, body) => {
  const response = await fetch('/collaboration' + path, {
    method,
    headers: { 'x-demo-user': user, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  if (!response.ok) throw new Error((await response.json()).errors?.[0]?.message ?? response.status)
  return response.status === 204 ? null : response.json()
}

async function loadComments() {
  const comments = await api('GET', '/comments?doc=' + encodeURIComponent(docName))
  document.querySelector('#comments').innerHTML = comments.map((c) =>
    '<li class="' + (c.resolvedAt ? 'resolved' : '') + '"><b>' + escape(c.authorName ?? c.userId) + '</b> on “' +
    escape(c.anchor.selectedText ?? '') + '”: ' + escape(c.body) +
    ' <button class="secondary" data-resolve="' + escape(c.id) + '" data-state="' + (c.resolvedAt ? 'false' : 'true') + '">' +
    (c.resolvedAt ? 'Reopen' : 'Resolve') + '</button></li>').join('')
}
document.querySelector('#comment-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const body = event.target.body.value.trim()
  if (!body) return
  const start = area.selectionStart
  const end = Math.max(area.selectionEnd, start)
  await api('POST', '/comments', { docName, space: 'main', body,
    anchor: { kind: 'text-range', start, end, selectedText: area.value.slice(start, end) } })
  event.target.reset()
  loadComments()
})
document.querySelector('#comments').addEventListener('click', async (event) => {
  const id = event.target.dataset?.resolve
  if (!id) return
  await api('PATCH', '/comments/' + id + '?doc=' + encodeURIComponent(docName), { resolved: event.target.dataset.state === 'true' })
  loadComments()
})

async function loadVersions() {
  const versions = await api('GET', '/versions?doc=' + encodeURIComponent(docName))
  document.querySelector('#versions').innerHTML = versions.map((v) =>
    '<li>#' + escape(v.seq) + ' ' + escape(v.label ?? '') + ' <small class="muted">' + formatDate(v.createdAt) +
    ' by ' + escape(v.createdBy ?? '?') + '</small> <button class="secondary" data-restore="' + escape(v.id) + '">Restore</button></li>').join('')
}
document.querySelector('#version-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  await api('POST', '/versions', { docName, label: event.target.label.value || null })
  event.target.reset()
  loadVersions()
})
document.querySelector('#versions').addEventListener('click', async (event) => {
  const versionId = event.target.dataset?.restore
  if (!versionId) return
  await api('POST', '/versions/restore', { docName, versionId })
  loadVersions()
})
// the server tells this page when another one changes comments or versions
const changes = new EventSource('/collaboration-demo/changes?doc=' + encodeURIComponent(docName))
changes.onmessage = ({ data }) => (data === 'comments' ? loadComments() : loadVersions())
loadComments()
loadVersions()
`

/**
 * Collaborative editing: open the page in two windows (as two users).
 */
export const collaboration: DemoFeature = {
  title: 'Collaboration',
  description: 'Edit one document live from two windows, with presence, comments and versions.',
  path: '/collaboration-demo',
  routes(router) {
    router.get('/collaboration-demo/modules/*', async ({ params, response }) => {
      const source = await readModule((params['*'] as string[]).join('/'))
      if (source === null) {
        return response.notFound('Unknown module')
      }
      response.header('content-type', 'text/javascript; charset=utf-8')
      return source
    })

    router.get('/collaboration-demo/changes', streamChanges)

    router.get('/collaboration-demo', async ({ request, response }) => {
      const user =
        String(request.qs().user ?? 'alice')
          .replace(/[^\w-]/g, '')
          .slice(0, 20) || 'alice'
      const docName = 'demo/notes'
      const wsBase = `${request.protocol() === 'https' ? 'wss' : 'ws'}://${request.host()}/collaboration`
      const map = await importMap(['yjs', 'y-websocket'], ASSETS)
      const other = user === 'alice' ? 'bob' : 'alice'
      response.header('content-type', 'text/html; charset=utf-8')
      return layout(
        'Collaboration',
        `<p>You are <strong>${escapeHtml(user)}</strong>. Open <a href="/collaboration-demo?user=${escapeHtml(other)}" target="_blank">this page as ${escapeHtml(other)}</a>
        in a second window and type in either: the text, the people present, comments and versions follow.</p>
        <p>Status: <code id="status">connecting</code> · Present: <span id="peers"></span></p>
        <textarea id="editor" rows="12" disabled placeholder="Loading the document…"></textarea>
        <div class="columns">
          <section><h2>Comments</h2>
            <form id="comment-form"><input name="body" placeholder="Comment on the selected text"> <button>Add</button></form>
            <ul id="comments"></ul></section>
          <section><h2>Versions</h2>
            <form id="version-form"><input name="label" placeholder="Version label"> <button>Save version</button></form>
            <ul id="versions"></ul></section>
        </div>
        <script type="module">${script(user, docName, wsBase)}</script>`,
        `<script type="importmap">${scriptJson({ imports: map })}</script>`,
        '/collaboration-demo'
      )
    })
  },
}
