import { test } from '@japa/runner'
import { normalizeConfig } from '../../src/collaboration/define_config.ts'
import { DEFAULT_LIMITS } from '../../src/collaboration/limits.ts'

test.group('Collaboration limits (config)', () => {
  test('defaults fill in, and one option overrides only itself', ({ assert }) => {
    assert.deepEqual(normalizeConfig({}).limits, DEFAULT_LIMITS)
    const limits = normalizeConfig({ limits: { maxPayload: 1024 * 1024 } }).limits
    assert.equal(limits.maxPayload, 1024 * 1024)
    assert.equal(limits.maxDocumentBytes, DEFAULT_LIMITS.maxDocumentBytes)
  })

  test('a wrong value fails at boot naming limits.<key> and the fix', ({ assert }) => {
    assert.throws(
      () => normalizeConfig({ limits: { maxPayload: -1 } }),
      /"limits\.maxPayload" in config\/collaboration\.ts: expected a positive number, received -1\. Remove it to use the default/
    )
    assert.throws(
      () => normalizeConfig({ limits: { maxPayloads: 10 } as any }),
      /Unknown "limits\.maxPayloads" in config\/collaboration\.ts\. Remove it or use one of maxPayload/
    )
    assert.throws(
      () => normalizeConfig({ limits: { messagesPerSecond: 500, messageBurst: 100 } }),
      /"limits\.messageBurst".*Set it to at least 500/
    )
    assert.throws(() => normalizeConfig({ limits: 'small' as any }), /Invalid "limits"/)
  })
})
