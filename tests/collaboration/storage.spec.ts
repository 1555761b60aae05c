/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { getActiveTest, test } from '@japa/runner'
import { createDatabase } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { FileSystemStorage } from '../../src/collaboration/storage/file_system.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'
import type { CollabComment, CollaborationStorage } from '../../src/collaboration/types.ts'

type Factory = (context: { fs: { basePath: string } }) => Promise<CollaborationStorage>

const factories: Record<string, Factory> = {
  'in-memory': async () => new InMemoryCollaborationStorage(),
  'file system': async ({ fs }) => new FileSystemStorage(fs.basePath),
  'relational': async () => {
    const db = await createDatabase()
    await migrateStubs(db, 'collaboration')
    getActiveTest()!.cleanup(() => dropStubTables(db, 'collaboration'))
    return relationalStorage({ db })
  },
}

const bytes = (...values: number[]) => new Uint8Array(values)

function comment(id: string, space: string, createdAt: string): CollabComment {
  return {
    id,
    documentName: 'doc/1',
    space,
    anchor: { kind: 'text-range', start: 0, end: 4, selectedText: 'text' },
    body: `body ${id}`,
    userId: 'u1',
    authorName: 'Ann',
    resolvedAt: null,
    createdAt,
    updatedAt: null,
  }
}

