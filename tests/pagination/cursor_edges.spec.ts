import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import {
  KeysetDate,
  decodeCursor,
  encodeCursor,
  inspectCursor,
  keysetFingerprint,
  readCursor,
} from '../../src/pagination/cursor.ts'

/** A cursor whose JSON body is written by hand */
const body = (json: unknown) =>
  Buffer.from(typeof json === 'string' ? json : JSON.stringify(json)).toString('base64url')
const bodyOf = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))

test.group('Cursor encoding edges', () => {
  test('every kind of key value encodes and decodes; undefined becomes null', ({ assert }) => {
    const luxon = DateTime.fromISO('2025-01-02T03:04:05.678Z')
    const cursor = encodeCursor([undefined, null, false, true, 10n, 'text', -2.5, luxon])
    const values = decodeCursor(cursor)!
    assert.deepEqual(values.slice(0, 7), [null, null, false, true, '10', 'text', -2.5])
    assert.instanceOf(values[7], KeysetDate)
    assert.equal((values[7] as Date).toISOString(), '2025-01-02T03:04:05.678Z')
    assert.deepEqual(bodyOf(cursor).v[7], { d: '2025-01-02T03:04:05.678Z' })
  })

  test('a date keeps the database text only when it has one', ({ assert }) => {
    const precise = new KeysetDate('2025-01-02T03:04:05.678Z', '2025-01-02 03:04:05.678912+00')
    const plain = new Date('2025-01-02T03:04:05.678Z')
    const cursor = encodeCursor([precise, plain, new KeysetDate(plain)])
    assert.deepEqual(bodyOf(cursor).v, [
      { d: '2025-01-02T03:04:05.678Z', p: '2025-01-02 03:04:05.678912+00' },
      { d: '2025-01-02T03:04:05.678Z' },
      { d: '2025-01-02T03:04:05.678Z' },
    ])
    const [first, second] = decodeCursor(cursor) as KeysetDate[]
    assert.equal(first.precise, '2025-01-02 03:04:05.678912+00')
    assert.isUndefined(second.precise)
  })

  test('a value that cannot be a key is refused by name', ({ assert }) => {
    assert.throws(() => encodeCursor([Number.NaN]), TypeError, 'Cannot put a number in a cursor')
    assert.throws(() => encodeCursor([Infinity]), 'Cannot put a number in a cursor')
    assert.throws(() => encodeCursor([{ id: 1 }]), 'Cannot put a object in a cursor')
    assert.throws(() => encodeCursor([Symbol('s')]), 'Cannot put a symbol in a cursor')
  })

  test('hand-made bodies: a non-string precision, a non-finite number, a non-string date are no cursor', ({
    assert,
  }) => {
    assert.isNull(decodeCursor(body({ v: [{ d: '2025-01-01T00:00:00Z', p: 5 }] })))
    assert.isNull(decodeCursor(body('{"v":[1e999]}')))
    assert.isNull(decodeCursor(body({ v: [{ d: 5 }] })))
    const kept = decodeCursor(body({ v: [{ d: '2025-01-01T00:00:00Z', p: 'db text' }, null] }))!
    assert.equal((kept[0] as KeysetDate).precise, 'db text')
    assert.isNull(kept[1])
  })

  test('a date text of 64 characters is read, one of 65 is not', ({ assert }) => {
    // V8 reads the parenthesised part as a comment, so only the length differs
    const date = (length: number) => {
      const head = 'Tue Mar 04 2025 05:06:07 GMT+0000 ('
      return `${head}${'x'.repeat(length - head.length - 1)})`
    }
    assert.lengthOf(date(64), 64)
    const read = decodeCursor(body({ v: [{ d: date(64) }] }))!
    assert.equal((read[0] as Date).toISOString(), '2025-03-04T05:06:07.000Z')
    assert.isNull(decodeCursor(body({ v: [{ d: date(65) }] })))
  })

  test('one invalid date among valid values makes the whole cursor unreadable', ({ assert }) => {
    const mixed = body({ v: [{ d: '2025-01-01T00:00:00Z' }, { d: 'not a date' }] })
    assert.isNull(readCursor(mixed))
    assert.isNull(decodeCursor(body({ v: [{ d: 'not a date' }, 1] })))
    assert.deepEqual(decodeCursor(body({ v: [{ d: '2025-01-01T00:00:00Z' }, 1] }))?.[1], 1)
  })

  test('the fingerprint tells apart column order, direction and field names, in 10 characters', ({
    assert,
  }) => {
    const ab = keysetFingerprint([
      { field: 'a', direction: 'asc' },
      { field: 'b', direction: 'asc' },
    ])
    assert.lengthOf(ab, 10)
    assert.match(ab, /^[\w-]{10}$/)
    assert.equal(
      ab,
      keysetFingerprint([
        { field: 'a', direction: 'asc' },
        { field: 'b', direction: 'asc' },
      ])
    )
    const others = [
      [
        { field: 'b', direction: 'asc' },
        { field: 'a', direction: 'asc' },
      ],
      [
        { field: 'a', direction: 'asc' },
        { field: 'b', direction: 'desc' },
      ],
      // the same characters joined differently
      [{ field: 'a:ascb', direction: 'asc' }],
      [{ field: 'a', direction: 'ascb:asc' }],
    ] as const
    for (const keyset of others) {
      assert.notEqual(keysetFingerprint(keyset as any), ab, JSON.stringify(keyset))
    }
  })

  test('the segment-end hint is kept when it is after or before, and dropped otherwise', ({
    assert,
  }) => {
    assert.deepEqual(readCursor(encodeCursor([1], { segmentEnd: 'after' })), {
      values: [1],
      segmentEnd: 'after',
    })
    assert.deepEqual(readCursor(encodeCursor([1], { segmentEnd: 'before' })), {
      values: [1],
      segmentEnd: 'before',
    })
    assert.notProperty(bodyOf(encodeCursor([1])), 'e')
    assert.deepEqual(readCursor(encodeCursor([1])), { values: [1] })
    assert.deepEqual(readCursor(body({ v: [1], e: 'sideways' })), { values: [1] })
  })

  test('a signed cursor reads only with its secret; an unsigned one never reads while a secret is set', ({
    assert,
  }) => {
    const signed = encodeCursor([1], { secret: 'k1' })
    const [payload, signature] = signed.split('.')
    assert.equal(payload, encodeCursor([1]))
    assert.match(signature, /^[\w-]{43}$/)
    assert.deepEqual(decodeCursor(signed, { secret: 'k1' }), [1])
    assert.isNull(decodeCursor(signed, { secret: 'k2' }))
    assert.isNull(decodeCursor(signed))
    assert.isNull(decodeCursor(encodeCursor([1]), { secret: 'k1' }))
    assert.isNull(decodeCursor(`${payload}.${signature.slice(0, -1)}`, { secret: 'k1' }))
    assert.isNull(decodeCursor(`${payload}.${signature}x`, { secret: 'k1' }))
  })

  test('characters outside base64url anywhere in the payload make it unreadable', ({ assert }) => {
    const valid = encodeCursor([1])
    // Node's base64url decoder would skip them and read the rest
    assert.equal(Buffer.from(`!!${valid}`, 'base64url').toString(), '{"v":[1]}')
    assert.isNull(decodeCursor(`!!${valid}`))
    assert.isNull(decodeCursor(`${valid}!!`))
    assert.isNull(decodeCursor(`${valid.slice(0, 2)}!${valid.slice(2)}`))
  })

  test('inspectCursor: a cursor of another sort is foreign, one without any fingerprint unreadable', ({
    assert,
  }) => {
    assert.deepEqual(inspectCursor(encodeCursor([1], { fingerprint: 'b' }), { fingerprint: 'a' }), {
      kind: 'foreign',
    })
    assert.deepEqual(inspectCursor(encodeCursor([1]), { fingerprint: 'a' }), { kind: 'unreadable' })
    assert.deepEqual(inspectCursor(encodeCursor([1], { fingerprint: 'a' }), { fingerprint: 'a' }), {
      kind: 'cursor',
      cursor: { values: [1] },
    })
    assert.deepEqual(inspectCursor(body({ v: [1], f: 'a' })), {
      kind: 'cursor',
      cursor: { values: [1] },
    })
    for (const bad of [
      5,
      null,
      undefined,
      '',
      body(5),
      body('"text"'),
      body({ v: 'x' }),
      body([1]),
    ]) {
      assert.deepEqual(inspectCursor(bad), { kind: 'unreadable' }, String(bad))
    }
  })
})
