import * as Y from 'yjs'
import { test } from '@japa/runner'
import type { Browser } from 'playwright-core'
import {
  launchChromium,
  openPage,
  roundTripComment,
  setupPageApp,
  shows,
  statuses,
} from './browser_pages.ts'
import {
  JWT_SECRET,
  WORKER_SECRET,
  bundleScaffoldedWorker,
  freePort,
  startWorker,
} from './hosted_setup.ts'
import type { CollaborationManager } from '../../src/collaboration/manager.ts'

/*
 * The React hooks in Chromium on a hosted document: the pages get their
 * tokens from the app and edit in the PartyServer room worker that
 * `collaboration:init --engine=partyserver` scaffolds (workerd through
 * Miniflare), which loads and saves the document through the app.
 */

test.group('Collaboration client in a real browser (React hooks on PartyServer)', (group) => {
  let browser: Browser
  let script: string
  group.setup(async () => {
    ;({ script } = await bundleScaffoldedWorker())
    browser = await launchChromium()
    return () => browser.close()
  })
  group.each.timeout(120_000)

  /** The app, and the room worker on the port the app's tokens name */
  async function setup(cleanup: (fn: () => Promise<void>) => void) {
    const port = await freePort()
    const app = await setupPageApp('yjs_page', 'partyserver', {
      hosted: {
        roomHost: `ws://127.0.0.1:${port}`,
        jwtSecret: JWT_SECRET,
        workerSecret: WORKER_SECRET,
      },
    })
    const worker = await startWorker(script, app.url, { port })
    cleanup(() => worker.mf.dispose())
    const manager = (await app.app.container.make('atrium.collaboration')) as CollaborationManager
    /** The text the app stores, as the worker last posted it */
    const storedText = async (docName: string) => {
      const doc = new Y.Doc()
      Y.applyUpdate(doc, await manager.getDocumentState({ docName }))
      return doc.getText('content').toString()
    }
    return { url: app.url, manager, storedText }
  }

  const open = (url: string, user: string, doc: string, query = '') =>
    openPage(browser, url, { user, doc, query, ready: '#editor:not([disabled])' })

  test('two pages type, converge, see each other, and the app stores the document', async ({
    assert,
    cleanup,
  }) => {
    const { url, storedText } = await setup(cleanup)
    const doc = 'hosted/notes'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    const wsUrl = await alice.tab.evaluate(
      () => (globalThis as any).__page.session.tokens.current.wsUrl as string
    )
    assert.match(wsUrl, /\/parties\/main\/hosted%2Fnotes$/)

    await alice.tab.locator('#editor').pressSequentially('Hello from Alice')
    await shows(bob.tab, '#editor', 'value', 'Hello from Alice')
    await bob.tab.locator('#editor').press('End')
    await bob.tab.locator('#editor').pressSequentially(' and Bob')
    await shows(alice.tab, '#editor', 'value', 'Hello from Alice and Bob')

    await shows(alice.tab, '#peers', 'textContent', 'alice,bob')
    await shows(bob.tab, '#peers', 'textContent', 'alice,bob')
    await bob.context.close()
    await shows(alice.tab, '#peers', 'textContent', 'alice')
    // the room does not announce the end of the first sync: synced is "connected"
    assert.deepEqual(await statuses(alice.tab), ['connecting', 'connected+synced'])

    assert.equal(
      await waitForStored(storedText, doc, 'Hello from Alice and Bob'),
      'Hello from Alice and Bob'
    )
  })

  test('a page reloaded after the room saved opens with the stored text', async ({ cleanup }) => {
    const { url, storedText } = await setup(cleanup)
    const doc = 'hosted/reload'
    const alice = await open(url, 'alice', doc)
    await alice.tab.locator('#editor').pressSequentially('kept by the app')
    await waitForStored(storedText, doc, 'kept by the app')
    await alice.context.close()

    const bob = await open(url, 'bob', doc)
    await shows(bob.tab, '#editor', 'value', 'kept by the app')
  })

  test('edits made offline are kept and sent when the page is back online', async ({
    assert,
    cleanup,
  }) => {
    const { url, storedText } = await setup(cleanup)
    const doc = 'hosted/offline'
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
    await waitForStored(storedText, doc, 'bob online: shared +alice offline')
  })

  test('a token about to expire is renewed without a visible disconnect', async ({
    assert,
    cleanup,
  }) => {
    const { url } = await setup(cleanup)
    const doc = 'hosted/refresh'
    const ttl = 4
    const expiry = Date.now() + ttl * 1000
    const alice = await open(url, 'alice', doc, `&ttl=${ttl}`)
    const initial = await alice.tab.evaluate(
      () => (globalThis as any).__ATRIUM__.initialTokens['hosted/refresh'].token as string
    )
    await alice.tab.waitForFunction(() => (globalThis as any).__page.session.tokens.fetched === 1)
    const renewed = await alice.tab.evaluate(
      () => (globalThis as any).__page.session.tokens.current.token as string
    )
    assert.notEqual(renewed, initial)
    assert.deepEqual(await statuses(alice.tab), ['connecting', 'connected+synced'])

    // after the first token's expiry (which the worker refuses) the renewed one carries a reconnect
    await alice.tab.waitForFunction((at) => Date.now() > at, expiry, { polling: 100 })
    // the old socket is let go at once: the room does not answer a close without a status code
    const statusAfterReconnect = await alice.tab.evaluate(() => {
      const { transport } = (globalThis as any).__page.session
      transport.reconnect()
      return transport.getStatus() as string
    })
    assert.equal(statusAfterReconnect, 'connecting')
    // (React may render the drop and the new attempt as one change)
    await alice.tab.waitForFunction(() =>
      /^connecting,connected\+synced,(disconnected,)?connecting,connected\+synced$/.test(
        (globalThis as any).__page.statuses.join()
      )
    )
    // one fetch: the reconnect did not need a refused upgrade to get a token
    assert.equal(
      await alice.tab.evaluate(() => (globalThis as any).__page.session.tokens.fetched),
      1
    )
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('still live')
    await shows(bob.tab, '#editor', 'value', 'still live')
  })

  test('comments and versions round-trip through the hooks', async ({ assert, cleanup }) => {
    const { url, storedText } = await setup(cleanup)
    const doc = 'hosted/review'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('first draft')
    await shows(bob.tab, '#editor', 'value', 'first draft')

    await roundTripComment(alice.tab, bob.tab)

    // a version snapshots what the app stores: once the room has saved the draft
    await waitForStored(storedText, doc, 'first draft')
    await alice.tab.evaluate(() => (globalThis as any).__page.versions.create('draft'))
    await shows(alice.tab, '#versions', 'textContent', 'draft')
    await alice.tab.locator('#editor').fill('rewritten')
    await shows(bob.tab, '#editor', 'value', 'rewritten')
    await waitForStored(storedText, doc, 'rewritten')
    const versionId = await alice.tab.evaluate(
      () => (globalThis as any).__page.versions.versions[0].id
    )
    await bob.tab.evaluate((id) => (globalThis as any).__page.versions.restore(id), versionId)
    await shows(bob.tab, '#versions', 'textContent', 'restored from #1draft')
    await shows(alice.tab, '#editor', 'value', 'first draft')
    await shows(bob.tab, '#editor', 'value', 'first draft')
    const errors = await bob.tab.evaluate(() => String((globalThis as any).__page.versions.error))
    assert.equal(errors, 'null')
  })
})

/** Polls the app's storage until it holds `expected` (the test's timeout fails it) */
async function waitForStored(
  storedText: (docName: string) => Promise<string>,
  docName: string,
  expected: string
) {
  for (;;) {
    const text = await storedText(docName)
    if (text === expected) return text
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
