import { test } from '@japa/runner'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, shows } from '../collaboration/browser_pages.ts'
import { buildDemoPage, startDemo, stopDemo } from './demo_process.ts'

/**
 * The demo's collaboration page as a person uses it: the demo app itself
 * (examples/demo/bin/server.ts, on the package's build and its own SQLite
 * file) with the page Vite builds from examples/demo/resources, in two
 * Chromium windows.
 */

/** Chromium's window on the page as `user`, once the notes and the to-do list are loaded */
async function openAs(
  browser: Browser,
  url: string,
  user: string,
  cleanup: (fn: () => any) => void
) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } })
  cleanup(() => context.close())
  const tab = await context.newPage()
  await tab.goto(`${url}/collaboration-demo?user=${user}`)
  await tab.waitForSelector('#notes textarea:not([disabled])')
  await tab.waitForSelector('#todos input[aria-label="New to-do"]:not([disabled])')
  return tab
}

/** Waits until some element matching `selector` has `text` among its text */
function lists(tab: Page, selector: string, text: string) {
  return tab.waitForFunction(
    ([query, expected]) =>
      [...(globalThis as any).document.querySelectorAll(query)].some((element: any) =>
        element.textContent.includes(expected)
      ),
    [selector, text] as const
  )
}

test.group('Demo collaboration page in a real browser', (group) => {
  let browser: Browser
  let demo: { child: ChildProcess; url: string }
  let databaseDir: string
  group.setup(async () => {
    databaseDir = await mkdtemp(join(tmpdir(), 'atrium-demo-'))
    await buildDemoPage('vite.config.ts')
    demo = await startDemo(join(databaseDir, 'demo.sqlite3'))
    browser = await launchChromium()
    return async () => {
      await browser.close()
      await stopDemo(demo.child)
      await rm(databaseDir, { recursive: true, force: true })
    }
  })
  group.each.timeout(60_000)

  test('notes, to-dos and canvas follow across two windows; comments and versions work', async ({
    assert,
    cleanup,
  }) => {
    const alice = await openAs(browser, demo.url, 'alice', cleanup)
    const bob = await openAs(browser, demo.url, 'bob', cleanup)

    // Yjs notes, typed as a person types
    const notes = (tab: Page) => tab.locator('#notes textarea')
    await notes(alice).pressSequentially('Hello from Alice')
    await shows(bob, '#notes textarea', 'value', 'Hello from Alice')
    await lists(alice, '#notes .presence .peer', 'bob')

    // Automerge to-do list
    const newTodo = (tab: Page) => tab.locator('#todos input[aria-label="New to-do"]')
    await newTodo(alice).fill('write the docs')
    await newTodo(alice).press('Enter')
    await lists(bob, '#todos .todo-items li', 'write the docs')
    await bob.locator('#todos .todo-items input[type=checkbox]').first().check()
    await alice.waitForFunction(
      () => (globalThis as any).document.querySelector('#todos .todo-items input').checked
    )

    // a comment on the selected word reaches the other window
    await notes(bob).focus()
    await bob.evaluate(() =>
      (globalThis as any).document.querySelector('#notes textarea').setSelectionRange(11, 16)
    )
    await bob.locator('#notes .comments input').fill('Say more?')
    await bob.locator('#notes .comments button', { hasText: 'Add' }).click()
    await lists(alice, '#notes .comments li', 'Say more?')
    await lists(alice, '#notes .comments li', '“Alice”')

    // save a version, edit, restore it from the other window
    await alice.locator('#notes .versions input').fill('greeting')
    await alice.locator('#notes .versions button', { hasText: 'Save version' }).click()
    await lists(bob, '#notes .versions li', 'greeting')
    await notes(alice).press('End')
    await notes(alice).pressSequentially(' and more')
    await shows(bob, '#notes textarea', 'value', 'Hello from Alice and more')
    await bob
      .locator('#notes .versions li', { hasText: 'greeting' })
      .getByRole('button', { name: 'Restore' })
      .click()
    await shows(alice, '#notes textarea', 'value', 'Hello from Alice')
    await shows(bob, '#notes textarea', 'value', 'Hello from Alice')

    // the to-do list restores too
    await alice.locator('#todos .versions button', { hasText: 'Save version' }).click()
    await lists(alice, '#todos .versions li', '#1')
    await newTodo(bob).fill('ship it')
    await newTodo(bob).press('Enter')
    await lists(alice, '#todos .todo-items li', 'ship it')
    await alice
      .locator('#todos .versions li')
      .last()
      .getByRole('button', { name: 'Restore' })
      .click()
    await bob.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#todos .todo-items li').length === 1
    )

    // a rectangle drawn on Alice's canvas shows on Bob's
    await alice.locator('#canvas .whiteboard').scrollIntoViewIfNeeded()
    // the tool's icon covers its radio button, as a person sees it
    const rectangleTool = alice.locator('#canvas [data-testid="toolbar-rectangle"]')
    await rectangleTool.click({ force: true })
    await alice.waitForFunction(
      () =>
        (globalThis as any).document.querySelector('#canvas [data-testid="toolbar-rectangle"]')
          .checked
    )
    const box = (await alice.locator('#canvas .excalidraw canvas.interactive').boundingBox())!
    // in the middle: the tool's style panel covers the canvas's left side
    await alice.mouse.move(box.x + box.width / 2, box.y + 200)
    await alice.mouse.down()
    await alice.mouse.move(box.x + box.width / 2 + 120, box.y + 290, { steps: 5 })
    await alice.mouse.up()
    await shows(alice, '#canvas .shape-count', 'textContent', '1 shape')
    await shows(bob, '#canvas .shape-count', 'textContent', '1 shape')

    // comments on the to-do list and on the new shape (still selected) reach the other window
    await bob.locator('#todos .todo-items li').getByRole('button', { name: 'Select' }).click()
    await bob.locator('#todos .comments input').fill('assign me')
    await bob.locator('#todos .comments button', { hasText: 'Add' }).click()
    await lists(alice, '#todos .comments li', 'on “write the docs”: assign me')
    await alice.locator('#canvas .comments input').fill('too big')
    await alice.locator('#canvas .comments button', { hasText: 'Add' }).click()
    await lists(bob, '#canvas .comments li', 'on shape')
    await lists(bob, '#canvas .comments li', 'too big')

    assert.equal(await notes(alice).inputValue(), 'Hello from Alice')
  })
})
