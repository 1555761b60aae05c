import type { HttpContext } from '@adonisjs/core/http'

/**
 * The interim dashboard: one server-rendered HTML shell with a small inline
 * script that calls the JSON API. It holds no data, so it is public unless the
 * host puts `ui.middleware` in front of it. No build step yet.
 */
export function renderShell(mountPath: string) {
  const api = JSON.stringify(`${mountPath}/api`)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;color:#1f2328}
header{padding:12px 16px;border-bottom:1px solid #d0d7de;display:flex;gap:12px;align-items:center}
nav button{margin-right:4px}
main{padding:16px}
table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;font-family:ui-monospace,monospace;font-size:12px}
tr:hover{background:#f6f8fa;cursor:pointer}
pre{background:#f6f8fa;padding:8px;overflow:auto}
.hidden{display:none}
</style>
</head>
<body>
<header><strong>Console</strong>
<nav id="tabs"><button data-type="requests">Requests</button><button data-type="queries">Queries</button><button data-type="exceptions">Exceptions</button><button data-type="logs">Logs</button></nav>
<button id="logout" class="hidden">Sign out</button></header>
<main>
<form id="login" class="hidden"><p>Sign in to the console</p>
<input name="username" placeholder="Username" autocomplete="username">
<input name="password" type="password" placeholder="Password" autocomplete="current-password">
<button>Sign in</button> <span id="login-error"></span></form>
<button id="session" class="hidden">Continue with my account</button>
<div id="view"></div>
</main>
<script>
const API = ${api};
const view = document.getElementById('view');
const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
async function call(path, init) {
  const response = await fetch(API + path, { credentials: 'same-origin', ...init });
  if (response.status === 401 && !path.startsWith('/auth/')) return showAuth();
  return response;
}
async function showAuth() {
  const response = await fetch(API + '/auth/me', { credentials: 'same-origin' });
  if (response.ok) return true;
  const body = await response.json().catch(() => ({}));
  const modes = (body.auth && body.auth.modes) || [];
  document.getElementById('login').classList.toggle('hidden', !modes.includes('login'));
  document.getElementById('session').classList.toggle('hidden', !modes.includes('session'));
  view.innerHTML = modes.length ? '' : '<p>Not allowed.</p>';
  return false;
}
async function list(type) {
  const response = await call('/' + type);
  if (!response || !response.ok) return;
  const { data } = await response.json();
  view.innerHTML = '<table><tr><th>When</th><th>Summary</th><th>Status</th><th>ms</th><th>Tags</th></tr>' +
    data.map((e) => '<tr data-batch="' + esc(e.batchId) + '"><td>' + esc(new Date(e.createdAt).toLocaleTimeString()) +
      '</td><td>' + esc(e.summary) + '</td><td>' + esc(e.status) + '</td><td>' +
      esc(e.durationMs == null ? '' : e.durationMs.toFixed(1)) + '</td><td>' + esc(e.tags.join(' ')) + '</td></tr>').join('') + '</table>';
}
async function batch(id) {
  const response = await call('/batches/' + encodeURIComponent(id));
  if (!response || !response.ok) return;
  const { data } = await response.json();
  view.innerHTML = '<h3>Batch ' + esc(id) + '</h3>' + data.entries.map((e) =>
    '<h4>' + esc(e.type) + ': ' + esc(e.summary) + '</h4><pre>' + esc(JSON.stringify(e.content, null, 2)) + '</pre>').join('');
}
document.getElementById('tabs').addEventListener('click', (event) => {
  if (event.target.dataset.type) list(event.target.dataset.type);
});
view.addEventListener('click', (event) => {
  const row = event.target.closest('tr[data-batch]');
  if (row) batch(row.dataset.batch);
});
document.getElementById('login').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const response = await fetch(API + '/auth/login', { method: 'POST', credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: form.get('username'), password: form.get('password') }) });
  if (response.ok) { event.target.classList.add('hidden'); list('requests'); }
  else document.getElementById('login-error').textContent = 'Invalid credentials';
});
document.getElementById('session').addEventListener('click', async (event) => {
  const response = await fetch(API + '/auth/session', { method: 'POST', credentials: 'same-origin' });
  if (response.ok) { event.target.classList.add('hidden'); list('requests'); }
});
document.getElementById('logout').addEventListener('click', async () => {
  await fetch(API + '/auth/logout', { method: 'POST', credentials: 'same-origin' });
  showAuth();
});
list('requests');
</script>
</body>
</html>`
}

/** GET {mount}: the shell */
export function shellHandler(mountPath: string) {
  const html = renderShell(mountPath)
  return async (ctx: HttpContext) => {
    ctx.response.header('content-type', 'text/html; charset=utf-8')
    ctx.response.header('cache-control', 'no-store')
    return ctx.response.send(html)
  }
}
