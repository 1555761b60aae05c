import { test } from '@japa/runner'
import { entryId, isEntryId } from '../../src/console/ids.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import { ConsoleRecorder } from '../../src/console/recorder.ts'
import { flatChunks, INSERT_CHUNK } from '../../src/console/stores/bulk_insert.ts'
import { ROW_WIDTH, rowsOfFlat } from '../../src/console/stores/flat_rows.ts'
import { MemoryConsoleStore } from '../../src/console/stores/memory.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'
import { requestEntry } from './entry_factories.ts'

function queryEntry(sql: string, bindings: unknown[]) {
  return {
    type: 'query' as const,
    summary: sql,
    status: null,
    method: null,
    durationMs: 1,
    slow: false,
    tags: [] as string[],
    content: { sql, bindings },
  }
}

/** The stored queries of one committed batch, in order */
async function committedQueries(queries: [string, unknown[]][]) {
  const store = new MemoryConsoleStore()
  const recorder = new ConsoleRecorder(resolveConsoleConfig({}), store)
  const batch = recorder.openBatch()
  for (const [sql, bindings] of queries) recorder.record(queryEntry(sql, bindings), batch)
  recorder.commit(batch)
  await recorder.flush()
  const { data } = await store.list({ type: 'query', limit: 100 })
  const stored = await Promise.all(data.reverse().map((summary) => store.find(summary.id)))
  return stored.map((entry) => ({
    duplicate: entry!.tags.includes('duplicate'),
    duplicates: entry!.content.duplicates,
  }))
}

test.group('Console record path', () => {
  test('ids are 24 hex digits, strictly increasing within a millisecond, and start with the time', ({
    assert,
  }) => {
    const before = Date.now()
    const ids = Array.from({ length: 5000 }, () => entryId())
    const after = Date.now()
    for (const [index, id] of ids.entries()) {
      assert.isTrue(isEntryId(id), id)
      if (index > 0) assert.isTrue(id > ids[index - 1], `${id} after ${ids[index - 1]}`)
    }
    // past 256 ids in one millisecond, the sequence's middle digits carry
    assert.equal(new Set(ids).size, ids.length)
    for (const id of [ids[0], ids.at(-1)!]) {
      const time = Number.parseInt(id.slice(0, 12), 16)
      assert.isAtLeast(time, before)
      assert.isAtMost(time, after)
    }
  })

  test('a repeated query is marked even when another query runs between the two', async ({
    assert,
  }) => {
    const marks = await committedQueries([
      ['select ? as marker', [1]],
      ['select 2', []],
      ['select ? as marker', [1]],
      ['select ? as marker', [2]],
    ])
    assert.deepEqual(marks, [
      { duplicate: true, duplicates: 2 },
      { duplicate: false, duplicates: undefined },
      { duplicate: true, duplicates: 2 },
      { duplicate: false, duplicates: undefined },
    ])
  })

  test('a batch of many distinct queries marks none, and its repeats past the pairwise check are marked', async ({
    assert,
  }) => {
    const distinct = Array.from(
      { length: 20 },
      (_, index) => [`select ${index}`, []] as [string, []]
    )
    const marks = await committedQueries(distinct)
    assert.isTrue(marks.every((mark) => !mark.duplicate))
    const repeated = await committedQueries([...distinct, ['select 19', []]])
    assert.deepEqual(repeated.at(-1), { duplicate: true, duplicates: 2 })
    assert.deepEqual(repeated.at(-2), { duplicate: true, duplicates: 2 })
    assert.isFalse(repeated[0].duplicate)
  })

  test('flat chunks hold every entry as one row of its columns, at most one chunk of rows each', ({
    assert,
  }) => {
    const entries: ConsoleEntry[] = Array.from({ length: INSERT_CHUNK + 3 }, (_, index) =>
      requestEntry(1_700_000_000_000 + index, `/route/${index}`, index)
    )
    const chunks = flatChunks(entries)
    assert.deepEqual(
      chunks.map((chunk) => chunk.length),
      [INSERT_CHUNK * ROW_WIDTH, 3 * ROW_WIDTH]
    )
    const rows = chunks.flatMap((chunk) => rowsOfFlat(chunk))
    assert.lengthOf(rows, entries.length)
    const last = entries.at(-1)!
    assert.deepEqual(rows.at(-1), [
      last.id,
      last.batchId,
      'request',
      last.summary,
      200,
      'GET',
      last.durationMs,
      false,
      '',
      last.createdAt,
      last.content,
    ])
  })
})
