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

test.group('Collaboration client in a real browser (React hooks on Yjs)', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await launchChromium()
    return () => browser.close()
  })
  group.each.timeout(120_000)

  const open = (url: string, user: string, doc: string, query = '') =>
    openPage(browser, url, { user, doc, query, ready: '#editor:not([disabled])' })

  test('two pages type, converge and see each other', async ({ assert }) => {
    const { url } = await setupPageApp('yjs_page')
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
    const { url } = await setupPageApp('yjs_page')
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
    const { url } = await setupPageApp('yjs_page')
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
    // (React may render the drop and the new attempt as one change)
    await alice.tab.waitForFunction(() =>
      /^connecting,connected,connected\+synced,(disconnected,)?connecting,connected,connected\+synced$/.test(
        (globalThis as any).__page.statuses.join()
      )
    )
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('still live')
    await shows(bob.tab, '#editor', 'value', 'still live')
  })

  test('comments and versions round-trip through the hooks', async ({ assert }) => {
    const { url } = await setupPageApp('yjs_page')
    const doc = 'hooks/review'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    await alice.tab.locator('#editor').pressSequentially('first draft')
    await shows(bob.tab, '#editor', 'value', 'first draft')

    await roundTripComment(alice.tab, bob.tab)

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
