import { getActiveTest, test } from '@japa/runner'
import { fileURLToPath } from 'node:url'
import type { HttpContext } from '@adonisjs/core/http'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig } from '../../src/collaboration/define_config.ts'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { signCollabToken } from '../../src/collaboration/tokens.ts'
import { SECRET, allow } from './helpers.ts'

const PAGE_SOURCE = fileURLToPath(new URL('./fixtures/client_page.ts', import.meta.url))

/** The test page and the client package bundled for the browser, once per run */
let bundle: Promise<string> | undefined
function bundlePage() {
  bundle ??= import('esbuild').then(async ({ build }) => {
    const result = await build({
      entryPoints: [PAGE_SOURCE],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      define: { 'process.env.NODE_ENV': '"development"' },
      logLevel: 'silent',
    })
    return result.outputFiles[0].text
  })
  return bundle
}

/**
 * An app serving the collaboration routes (the caller named by `x-user`),
 * the bundled page, and its HTML. `?ttl=` gives the page a pre-issued token
 * living that many seconds.
 */
async function setupPageApp() {
  const script = await bundlePage()
  return setupApp({
    providers: [
      () => import('./fixtures/exception_handler_provider.ts'),
      () => import('../../providers/collaboration_provider.ts'),
    ],
    config: {
      collaboration: defineConfig({
        tokenSecret: SECRET,
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
          settings.initialTokens = {
            [doc]: {
              token: signCollabToken(
                { userId: String(user), docName: String(doc) },
                SECRET,
                seconds
              ),
              wsUrl: `ws://${request.host()}/collaboration/${doc}`,
              engine: 'yjs',
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

/** Waits until an element's property holds the expected text (the test's timeout fails it) */
function shows(tab: Page, selector: string, property: 'value' | 'textContent', expected: string) {
  return tab.waitForFunction(
    ([query, key, text]) => (globalThis as any).document.querySelector(query)?.[key] === text,
    [selector, property, expected] as const
  )
}

test.group('Collaboration client in a real browser (React hooks on Yjs)', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    return () => browser.close()
  })
  group.each.timeout(120_000)

  /**
   * A page of `user` on `doc` in its own browser context, editable (synced).
   * The context closes when the test ends, before the app it talks to.
   */
  async function open(url: string, user: string, doc: string, query = '') {
    const context: BrowserContext = await browser.newContext()
    getActiveTest()!.cleanup(() => context.close())
    const tab = await context.newPage()
    await tab.goto(`${url}/page?user=${user}&doc=${encodeURIComponent(doc)}${query}`)
    await tab.waitForSelector('#editor:not([disabled])')
    return { context, tab }
  }

  const statuses = (tab: Page) => tab.evaluate(() => (globalThis as any).__page.statuses)

  test('two pages type, converge and see each other', async ({ assert }) => {
    const { url } = await setupPageApp()
    const doc = 'hooks/notes'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)

    await alice.tab.locator('#editor').pressSequentially('Hello from Alice')
    await shows(bob.tab, '#editor', 'value', 'Hello from Alice')
    await bob.tab.locator('#editor').press('End')
    await bob.tab.locator('#editor').pressSequentially(' and Bob')
    await shows(alice.tab, '#editor', 'value', 'Hello from Alice and Bob')

    await shows(alice.tab, '#peers', 'textContent', 'alice,bob')
    await shows(bob.tab, '#peers', 'textContent', 'alice,bob')
    await bob.context.close()
    await shows(alice.tab, '#peers', 'textContent', 'alice')
    assert.deepEqual(await statuses(alice.tab), ['connecting', 'connected', 'connected+synced'])
  })

  test('edits made offline are kept and sent when the page is back online', async ({ assert }) => {
    const { url } = await setupPageApp()
    const doc = 'hooks/offline'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('shared')
    await shows(bob.tab, '#editor', 'value', 'shared')

    await alice.context.setOffline(true)
    await shows(alice.tab, '#status', 'textContent', 'disconnected')
    await alice.tab.locator('#editor').press('End')
    await alice.tab.locator('#editor').pressSequentially(' +alice offline')
    await bob.tab.locator('#editor').press('Home')
    await bob.tab.locator('#editor').pressSequentially('bob online: ')
    await shows(bob.tab, '#editor', 'value', 'bob online: shared')

    await alice.context.setOffline(false)
    await shows(alice.tab, '#status', 'textContent', 'synced')
    await shows(alice.tab, '#editor', 'value', 'bob online: shared +alice offline')
    await shows(bob.tab, '#editor', 'value', 'bob online: shared +alice offline')
    assert.includeMembers(await statuses(alice.tab), ['disconnected'])
  })

  test('a token about to expire is renewed without a visible disconnect', async ({ assert }) => {
    const { url } = await setupPageApp()
    const doc = 'hooks/refresh'
    const ttl = 4
    const expiry = Date.now() + ttl * 1000
    const alice = await open(url, 'alice', doc, `&ttl=${ttl}`)
    const initial = await alice.tab.evaluate(
      () => (globalThis as any).__ATRIUM__.initialTokens['hooks/refresh'].token as string
    )
    await alice.tab.waitForFunction(() => (globalThis as any).__page.session.tokens.fetched === 1)
    const renewed = await alice.tab.evaluate(
      () => (globalThis as any).__page.session.tokens.current.token as string
    )
    assert.notEqual(renewed, initial)
    assert.deepEqual(await statuses(alice.tab), ['connecting', 'connected', 'connected+synced'])

    // after the first token's expiry the renewed one carries a reconnect
    await alice.tab.waitForFunction((at) => Date.now() > at, expiry, { polling: 100 })
    await alice.tab.evaluate(() => (globalThis as any).__page.session.transport.reconnect())
    await alice.tab.waitForFunction(
      () =>
        (globalThis as any).__page.statuses.join() ===
        'connecting,connected,connected+synced,disconnected,connecting,connected,connected+synced'
    )
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('still live')
    await shows(bob.tab, '#editor', 'value', 'still live')
  })

  test('comments and versions round-trip through the hooks', async ({ assert }) => {
    const { url } = await setupPageApp()
    const doc = 'hooks/review'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('first draft')
    await shows(bob.tab, '#editor', 'value', 'first draft')

    await alice.tab.evaluate(() =>
      (globalThis as any).__page.comments.create({
        anchor: { kind: 'text-range', start: 0, end: 5, selectedText: 'first' },
        body: 'Why first?',
      })
    )
    await shows(alice.tab, '#comments', 'textContent', 'Why first?')
    await bob.tab.evaluate(() => (globalThis as any).__page.comments.refresh())
    await shows(bob.tab, '#comments', 'textContent', 'Why first?')
    const commentId = await bob.tab.evaluate(
      () => (globalThis as any).__page.comments.comments[0].id
    )
    await bob.tab.evaluate((id) => (globalThis as any).__page.comments.resolve(id), commentId)
    await shows(bob.tab, '#comments', 'textContent', 'Why first? (resolved)')
    await alice.tab.evaluate((id) => (globalThis as any).__page.comments.remove(id), commentId)
    await shows(alice.tab, '#comments', 'textContent', '')

    await alice.tab.evaluate(() => (globalThis as any).__page.versions.create('draft'))
    await shows(alice.tab, '#versions', 'textContent', 'draft')
    await alice.tab.locator('#editor').fill('rewritten')
    await shows(bob.tab, '#editor', 'value', 'rewritten')
    const versionId = await alice.tab.evaluate(
      () => (globalThis as any).__page.versions.versions[0].id
    )
    await bob.tab.evaluate((id) => (globalThis as any).__page.versions.restore(id), versionId)
    await shows(alice.tab, '#editor', 'value', 'first draft')
    await shows(bob.tab, '#editor', 'value', 'first draft')
    // the restore snapshotted the replaced state as a new version
    await shows(bob.tab, '#versions', 'textContent', 'restored from #1draft')
    const errors = await bob.tab.evaluate(() => String((globalThis as any).__page.versions.error))
    assert.equal(errors, 'null')
  })
})
