import type { HttpContext } from '@adonisjs/core/http'
import { consoleUiAssets, type ConsoleUiManifest } from './ui_assets.ts'

/**
 * The shell loads everything by URL (no inline script or style), so this
 * policy holds; React's style properties go through the CSSOM, which
 * `style-src` does not restrict.
 */
const SHELL_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const IMMUTABLE = 'public, max-age=31536000, immutable'

function attribute(value: string) {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

/**
 * The dashboard's HTML: links to the hashed assets and the API's path, no
 * data. The app routes in the URL's hash, so `{path}` is its only page.
 */
export function renderShell(mountPath: string, manifest: ConsoleUiManifest) {
  const assets = `${mountPath}/assets`
  const style = manifest.style
    ? `<link rel="stylesheet" href="${attribute(`${assets}/${manifest.style}`)}">`
    : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="atrium-console-api" content="${attribute(`${mountPath}/api`)}">
<title>Console</title>
${style}
<script type="module" src="${attribute(`${assets}/${manifest.script}`)}"></script>
</head>
<body>
<div id="root"></div>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`
}

/** GET {path}: the shell, never cached (it names the current hashes) */
export function shellHandler(mountPath: string) {
  let html: string | undefined
  return async (ctx: HttpContext) => {
    if (html === undefined) {
      const assets = await consoleUiAssets()
      html = renderShell(mountPath, assets.manifest)
    }
    ctx.response.header('content-type', 'text/html; charset=utf-8')
    ctx.response.header('cache-control', 'no-store')
    ctx.response.header('content-security-policy', SHELL_POLICY)
    ctx.response.header('x-content-type-options', 'nosniff')
    ctx.response.header('referrer-policy', 'same-origin')
    return ctx.response.send(html)
  }
}

/** GET {path}/assets/:name: a file the manifest names, cached for good (its name changes with it) */
export async function assetHandler(ctx: HttpContext) {
  const assets = await consoleUiAssets()
  const file = assets.files.get(String(ctx.params.name))
  if (!file) {
    return ctx.response.status(404).send({
      errors: [{ code: 'E_CONSOLE_NOT_FOUND', message: 'No such console asset' }],
    })
  }
  ctx.response.header('content-type', file.contentType)
  ctx.response.header('cache-control', IMMUTABLE)
  ctx.response.header('x-content-type-options', 'nosniff')
  return ctx.response.send(file.body)
}
