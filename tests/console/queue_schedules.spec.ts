import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { defineConfig as queueConfig, drivers, Job } from '@adonisjs/queue'
import { Schedule } from '@boringnode/queue'
import { redis as redisAdapter } from '@boringnode/queue/drivers/redis_adapter'
import { consoleApp } from './helpers.ts'
import { createRedis, SERVICES } from '../helpers.ts'
import { queueSchedules } from '../../src/console/main.ts'

class CloseBooks extends Job<{ month: string }> {
  static options = { name: 'CloseBooks' }
  async execute() {}
}

class PingHealth extends Job<{}> {
  static options = { name: 'PingHealth' }
  async execute() {}
}

test.group('Console | @adonisjs/queue schedules', () => {
  test('queueSchedules() lists the schedules stored in Redis, a paused one without a next run', async ({
    assert,
  }) => {
    const prefix = `atrium-schedules-${randomUUID()}::`
    createRedis(prefix)
    const app = await consoleApp({
      config: { scheduleManagers: [queueSchedules()] },
      providers: [() => import('@adonisjs/queue/queue_provider')],
      appConfig: {
        queue: queueConfig({
          default: 'redis',
          adapters: {
            sync: drivers.sync(),
            redis: redisAdapter({ ...SERVICES.redis, keyPrefix: prefix }),
          },
        }),
      },
    })
    await CloseBooks.schedule({ month: 'current' })
      .id('month-end')
      .cron('0 0 1 * *')
      .timezone('UTC')
    await PingHealth.schedule({}).every('5m')
    // without an id of its own, a schedule is named after its job
    const ping = await Schedule.find('PingHealth')
    await ping!.pause()

    const response = await app.api('/schedules')
    assert.equal(response.status, 200)
    const { data } = (await response.json()) as { data: any[] }
    assert.lengthOf(data, 1)
    assert.equal(data[0].driver, 'queue')
    assert.isNull(data[0].error)
    const tasks = [...data[0].tasks].sort((a, b) => a.name.localeCompare(b.name))
    assert.equal(tasks[0].name, 'CloseBooks (month-end)')
    assert.equal(tasks[0].expression, '0 0 1 * * UTC')
    assert.isAbove(tasks[0].nextRunAt, Date.now())
    assert.isNull(tasks[0].lastStatus)
    assert.equal(tasks[1].name, 'PingHealth')
    assert.equal(tasks[1].expression, 'every 300000 ms')
    assert.isNull(tasks[1].nextRunAt)
    assert.equal(tasks[1].lastStatus, 'paused')
  })
})
