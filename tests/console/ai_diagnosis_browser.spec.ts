import { getActiveTest, test } from '@japa/runner'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { chromium, type Browser, type Page } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { FakeModelServer } from '../agent/fake_model.ts'
import { defineConfig, stores } from '../../src/console/main.ts'

class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({ default: class extends ExceptionHandler {} }))
  }
}

/**
 * An open console (no session gate, not production) on the memory store,
 * diagnosing with the real OpenAI-compatible provider on the loopback fake
 * when `ai` is true, with one recorded exception: no database service.
 */
async function diagnosisDashboard(ai: boolean) {
  const fake = await new FakeModelServer().start()
  getActiveTest()!.cleanup(() => fake.close())
  const model = createOpenAICompatible({ name: 'fake', baseURL: `${fake.url}/v1` })('fake-model')
  const app = await setupApp({
    providers: [
      () => import('../../providers/console_provider.ts'),
      async () => ({ default: ExceptionHandlerProvider }),
    ],
    config: {
      console: defineConfig({
        storage: stores.memory(),
        buffer: { flushIntervalMs: 60_000 },
        overloadProtection: false,
        authorizeAction: () => true,
        ...(ai ? { ai: { model } } : {}),
      }),
    },
    routes: (router) => {
      router.get('/boom', async () => {
        throw new Error('kaboom in the checkout')
      })
    },
  })
  const manager = await app.app.container.make('atrium.console')
  await fetch(`${app.url}/boom`)
  await manager.recorder.flush()
  const page = await manager.store.list({ type: 'exception', limit: 1 })
  return { ...app, fake, exceptionId: page.data[0].id }
}

test.group('Console dashboard: AI diagnosis in a real browser', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    return () => browser.close()
  })
  group.each.timeout(120_000)

  /** Opens the exception's screen and waits until the page has asked `GET /ai` and drawn its answer */
  async function openException(url: string, id: string): Promise<Page> {
    const context = await browser.newContext()
    getActiveTest()!.cleanup(() => context.close())
    const tab = await context.newPage()
    const asked = tab.waitForResponse((response) => response.url().endsWith('/console/api/ai'))
    await tab.goto(`${url}/console#/entries/${id}`)
    await tab.locator('dl.fields').waitFor()
    await asked
    // one frame after the answer: the state it set has rendered
    await tab.evaluate(
      () => new Promise((resolve) => (globalThis as any).requestAnimationFrame(resolve))
    )
    return tab
  }

  test('"Diagnose" shows the answer, which the next visit reads back without a model call', async ({
    assert,
  }) => {
    const { url, fake, exceptionId } = await diagnosisDashboard(true)
    fake.reply({ text: ['Likely cause: ', 'the checkout throws on purpose.'] })
    const tab = await openException(url, exceptionId)

    await tab.getByRole('button', { name: 'Diagnose' }).click()
    const answer = tab.locator('.diagnosis .diagnosis-text')
    await answer.waitFor()
    assert.equal(await answer.textContent(), 'Likely cause: the checkout throws on purpose.')
    assert.lengthOf(fake.requests, 1)
    assert.include(JSON.stringify(fake.requests[0].body), 'kaboom in the checkout')

    const again = await openException(url, exceptionId)
    await again.locator('.diagnosis .diagnosis-text').waitFor()
    assert.equal(
      await again.locator('.diagnosis .diagnosis-text').textContent(),
      'Likely cause: the checkout throws on purpose.'
    )
    assert.equal(await again.getByRole('button', { name: 'Diagnose' }).count(), 0)
    assert.lengthOf(fake.requests, 1)
  })

  test('without ai the exception screen has no "Diagnose" button', async ({ assert }) => {
    const { url, exceptionId } = await diagnosisDashboard(false)
    const tab = await openException(url, exceptionId)
    assert.include(await tab.locator('dl.fields').textContent(), 'kaboom in the checkout')
    assert.equal(await tab.getByRole('button', { name: 'Diagnose' }).count(), 0)
    assert.equal(await tab.locator('.diagnosis').count(), 0)
  })
})
