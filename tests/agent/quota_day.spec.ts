import { test } from '@japa/runner'
import { dayIn } from '../../src/agent/quota/day.ts'

test.group('Agent quota day', () => {
  test('the day turns at midnight of the zone, not at the end of a kept minute', ({ assert }) => {
    // São Paulo has been UTC-3 all year since 2019: its midnight is 03:00 UTC
    assert.equal(dayIn('America/Sao_Paulo', new Date('2026-11-25T02:59:59.999Z')), '2026-11-24')
    assert.equal(dayIn('America/Sao_Paulo', new Date('2026-11-25T03:00:00.000Z')), '2026-11-25')
    assert.equal(dayIn('America/Sao_Paulo', new Date('2026-11-25T02:59:30.000Z')), '2026-11-24')
  })

  test('each zone keeps its own day for the same minute', ({ assert }) => {
    const now = new Date('2026-11-25T23:30:10.000Z')
    assert.equal(dayIn('UTC', now), '2026-11-25')
    assert.equal(dayIn('Asia/Tokyo', now), '2026-11-26')
    assert.equal(dayIn('America/Los_Angeles', now), '2026-11-25')
    assert.equal(dayIn('Asia/Kolkata', new Date('2026-11-25T18:29:59.000Z')), '2026-11-25')
    assert.equal(dayIn('Asia/Kolkata', new Date('2026-11-25T18:30:00.000Z')), '2026-11-26')
    assert.equal(dayIn('Asia/Tokyo', now), '2026-11-26')
  })
})
