import { readFile } from 'node:fs/promises'
import { dirname, extname } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { HttpContext } from '@adonisjs/core/http'
import { escapeHtml } from './layout.ts'

/** Where `npm run build:demo` (Vite) writes the page's files and manifest */
const BUILD_DIR = fileURLToPath(new URL('../public/collaboration/', import.meta.url))
/** Excalidraw's fonts, served so the canvas needs no CDN */
const EXCALIDRAW_FONTS = `${dirname(createRequire(import.meta.url).resolve('@excalidraw/excalidraw'))}/fonts/`
/** The URL prefix of the built files (the `base` of vite.config.ts) */
export const ASSETS_PREFIX = '/collaboration-demo/assets/'

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.woff2': 'font/woff2',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

interface ManifestChunk {
  file: string
  css?: string[]
  imports?: string[]
  isEntry?: boolean
}

/**
 * The <link> and <script> tags of a Vite entry, read from the build's
 * manifest on each request (a rebuild needs no restart); null before the
 * first build.
 */
export async function entryTags(entry: string): Promise<string | null> {
  const text = await readFile(`${BUILD_DIR}.vite/manifest.json`, 'utf8').catch(() => null)
  if (text === null) return null
  const manifest = JSON.parse(text) as Record<string, ManifestChunk>
  const chunk = manifest[entry]
  if (!chunk) return null
  const css = new Set<string>()
  const preloads = new Set<string>()
  const visit = (key: string) => {
    const part = manifest[key]
    if (!part) return
    for (const file of part.css ?? []) css.add(file)
    for (const next of part.imports ?? []) {
      preloads.add(manifest[next]?.file ?? next)
      visit(next)
    }
  }
  visit(entry)
  const url = (file: string) => escapeHtml(`${ASSETS_PREFIX}${file}`)
  return [
    ...[...css].map((file) => `<link rel="stylesheet" href="${url(file)}">`),
    ...[...preloads].map((file) => `<link rel="modulepreload" href="${url(file)}">`),
    `<script type="module" src="${url(chunk.file)}"></script>`,
  ].join('\n')
}

/**
 * Sends one file of `dir` named by the route's wildcard: only plain names
 * (no `..`, no hidden files) of the known types; 404 otherwise.
 */
async function sendFrom(dir: string, { params, response }: HttpContext, immutable: boolean) {
  const parts = params['*'] as string[]
  const type = TYPES[extname(parts.at(-1) ?? '')]
  if (!type || parts.some((part) => !/^[\w-][\w.-]*$/.test(part))) {
    return response.notFound('Unknown file')
  }
  const body = await readFile(`${dir}${parts.join('/')}`).catch(() => null)
  if (body === null) return response.notFound('Unknown file')
  response.header('content-type', type)
  // built names carry a content hash; fonts change only with the Excalidraw version
  response.header(
    'cache-control',
    immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=86400'
  )
  return body
}

/** GET /collaboration-demo/assets/*: the page's built files */
export const sendBuiltFile = (ctx: HttpContext) => sendFrom(BUILD_DIR, ctx, true)

/** GET /collaboration-demo/excalidraw/fonts/*: Excalidraw's fonts */
export const sendExcalidrawFont = (ctx: HttpContext) => sendFrom(EXCALIDRAW_FONTS, ctx, false)
