import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import {
  KeysetDate,
  buildKeyset,
  decodeCursor,
  defineFilters,
  encodeCursor,
  extractCursorValues,
} from '../../src/pagination/main.ts'
import { PgTestOrder, withSeededOrders } from './helpers.ts'

test.group('Cursor primitives', () => {
  test('a cursor is base64url JSON and dates round-trip as dates', ({ assert }) => {
    const date = new Date('2025-03-04T05:06:07.089Z')
    const cursor = encodeCursor([date, 'paid', 42, null, true])
    assert.match(cursor, /^[\w-]+$/)
    assert.isObject(JSON.parse(Buffer.from(cursor, 'base64url').toString()))
    const values = decodeCursor(cursor)!
    assert.instanceOf(values[0], Date)
    assert.equal((values[0] as Date).toISOString(), date.toISOString())
    assert.deepEqual(values.slice(1), ['paid', 42, null, true])
  })

  test('decodeCursor returns null for anything malformed', ({ assert }) => {
    for (const bad of ['', '!!', 'bm90IGpzb24', encodeCursor([]).slice(0, 5), 'x'.repeat(5000)]) {
      assert.isNull(decodeCursor(bad), bad.slice(0, 20))
    }
    const objectValue = Buffer.from(JSON.stringify({ v: [{ nope: 1 }] })).toString('base64url')
    assert.isNull(decodeCursor(objectValue))
    assert.isNull(decodeCursor(encodeCursor([1], { fingerprint: 'a' }), { fingerprint: 'b' }))
  })

  test('decodeCursor reads a JSON null body as no cursor and accepts exactly MAX_CURSOR_LENGTH characters', ({
    assert,
  }) => {
    const body = (json: string) => Buffer.from(json).toString('base64url')
    assert.isNull(decodeCursor(body('null')))
    assert.isNull(decodeCursor(''))
    const valid = encodeCursor([1])
    assert.deepEqual(decodeCursor(valid), [1])
    // 1536 bytes of JSON are exactly MAX_CURSOR_LENGTH (2048) base64url characters
    const longest = body(`{"v":[1],"x":"${'a'.repeat(1520)}"}`)
    assert.lengthOf(longest, 2048)
    assert.deepEqual(decodeCursor(longest), [1])
    assert.isNull(decodeCursor(`${longest}A`))
  })

  test('buildKeyset appends the primary key with the direction of the last sort column', ({
    assert,
  }) => {
    assert.deepEqual(buildKeyset('-createdAt,title', 'id'), [
      { field: 'createdAt', direction: 'desc' },
      { field: 'title', direction: 'asc' },
      { field: 'id', direction: 'asc' },
    ])
    assert.deepEqual(buildKeyset('-amount', 'id'), [
      { field: 'amount', direction: 'desc' },
      { field: 'id', direction: 'desc' },
    ])
    assert.deepEqual(buildKeyset('', 'id'), [{ field: 'id', direction: 'asc' }])
    assert.deepEqual(buildKeyset('-id', 'id'), [{ field: 'id', direction: 'desc' }])
  })

  test('extractCursorValues reads models and plain rows', ({ assert }) => {
    const keyset = buildKeyset('-createdAt', 'id')
    const values = extractCursorValues(
      { createdAt: DateTime.fromISO('2025-01-01T00:00:00Z'), id: 7 },
      keyset
    )
    assert.instanceOf(values[0], KeysetDate)
    assert.equal(values[1], 7)
    assert.deepEqual(extractCursorValues({ status: null, id: 3 }, buildKeyset('status', 'id')), [
      null,
      3,
    ])
  })
})

test.group('Cursor precision', (group) => {
  withSeededOrders(group)

  test('a timestamp cursor keeps the microseconds while callers receive dates', async ({
    assert,
  }) => {
    const runner = defineFilters(PgTestOrder, { sortable: ['createdAt'] }).with({
      config: {},
    })
    const page = await runner.findPage(PgTestOrder, { sort: 'createdAt', paginate: { first: 40 } })
    assert.isTrue(DateTime.isDateTime(page.items[0].createdAt))
    assert.notProperty(page.items[0].$extras, '__atrium_k0')
    let cursor: string | undefined
    const texts: string[] = []
    for (let index = 0; index < 30; index++) {
      const single = await runner.findPage(PgTestOrder, {
        sort: 'createdAt',
        paginate: { first: 1, after: cursor },
      })
      cursor = single.endCursor!
      const boundary = decodeCursor(cursor)![0] as KeysetDate
      assert.instanceOf(boundary, Date)
      texts.push(boundary.precise!)
    }
    // The database's own text keeps digits below the millisecond a JavaScript date drops
    assert.isTrue(
      texts.some((text) => /\.\d{3}[1-9]|\.\d{4}[1-9]|\.\d{5}[1-9]/.test(text)),
      texts.join(', ')
    )
  })
})