for (const [name, factory] of Object.entries(factories)) {
  test.group(`Collaboration storage: ${name}`, () => {
    test('a never-stored document loads as null and a saved one round-trips', async (context) => {
      const { assert } = context
      const storage = await factory(context as any)
      assert.isNull(await storage.loadDocument('doc/1'))
      await storage.saveDocument('doc/1', bytes(1, 2, 3, 0, 255))
      const stored = await storage.loadDocument('doc/1')
      assert.deepEqual([...stored!.state], [1, 2, 3, 0, 255])
      assert.deepEqual(stored!.updates ?? [], [])
    })

    test('appended updates load after the state until a compaction folds them in', async (context) => {
      const { assert } = context
      const storage = await factory(context as any)
      await storage.appendUpdate!('doc/1', bytes(7, 7))
      let stored = await storage.loadDocument('doc/1')
      assert.deepEqual(stored!.state.byteLength, 0)
      assert.deepEqual(
        stored!.updates!.map((update) => [...update]),
        [[7, 7]]
      )

      await storage.saveDocument('doc/1', bytes(1))
      await storage.appendUpdate!('doc/1', bytes(2))
      await storage.appendUpdate!('doc/1', bytes(3, 4))
      stored = await storage.loadDocument('doc/1')
      assert.deepEqual([...stored!.state], [1])
      assert.deepEqual(
        stored!.updates!.map((update) => [...update]),
        [[2], [3, 4]]
      )

      await storage.compactDocument!('doc/1', bytes(9, 9, 9))
      stored = await storage.loadDocument('doc/1')
      assert.deepEqual([...stored!.state], [9, 9, 9])
      assert.deepEqual(stored!.updates ?? [], [])
    })

    test('versions list newest first by page and prune keeps N per document', async (context) => {
      const { assert } = context
      const storage = await factory(context as any)
      for (const docName of ['doc/1', 'doc/2']) {
        for (let seq = 1; seq <= 3; seq++) {
          await storage.saveVersion(
            docName,
            {
              id: `${docName.replace('/', '-')}-v${seq}`,
              seq,
              label: seq === 1 ? 'first' : null,
              createdBy: 'u1',
              createdAt: new Date(2026, 0, seq).toISOString(),
            },
            bytes(seq)
          )
        }
      }
      const all = await storage.listVersions('doc/1')
      assert.deepEqual(
        all.map((version) => version.seq),
        [3, 2, 1]
      )
      assert.equal(all[2].label, 'first')
      const page2 = await storage.listVersions('doc/1', { page: 2, size: 2 })
      assert.deepEqual(
        page2.map((version) => version.seq),
        [1]
      )
      assert.deepEqual([...(await storage.loadVersionSnapshot('doc/1', 'doc-1-v2'))!], [2])
      assert.isNull(await storage.loadVersionSnapshot('doc/1', 'missing'))

      assert.equal(await storage.pruneVersions({ keep: 1, dryRun: true }), 4)
      assert.lengthOf(await storage.listVersions('doc/1'), 3)
      assert.equal(await storage.pruneVersions({ keep: 2, docName: 'doc/2' }), 1)
      assert.equal(await storage.pruneVersions({ keep: 1 }), 3)
      assert.deepEqual(
        (await storage.listVersions('doc/1')).map((version) => version.seq),
        [3]
      )
      assert.deepEqual(
        (await storage.listVersions('doc/2')).map((version) => version.seq),
        [3]
      )
    })

    test('comments list oldest first, by space and page, and update and delete', async (context) => {
      const { assert } = context
      const storage = await factory(context as any)
      await storage.saveComment('doc/1', comment('c2', 'review', '2026-01-02T00:00:00.000Z'))
      await storage.saveComment('doc/1', comment('c1', 'review', '2026-01-01T00:00:00.000Z'))
      await storage.saveComment('doc/1', comment('c3', 'notes', '2026-01-03T00:00:00.000Z'))
      assert.deepEqual(
        (await storage.listComments('doc/1')).map(({ id }) => id),
        ['c1', 'c2', 'c3']
      )
      assert.deepEqual(
        (await storage.listComments('doc/1', 'review')).map(({ id }) => id),
        ['c1', 'c2']
      )
      assert.deepEqual(
        (await storage.listComments('doc/1', undefined, { page: 2, size: 2 })).map(({ id }) => id),
        ['c3']
      )
      const first = await storage.getComment!('doc/1', 'c1')
      assert.deepEqual(first!.anchor, {
        kind: 'text-range',
        start: 0,
        end: 4,
        selectedText: 'text',
      })
      await storage.saveComment('doc/1', { ...first!, resolvedAt: '2026-02-01T00:00:00.000Z' })
      assert.equal(
        (await storage.getComment!('doc/1', 'c1'))!.resolvedAt,
        '2026-02-01T00:00:00.000Z'
      )
      assert.lengthOf(await storage.listComments('doc/1'), 3)
      await storage.deleteComment('doc/1', 'c1')
      assert.isNull(await storage.getComment!('doc/1', 'c1'))
      assert.lengthOf(await storage.listComments('doc/2'), 0)
    })

    test('a value longer than its column is refused whole, never cut; long comments keep every byte', async (context) => {
      const { assert } = context
      const storage = await factory(context as any)
      const version = {
        id: 'v1',
        seq: 1,
        label: 'l'.repeat(256),
        createdBy: 'u1',
        createdAt: new Date().toISOString(),
      }
      if (name === 'relational') {
        await assert.rejects(
          () => storage.saveVersion('doc/1', version, bytes(1)),
          /Cannot store collab_versions.label: the value is longer than the column holds \(255 characters\)/
        )
        assert.deepEqual(await storage.listVersions('doc/1'), [])
        await assert.rejects(
          () =>
            storage.saveComment('doc/1', {
              ...comment('c1', 's'.repeat(300), '2026-01-01'),
              id: 'c1',
            }),
          /collab_comments.space/
        )
      } else {
        await storage.saveVersion('doc/1', version, bytes(1))
        assert.equal((await storage.listVersions('doc/1'))[0].label, version.label)
      }
      // 20,000 four-byte characters: 80,000 bytes, more than a MySQL "text" holds
      const body = '😀'.repeat(20_000)
      await storage.saveComment('doc/1', { ...comment('c2', 'review', '2026-01-02'), body })
      assert.equal((await storage.getComment!('doc/1', 'c2'))!.body, body)
    })

    test('every write rejects when the document name is invalid', async (context) => {
      const { assert } = context
      const storage = await factory(context as any)
      for (const write of [
        () => storage.saveDocument('..', bytes(1)),
        () => storage.appendUpdate!('a/../b', bytes(1)),
        () => storage.saveComment('.', comment('c1', 'review', '2026-01-01')),
        () =>
          storage.saveVersion(
            '',
            { id: 'v', seq: 1, label: null, createdBy: null, createdAt: '' },
            bytes(1)
          ),
      ]) {
        await assert.rejects(write, /Invalid document name/)
      }
    })
  })
}
