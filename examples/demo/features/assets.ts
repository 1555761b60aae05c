import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Router } from '@adonisjs/core/http'

/**
 * The demo's static files, read once at start. Their URLs carry a hash of
 * the content, so a browser may cache them for a year and still sees an edit
 * after a restart.
 */
function asset(name: string, type: string) {
  const body = readFileSync(new URL(`../public/${name}`, import.meta.url))
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10)
  return { body, type, hash, path: `/${name}`, url: `/${name}?v=${hash}` }
}

export const stylesheet = asset('demo.css', 'text/css; charset=utf-8')
export const favicon = asset('favicon.svg', 'image/svg+xml')

/** Serves the stylesheet and the favicon (also as /favicon.ico, which browsers ask for anyway) */
export function assetRoutes(router: Router) {
  for (const [path, file] of [
    [stylesheet.path, stylesheet],
    [favicon.path, favicon],
    ['/favicon.ico', favicon],
  ] as const) {
    router.get(path, ({ request, response }) => {
      response.header('content-type', file.type)
      // only the hashed URL may be kept for good; a bare one changes with the file
      response.header(
        'cache-control',
        request.qs().v === file.hash
          ? 'public, max-age=31536000, immutable'
          : 'public, max-age=3600'
      )
      return file.body
    })
  }
}
