import { favicon, stylesheet } from './assets.ts'

/**
 * The feature pages of the header. Listed here rather than imported from
 * main.ts, which imports every page (and so this module).
 */
const NAV: [string, string][] = [
  ['/collaboration-demo', 'Collaboration'],
  ['/payments', 'Payment webhooks'],
  ['/pagination', 'Keyset pagination'],
  ['/agent', 'Agent gateway'],
]

/**
 * Escapes a value for HTML text and double- or single-quoted attributes;
 * null and undefined become ''.
 */
export function escapeHtml(value: unknown) {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!
  )
}

/**
 * The demo's one page shell. `title` is text (escaped here); `body` and
 * `head` are HTML the pages built, with their own values escaped.
 */
export function layout(title: string, body: string, head = '', currentPath = '') {
  const links = NAV.map(
    ([path, label]) =>
      `<a href="${path}"${path === currentPath ? ' aria-current="page"' : ''}>${escapeHtml(label)}</a>`
  ).join('')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Atrium demo</title>
<link rel="icon" type="image/svg+xml" href="${favicon.url}">
<link rel="stylesheet" href="${stylesheet.url}">
${head}
</head>
<body>
<header class="site"><nav><a class="brand" href="/"><img src="${favicon.url}" alt="" width="20" height="20"> Atrium demo</a>${links}</nav></header>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>`
}
