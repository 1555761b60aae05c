import { getActiveTest } from '@japa/runner'
import { fileURLToPath } from 'node:url'
import type { HttpContext } from '@adonisjs/core/http'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig } from '../../src/collaboration/define_config.ts'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { buildWsUrl, signCollabToken, signHostedToken } from '../../src/collaboration/tokens.ts'
import type { CollabEngineName } from '../../src/collaboration/types.ts'
import { SECRET, allow } from './helpers.ts'

/**
 * What the client browser specs share: a test page built on the React hooks
 * (tests/collaboration/fixtures/*_page.ts, bundled with esbuild once per
 * run), an app serving it beside the collaboration routes, and Chromium.
 */

const bundles = new Map<string, Promise<string>>()

function bundlePage(page: string) {
  const entry = fileURLToPath(new URL(`./fixtures/${page}.ts`, import.meta.url))
  let bundle = bundles.get(entry)
  if (!bundle) {
    bundle = import('esbuild').then(async ({ build }) => {
      const result = await build({
        entryPoints: [entry],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        // Automerge's `webpack` entry carries its WebAssembly inline, which esbuild can bundle
        conditions: ['webpack'],
        target: 'es2022',
        write: false,
        define: { 'process.env.NODE_ENV': '"development"' },
        logLevel: 'silent',
      })
      return result.outputFiles[0].text
    })
    bundles.set(entry, bundle)
  }
  return bundle
}

/**
 * An app serving the collaboration routes (the caller named by `x-user`),
 * the bundled `page` and its HTML at `/page?user=&doc=`. `&ttl=` gives the
 * page a pre-issued token living that many seconds. `hosted` names the room
 * worker of the hosted engines.
 */
export async function setupPageApp(
  page: string,
  engine: CollabEngineName = 'yjs',
  options: { hosted?: { roomHost: string; jwtSecret: string; workerSecret: string } } = {}
) {
  const script = await bundlePage(page)
  const hosted = options.hosted
  return setupApp({
    providers: [
      () => import('./fixtures/exception_handler_provider.ts'),
      () => import('../../providers/collaboration_provider.ts'),
    ],
    config: {
      collaboration: defineConfig({
        engine,
        tokenSecret: SECRET,
        ...(hosted ? { hosted } : {}),
        debounce: 100,
        storage: new InMemoryCollaborationStorage(),
        authorize: () => allow,
        routes: {
          resolveUser: (ctx: HttpContext) => {
            const id = ctx.request.header('x-user')
            return id ? { id, name: id } : null
          },
        },
      }),
    },
    routes: (router) => {
      router.get('/client.js', ({ response }) => {
        response.header('content-type', 'text/javascript; charset=utf-8')
        return script
      })
      router.get('/page', ({ request, response }) => {
        const { user, doc, ttl } = request.qs()
        const settings: Record<string, unknown> = { user: String(user), docName: String(doc) }
        if (ttl) {
          const seconds = Number(ttl)
          const claims = { userId: String(user), docName: String(doc) }
          settings.initialTokens = {
            [doc]: {
              token: hosted
                ? signHostedToken(claims, hosted.jwtSecret, seconds)
                : signCollabToken(claims, SECRET, seconds),
              wsUrl: hosted
                ? buildWsUrl(
                    {
                      path: '/collaboration',
                      engine,
                      hosted: { ...hosted, party: 'main', fetchTimeoutMs: 10_000 },
                    },
                    String(doc)
                  )
                : `ws://${request.host()}/collaboration/${doc}`,
              engine,
              expiresAt: new Date(Date.now() + seconds * 1000).toISOString(),
            },
          }
        }
        response.header('content-type', 'text/html; charset=utf-8')
        return `<!doctype html><html><head><meta charset="utf-8"></head><body><div id="root"></div>
<script>window.__ATRIUM__ = ${JSON.stringify(settings).replaceAll('<', '\\u003c')}</script>
<script type="module" src="/client.js"></script></body></html>`
      })
    },
  })
}

/** Debian's Chromium, headless; the caller closes it in its group's teardown */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
}

/**
 * A page of `user` on `doc` in its own browser context, once `ready` shows.
 * The context closes when the test ends, before the app it talks to.
 */
export async function openPage(
  browser: Browser,
  url: string,
  options: { user: string; doc: string; ready: string; query?: string }
) {
  const context: BrowserContext = await browser.newContext()
  getActiveTest()!.cleanup(() => context.close())
  const tab = await context.newPage()
  if (process.env.DEBUG_PAGES) {
    tab.on('console', (message) => console.log(`[${options.user}] ${message.text()}`))
    tab.on('pageerror', (error) => console.log(`[${options.user}] ${error.stack}`))
  }
  await tab.goto(
    `${url}/page?user=${options.user}&doc=${encodeURIComponent(options.doc)}${options.query ?? ''}`
  )
  await tab.waitForSelector(options.ready)
  return { context, tab }
}

/** Waits until an element's property holds the expected text (the test's timeout fails it) */
export function shows(
  tab: Page,
  selector: string,
  property: 'value' | 'textContent',
  expected: string
) {
  return tab.waitForFunction(
    ([query, key, text]) => (globalThis as any).document.querySelector(query)?.[key] === text,
    [selector, property, expected] as const
  )
}

/** The statuses the page went through, each once in a row */
export const statuses = (tab: Page): Promise<string[]> =>
  tab.evaluate(() => (globalThis as any).__page.statuses)

/**
 * One comment through the `useComments` hook of two pages of the text page:
 * created on the first, seen on the second after a refresh, resolved there,
 * then removed on the first
 */
export async function roundTripComment(alice: Page, bob: Page) {
  await alice.evaluate(() =>
    (globalThis as any).__page.comments.create({
      anchor: { kind: 'text-range', start: 0, end: 5, selectedText: 'first' },
      body: 'Why first?',
    })
  )
  await shows(alice, '#comments', 'textContent', 'Why first?')
  await bob.evaluate(() => (globalThis as any).__page.comments.refresh())
  await shows(bob, '#comments', 'textContent', 'Why first?')
  const commentId = await bob.evaluate(() => (globalThis as any).__page.comments.comments[0].id)
  await bob.evaluate((id) => (globalThis as any).__page.comments.resolve(id), commentId)
  await shows(bob, '#comments', 'textContent', 'Why first? (resolved)')
  await alice.evaluate((id) => (globalThis as any).__page.comments.remove(id), commentId)
  await shows(alice, '#comments', 'textContent', '')
}
