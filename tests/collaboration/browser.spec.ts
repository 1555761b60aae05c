import { test } from '@japa/runner'
import { chromium, type Browser, type Page } from 'playwright-core'
import { importMap, readModule } from './browser_modules.ts'
import { setupApp } from '../helpers.ts'
import { defineConfig } from '../../src/collaboration/define_config.ts'
import { signCollabToken } from '../../src/collaboration/tokens.ts'
import { SECRET, allow } from './helpers.ts'

const MODULES = '/modules/'

/**
 * A page as an app would write it: a textarea bound to the document's
 * Y.Text through an unmodified y-websocket provider, peers from awareness.
 */
function page(user: string, docName: string, token: string, wsBase: string, imports: object) {
  return `<!doctype html><html><head><meta charset="utf-8">
<script type="importmap">${JSON.stringify({ imports })}</script></head>
<body><textarea id="editor" disabled></textarea><p id="peers"></p>
<script type="module">
import * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
const doc = new Y.Doc()
const provider = new WebsocketProvider(${JSON.stringify(wsBase)}, ${JSON.stringify(docName)}, doc, {
  params: { token: ${JSON.stringify(token)} },
})
const text = doc.getText('content')
const area = document.querySelector('#editor')
provider.awareness.setLocalStateField('user', { name: ${JSON.stringify(user)} })
provider.on('sync', (synced) => synced && (area.disabled = false))
area.addEventListener('input', () => {
  doc.transact(() => { text.delete(0, text.length); text.insert(0, area.value) }, 'local')
})
text.observe((_, transaction) => { if (transaction.origin !== 'local') area.value = text.toString() })
provider.awareness.on('change', () => {
  document.querySelector('#peers').textContent = [...provider.awareness.getStates().values()]
    .map((state) => state.user?.name).filter(Boolean).sort().join(',')
})
</script></body></html>`
}

/**
 * Waits until an element's property holds the expected text (the test's timeout fails it).
 */
function shows(tab: Page, selector: string, property: 'value' | 'textContent', expected: string) {
  return tab.waitForFunction(
    ([query, key, text]) => (globalThis as any).document.querySelector(query)?.[key] === text,
    [selector, property, expected] as const
  )
}

test.group('Collaboration in a real browser', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    return () => browser.close()
  })
  group.each.timeout(60_000)

  test('two windows edit one document live and see each other', async ({ assert, cleanup }) => {
    const docName = 'browser/notes'
    const { url, app } = await setupApp({
      providers: [() => import('../../providers/collaboration_provider.ts')],
      config: {
        collaboration: defineConfig({ tokenSecret: SECRET, authorize: () => allow }),
      },
      routes: async (router) => {
        const imports = await importMap(['yjs', 'y-websocket'], MODULES)
        router.get('/modules/*', async ({ params, response }) => {
          const source = await readModule((params['*'] as string[]).join('/'))
          if (source === null) return response.notFound('unknown module')
          response.header('content-type', 'text/javascript; charset=utf-8')
          return source
        })
        router.get('/editor', ({ request, response }) => {
          const user = String(request.qs().user)
          const token = signCollabToken({ userId: user, docName }, SECRET)
          const wsBase = `ws://${request.host()}/collaboration`
          response.header('content-type', 'text/html; charset=utf-8')
          return page(user, docName, token, wsBase, imports)
        })
      },
    })

    const open = async (user: string): Promise<Page> => {
      const context = await browser.newContext()
      cleanup(() => context.close())
      const tab = await context.newPage()
      await tab.goto(`${url}/editor?user=${user}`)
      await tab.waitForSelector('#editor:not([disabled])')
      return tab
    }
    const alice = await open('alice')
    const bob = await open('bob')

    await alice.locator('#editor').pressSequentially('Hello from Alice')
    await shows(bob, '#editor', 'value', 'Hello from Alice')
    await bob.locator('#editor').press('End')
    await bob.locator('#editor').pressSequentially(' and Bob')
    await shows(alice, '#editor', 'value', 'Hello from Alice and Bob')
    await shows(alice, '#peers', 'textContent', 'alice,bob')

    const manager = await app.container.make('atrium.collaboration')
    assert.equal(await manager.getDocumentText({ docName }), 'Hello from Alice and Bob')
  })
})
