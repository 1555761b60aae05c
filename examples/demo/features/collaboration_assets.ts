import { dirname } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import type { HttpContext } from '@adonisjs/core/http'
import { builtPage, sendFrom } from './built_pages.ts'

/** Excalidraw's fonts, served so the canvas needs no CDN */
const EXCALIDRAW_FONTS = `${dirname(createRequire(import.meta.url).resolve('@excalidraw/excalidraw'))}/fonts/`
/** The URL prefix of the built files (the `base` of vite.config.ts) */
export const ASSETS_PREFIX = '/collaboration-demo/assets/'

/** The page's build: public/collaboration (Vite's outDir) */
const page = builtPage(
  fileURLToPath(new URL('../public/collaboration/', import.meta.url)),
  ASSETS_PREFIX
)

/** The <link> and <script> tags of a Vite entry of the collaboration page; null before the first build */
export const entryTags = page.entryTags

/** GET /collaboration-demo/assets/*: the page's built files */
export const sendBuiltFile = page.sendBuiltFile

/** GET /collaboration-demo/excalidraw/fonts/*: Excalidraw's fonts */
export const sendExcalidrawFont = (ctx: HttpContext) => sendFrom(EXCALIDRAW_FONTS, ctx, false)
