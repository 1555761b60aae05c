import { readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import type { HttpContext } from '@adonisjs/core/http'
import { escapeHtml } from './layout.ts'

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
 * Sends one file of `dir` named by the route's wildcard: only plain names
 * (no `..`, no hidden files) of the known types; 404 otherwise.
 */
export async function sendFrom(dir: string, { params, response }: HttpContext, immutable: boolean) {
  const parts = params['*'] as string[]
  const type = TYPES[extname(parts.at(-1) ?? '')]
  if (!type || parts.some((part) => !/^[\w-][\w.-]*$/.test(part))) {
    return response.notFound('Unknown file')
  }
  const body = await readFile(`${dir}${parts.join('/')}`).catch(() => null)
  if (body === null) return response.notFound('Unknown file')
  response.header('content-type', type)
  // built names carry a content hash; other files change only with a dependency's version
  response.header(
    'cache-control',
    immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=86400'
  )
  return body
}

/**
 * A page Vite builds (`npm run build:demo`) into `buildDir`, served under
 * `prefix` (the `base` of its Vite config).
 */
export function builtPage(buildDir: string, prefix: string) {
  return {
    /**
     * The <link> and <script> tags of a Vite entry, read from the build's
     * manifest on each request (a rebuild needs no restart); null before the
     * first build.
     */
    async entryTags(entry: string): Promise<string | null> {
      const text = await readFile(`${buildDir}.vite/manifest.json`, 'utf8').catch(() => null)
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
      const url = (file: string) => escapeHtml(`${prefix}${file}`)
      return [
        ...[...css].map((file) => `<link rel="stylesheet" href="${url(file)}">`),
        ...[...preloads].map((file) => `<link rel="modulepreload" href="${url(file)}">`),
        `<script type="module" src="${url(chunk.file)}"></script>`,
      ].join('\n')
    },

    /** GET <prefix>*: the page's built files */
    sendBuiltFile: (ctx: HttpContext) => sendFrom(buildDir, ctx, true),
  }
}
