import { test } from '@japa/runner'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, openPage, setupPageApp, shows } from './browser_pages.ts'

/*
 * The canvas bindings in Chromium on two pages: `createTldrawAdapter` through
 * `useCollabEditor`, bound to a real tldraw store (tldraw's record schema and
 * store, which validate every record they take), and `useCanvasSync` with a
 * stand-in for Excalidraw's imperative API.
 */

/** The document-scope records of a page's tldraw store, by id */
const records = (tab: Page) =>
  tab.evaluate(() => (globalThis as any).__page.documentRecords() as Record<string, any>)

test.group('Collaboration client in a real browser (tldraw store through the adapter)', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await launchChromium()
    return () => browser.close()
  })
  group.each.timeout(120_000)

  const open = (url: string, user: string, doc: string) =>
    openPage(browser, url, { user, doc, ready: '#canvas[data-synced="true"]' })

  test('two pages add, rename and remove tldraw records, and their stores converge', async ({
    assert,
  }) => {
    const { url } = await setupPageApp('tldraw_page')
    const doc = 'canvas/tldraw'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)

    await alice.tab.evaluate(() => {
      const { store, page } = (globalThis as any).__page
      store.put([page('one', 'One', 'a1')])
    })
    await shows(bob.tab, '#pages', 'textContent', 'One')
    await bob.tab.evaluate(() => {
      const { store, page } = (globalThis as any).__page
      store.put([page('two', 'Two', 'a2')])
    })
    await shows(alice.tab, '#pages', 'textContent', 'One,Two')

    await alice.tab.evaluate(() =>
      (globalThis as any).__page.store.update('page:two', (record: any) => ({
        ...record,
        name: 'Sketch',
      }))
    )
    await shows(bob.tab, '#pages', 'textContent', 'One,Sketch')

    // at the same time: Alice adds a page while Bob removes another
    await Promise.all([
      alice.tab.evaluate(() => {
        const { store, page } = (globalThis as any).__page
        store.put([page('three', 'Three', 'a3')])
      }),
      bob.tab.evaluate(() => (globalThis as any).__page.store.remove(['page:one'])),
    ])
    await shows(alice.tab, '#pages', 'textContent', 'Sketch,Three')
    await shows(bob.tab, '#pages', 'textContent', 'Sketch,Three')

    const [left, right] = await Promise.all([records(alice.tab), records(bob.tab)])
    assert.deepEqual(left, right)
    // tldraw's own integrity check added its document record on the way
    assert.sameMembers(Object.keys(left), ['document:document', 'page:two', 'page:three'])
    assert.equal(left['page:two'].name, 'Sketch')
  })

  test('a page that joins later loads the records, and a record the schema refuses stays out', async ({
    assert,
  }) => {
    const { url } = await setupPageApp('tldraw_page')
    const doc = 'canvas/late'
    const alice = await open(url, 'alice', doc)
    await alice.tab.evaluate(() => {
      const { store, page } = (globalThis as any).__page
      store.put([page('one', 'One', 'a1'), page('two', 'Two', 'a2')])
    })
    await alice.tab.waitForFunction(
      () => (globalThis as any).__page.documentRecords()['page:two'] !== undefined
    )
    const bob = await open(url, 'bob', doc)
    await shows(bob.tab, '#pages', 'textContent', 'One,Two')

    const refused = await alice.tab.evaluate(() => {
      try {
        ;(globalThis as any).__page.store.put([
          { id: 'page:bad', typeName: 'page', name: 42, index: 'a3', meta: {} },
        ])
        return null
      } catch (error) {
        return String((error as Error).message)
      }
    })
    assert.isString(refused)
    // the marker goes after the refused record: once it arrives, that record would have
    await alice.tab.evaluate(() => {
      const { store, page } = (globalThis as any).__page
      store.put([page('marker', 'Marker', 'a4')])
    })
    await shows(bob.tab, '#pages', 'textContent', 'One,Two,Marker')
    assert.notProperty(await records(bob.tab), 'page:bad')
  })
})

test.group('Collaboration client in a real browser (useCanvasSync)', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await launchChromium()
    return () => browser.close()
  })
  group.each.timeout(120_000)

  const open = (url: string, user: string, doc: string) =>
    openPage(browser, url, { user, doc, ready: '#board[data-ready="true"]' })
  const draw = (tab: Page, id: string, x: number) =>
    tab.evaluate(([element, at]) => (globalThis as any).__page.draw(element, at), [id, x] as const)

  test('two canvases share the scene: the last write wins, and a later canvas loads it', async ({
    assert,
  }) => {
    const { url } = await setupPageApp('scene_page')
    const doc = 'canvas/scene'
    const alice = await open(url, 'alice', doc)
    const bob = await open(url, 'bob', doc)

    await draw(alice.tab, 'rect', 10)
    await shows(bob.tab, '#scene', 'textContent', 'rect@10')
    await draw(bob.tab, 'arrow', 20)
    await shows(alice.tab, '#scene', 'textContent', 'rect@10,arrow@20')
    await draw(alice.tab, 'rect', 30)
    await shows(bob.tab, '#scene', 'textContent', 'rect@30,arrow@20')

    const carol = await open(url, 'carol', doc)
    await shows(carol.tab, '#scene', 'textContent', 'rect@30,arrow@20')
    const versions = await carol.tab.evaluate(() =>
      (globalThis as any).__page.getSceneElements().map((element: any) => element.version)
    )
    assert.deepEqual(versions, [2, 1])
  })
})
