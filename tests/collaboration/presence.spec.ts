/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { createRedis, SERVICES } from '../helpers.ts'
import { connectClient, setupCollabApp, tokenFor, waitFor } from './helpers.ts'

test.group('Collaboration presence roster (Redis)', () => {
  test('members connected to two app instances appear on both, one entry per user', async ({
    assert,
  }) => {
    const prefix = `atrium:test:collab:${randomUUID()}:`
    createRedis(prefix)
    const config = {
      redisUrl: `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`,
      redisPrefix: prefix,
    }
    const first = await setupCollabApp(config)
    const second = await setupCollabApp(config)

    const alice = connectClient(
      first.wsBase,
      'room/1',
      tokenFor('room/1', 'alice', { name: 'Alice' })
    )
    const bob = connectClient(second.wsBase, 'room/1', tokenFor('room/1', 'bob', { name: 'Bob' }))
    const aliceSecondTab = connectClient(
      second.wsBase,
      'room/1',
      tokenFor('room/1', 'alice', { name: 'Alice' })
    )
    await Promise.all([alice.synced, bob.synced, aliceSecondTab.synced])

    const names = async (manager: typeof first.manager) =>
      (await manager.listPresence({ docName: 'room/1' })).map(({ userId }) => userId).sort()
    await waitFor(
      async () => (await names(first.manager)).join() === 'alice,bob',
      5000,
      'both members'
    )
    assert.deepEqual(await names(second.manager), ['alice', 'bob'])
    const member = (await first.manager.listPresence({ docName: 'room/1' })).find(
      ({ userId }) => userId === 'alice'
    )
    assert.equal(member!.name, 'Alice')

    // closing one of Alice's tabs keeps her on the roster: each connection is its own entry
    alice.provider.disconnect()
    await waitFor(
      async () => (await first.manager.openDocuments()).length === 0,
      5000,
      'the unload'
    )
    assert.deepEqual(await names(first.manager), ['alice', 'bob'])

    aliceSecondTab.provider.disconnect()
    await waitFor(async () => (await names(first.manager)).join() === 'bob', 5000, 'alice to leave')
    assert.deepEqual(await first.manager.listPresence({ docName: 'room/2' }), [])
  })

  test('without redisUrl the roster is empty', async ({ assert }) => {
    const { wsBase, manager } = await setupCollabApp()
    const client = connectClient(wsBase, 'room/1')
    await client.synced
    assert.deepEqual(await manager.listPresence({ docName: 'room/1' }), [])
    assert.isUndefined(manager.presence)
  })
})
