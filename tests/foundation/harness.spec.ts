import { test } from '@japa/runner'
import { createDatabase, createRedis, dialect, setupApp } from '../helpers.ts'

test.group('Test harness', () => {
  test('boots an Adonis app that answers real HTTP requests', async ({ assert }) => {
    const { url } = await setupApp({
      routes: (router) => {
        router.get('/ping', ({ request }) => ({ pong: request.qs().echo }))
      },
    })
    const response = await fetch(`${url}/ping?echo=atrium`)
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { pong: 'atrium' })
  })

  test('connects Lucid to the selected database', async ({ assert }) => {
    const db = await createDatabase()
    assert.equal(
      db.connection().dialect.name,
      {
        sqlite: 'better-sqlite3',
        pg: 'postgres',
        mysql: 'mysql',
      }[dialect()]
    )
    await db.connection().schema.dropTableIfExists('atrium_harness_probe')
    await db.connection().schema.createTable('atrium_harness_probe', (table) => {
      table.increments('id')
      table.string('name')
    })
    await db.table('atrium_harness_probe').insert({ name: 'probe' })
    const rows = await db.from('atrium_harness_probe').select('name')
    assert.deepEqual(
      rows.map((row) => row.name),
      ['probe']
    )
    await db.connection().schema.dropTable('atrium_harness_probe')
  })

  test('boots Lucid inside the app when asked', async ({ assert }) => {
    const { app } = await setupApp({ database: true, http: false })
    const db = await app.container.make('lucid.db')
    const [row] = await db.from(db.raw('(select 1 as one) as probe')).select('one')
    assert.equal(Number(row.one), 1)
  })

  test('talks to the local Redis', async ({ assert }) => {
    const redis = createRedis('atrium:test:harness:')
    await redis.set('atrium:test:harness:key', 'value')
    assert.equal(await redis.get('atrium:test:harness:key'), 'value')
  })
})
