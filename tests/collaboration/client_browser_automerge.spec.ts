import { test } from '@japa/runner'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, openPage, setupPageApp, shows, statuses } from './browser_pages.ts'

/** Adds a to-do through the page's form, as a user would */
async function addTodo(tab: Page, title: string) {
  await tab.locator('#new').fill(title)
  await tab.locator('#new').press('Enter')
}

test.group('Collaboration client in a real browser (React hooks on Automerge)', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await launchChromium()
    return () => browser.close()
  })
  group.each.timeout(120_000)

  const open = (url: string, user: string, doc: string) =>
    openPage(browser, url, { user, doc, ready: '#new:not([disabled])' })

  test('two pages edit a to-do list, converge and see each other', async ({ assert }) => {
    const { url } = await setupPageApp('automerge_page', 'automerge')
    const doc = 'todos/shared'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)

    await addTodo(alice.tab, 'write the spec')
    await shows(bob.tab, '#todos', 'textContent', 'write the spec;')
    await addTodo(bob.tab, 'review it')
    await shows(alice.tab, '#todos', 'textContent', 'write the spec;review it;')
    await bob.tab.locator('#todos li').first().click()
    await shows(alice.tab, '#todos', 'textContent', 'write the spec (done);review it;')

    await shows(alice.tab, '#peers', 'textContent', 'alice,bob')
    await shows(bob.tab, '#peers', 'textContent', 'alice,bob')
    await bob.context.close()
    await shows(alice.tab, '#peers', 'textContent', 'alice')
    assert.deepEqual(await statuses(alice.tab), ['connecting', 'connected+synced'])
  })

  test('to-dos added offline are kept and sent when the page is back online', async ({
    assert,
  }) => {
    const { url } = await setupPageApp('automerge_page', 'automerge')
    const doc = 'todos/offline'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    await addTodo(alice.tab, 'shared')
    await shows(bob.tab, '#todos', 'textContent', 'shared;')

    await alice.context.setOffline(true)
    await shows(alice.tab, '#status', 'textContent', 'disconnected')
    await addTodo(alice.tab, 'alice offline')
    await shows(alice.tab, '#pending', 'textContent', '1')
    await addTodo(bob.tab, 'bob online')
    await shows(bob.tab, '#todos', 'textContent', 'shared;bob online;')

    await alice.context.setOffline(false)
    await shows(alice.tab, '#status', 'textContent', 'synced')
    // both orders are a valid merge; both pages must agree on one holding the three
    await bob.tab.waitForFunction(
      () => (globalThis as any).document.querySelector('#todos').textContent.split(';').length === 4
    )
    const seen = await bob.tab.locator('#todos').textContent()
    assert.sameMembers(seen!.split(';').filter(Boolean), ['shared', 'alice offline', 'bob online'])
    await shows(alice.tab, '#todos', 'textContent', seen!)
    await shows(alice.tab, '#pending', 'textContent', '0')
    assert.includeMembers(await statuses(alice.tab), ['disconnected'])
  })

  test('a version restores the list for every page', async ({ assert }) => {
    const { url } = await setupPageApp('automerge_page', 'automerge')
    const doc = 'todos/versions'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)
    await addTodo(alice.tab, 'first')
    await shows(bob.tab, '#todos', 'textContent', 'first;')

    await alice.tab.evaluate(() => (globalThis as any).__page.versions.create('before'))
    await shows(alice.tab, '#versions', 'textContent', 'before')
    await addTodo(bob.tab, 'second')
    await shows(alice.tab, '#todos', 'textContent', 'first;second;')
    const versionId = await alice.tab.evaluate(
      () => (globalThis as any).__page.versions.versions[0].id
    )
    await bob.tab.evaluate((id) => (globalThis as any).__page.versions.restore(id), versionId)
    await shows(alice.tab, '#todos', 'textContent', 'first;')
    await shows(bob.tab, '#todos', 'textContent', 'first;')
    const error = await bob.tab.evaluate(() => String((globalThis as any).__page.versions.error))
    assert.equal(error, 'null')
  })
})
