import { test } from '@japa/runner'
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../collaboration/browser_pages.ts'
import { buildDemoPage, startDemo, stopDemo } from './demo_process.ts'

/**
 * The demo's /agent page as a person uses it: the demo app itself on its
 * local scripted model (no API key), the page Vite builds from
 * examples/demo/resources/agent, in Chromium.
 */

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

/** The text of the first element matching `selector` */
const textOf = (tab: Page, selector: string) => tab.locator(selector).first().innerText()

test.group('Demo agent page in a real browser', (group) => {
  let browser: Browser
  let demo: { child: ChildProcess; url: string }
  let databaseDir: string
  group.setup(async () => {
    databaseDir = await mkdtemp(join(tmpdir(), 'atrium-demo-agent-'))
    await buildDemoPage('vite.agent.config.ts')
    // the scripted model is the default: a key in this environment must not switch it
    demo = await startDemo(join(databaseDir, 'demo.sqlite3'), { AGENT_MODEL: '' })
    browser = await launchChromium()
    return async () => {
      await browser.close()
      await stopDemo(demo.child)
      await rm(databaseDir, { recursive: true, force: true })
    }
  })
  group.each.timeout(60_000)

  test('an answer streams in; an approved refund shows its result, the answer and its spend', async ({
    assert,
    cleanup,
  }) => {
    const context = await browser.newContext({ viewport: { width: 1300, height: 1000 } })
    cleanup(() => context.close())
    const tab = await context.newPage()
    await tab.goto(`${demo.url}/agent`)
    await tab.waitForSelector('#governance #spend-by-model')
    assert.include(await textOf(tab, 'main'), 'Local scripted model')
    assert.include(await textOf(tab, 'main'), 'demo-customer')
    assert.include(await textOf(tab, '#spend-by-model'), 'No model call yet.')

    // a plain message: the answer shows while it streams, then as the stored message
    const message = tab.getByLabel('Message')
    await message.fill('hello agent')
    await tab.getByRole('button', { name: 'Send' }).click()
    await lists(tab, '#messages .message.streaming', 'Scripted answer')
    await lists(tab, '#messages .message.assistant:not(.streaming)', 'not from an LLM')
    await lists(tab, '#threads li button', 'hello agent')

    // a refund: the tool waits for Approve, then its result and the final answer show
    await message.fill('please refund order 1042, 30 USD')
    await tab.getByRole('button', { name: 'Send' }).click()
    const approval = tab.locator('#messages .approval')
    await approval.waitFor()
    assert.include(await approval.innerText(), 'refund_order')
    assert.include(await approval.innerText(), '"orderId":1042')
    await lists(tab, '#pending-approvals li', 'refund_order')
    await approval.getByRole('button', { name: 'Approve' }).click()
    await lists(tab, '#messages .message.tool .tool-result', '"status":"refunded"')
    await lists(tab, '#messages .message.assistant', 'was approved and issued')
    assert.include(await textOf(tab, '#messages .message.tool'), '"amount":30')
    await lists(tab, '#pending-approvals li', 'None waiting.')

    // three model calls so far (the greeting, the refund's two steps), priced by the demo's price
    const response = await fetch(`${demo.url}/ai-gateway/api/spend`)
    const spend = (await response.json()) as any
    const [row] = spend.byModel
    assert.equal(row.modelCalls, 3)
    assert.isAbove(row.costMicros, 0)
    await lists(tab, '#spend-by-model li', `$${row.cost} · 3 calls`)
    assert.include(await textOf(tab, '#spend-by-model li'), 'demo-scripted')
    await lists(tab, '#spend-by-actor li', `$${row.cost} · 3 calls`)
    await lists(tab, '#tool-stats li', '1 call · 0 rejected')
    await lists(tab, '#reliability', '2 runs · 2 succeeded')
  })

  test('cancel stops a long answer; regenerate, fork and reject work from the page', async ({
    assert,
    cleanup,
  }) => {
    const context = await browser.newContext({ viewport: { width: 1300, height: 1000 } })
    cleanup(() => context.close())
    const tab = await context.newPage()
    await tab.goto(`${demo.url}/agent`)
    await tab.waitForSelector('#governance #spend-by-model')
    const message = tab.getByLabel('Message')
    const send = async (text: string) => {
      await message.fill(text)
      await tab.getByRole('button', { name: 'Send' }).click()
    }

    // cancel while the long answer streams
    await send('tell me a long story')
    await lists(tab, '#messages .message.streaming', 'Sentence 2 of')
    await tab.getByRole('button', { name: 'Cancel' }).click()
    await lists(tab, '.conversation .notice', 'Cancelled.')
    await lists(tab, '#reliability', '· 1 cancelled ·')

    // regenerate answers the same question again as a new message
    await tab.getByRole('button', { name: 'New thread' }).click()
    await send('hello fork')
    const answers = tab.locator('#messages .message.assistant:not(.streaming)')
    await lists(tab, '#messages .message.assistant:not(.streaming)', '“hello fork”')
    const firstId = await answers.first().getAttribute('data-message-id')
    await tab.getByRole('button', { name: 'Regenerate' }).click()
    await tab.waitForFunction(
      (previous) =>
        [
          ...(globalThis as any).document.querySelectorAll(
            '#messages .message.assistant:not(.streaming)'
          ),
        ].some((element: any) => element.dataset.messageId !== previous),
      firstId
    )
    assert.equal(await answers.count(), 1)
    assert.equal(await tab.locator('#messages .message.user').count(), 1)

    // fork from the question: a new thread with the question only, selected
    await tab
      .locator('#messages .message.user')
      .getByRole('button', { name: 'Fork from here' })
      .click()
    await tab.waitForFunction(
      () =>
        [...(globalThis as any).document.querySelectorAll('#threads li button')].filter(
          (element: any) => element.textContent === 'hello fork'
        ).length === 2
    )
    await tab.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('#messages li').length === 1
    )
    assert.include(await textOf(tab, '#messages .message.user'), 'hello fork')

    // a rejected refund never runs the tool; the answer says so
    await send('refund order 2000')
    const approval = tab.locator('#messages .approval')
    await approval.waitFor()
    await approval.getByRole('button', { name: 'Reject' }).click()
    await lists(tab, '#messages .message.tool .tool-result', '"error":"rejected"')
    await lists(tab, '#messages .message.assistant', 'The refund was rejected')
    await lists(tab, '#tool-stats li', '1 rejected')
  })
})
