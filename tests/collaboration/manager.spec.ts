/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import * as Y from 'yjs'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import { connectClient, setupCollabApp, waitFor } from './helpers.ts'

test.group('Collaboration manager', () => {
  test('the service exports the atrium.collaboration binding once the app has booted', async ({
    assert,
  }) => {
    const { manager } = await setupCollabApp()
    const { default: collaboration } = await import('../../services/collaboration.ts')
    assert.strictEqual(collaboration, manager)
  })

  test('engineFor: engineFor first, then the pattern, then the default; aliases read as names', async ({
    assert,
  }) => {
    const { manager } = await setupCollabApp({
      documents: { 'pinned/:id': { engine: 'crdt_a' } },
    })
    assert.equal(await manager.engineFor({ docName: 'pinned/1' }), 'yjs')
    assert.equal(await manager.engineFor({ docName: 'other/1' }), 'yjs')
    const routed = await setupCollabApp({
      engineFor: (docName) => (docName.startsWith('crdt/') ? 'crdt_a' : ('nothing' as any)),
    })
    assert.equal(await routed.manager.engineFor({ docName: 'crdt/1' }), 'yjs')
    await assert.rejects(
      () => routed.manager.engineFor({ docName: 'x/1' }),
      /"engineFor" in config\/collaboration.ts returned "nothing" for "x\/1"/
    )
  })

  test('restoring a version after deletions brings the deleted content back as new changes', async ({
    assert,
  }) => {
    const storage = new InMemoryCollaborationStorage()
    const { wsBase, manager } = await setupCollabApp({ storage })
    const client = connectClient(wsBase, 'notes/restore')
    await client.synced
    client.text.insert(0, 'The quick brown fox jumps')
    await waitFor(
      async () =>
        (await manager.getDocumentText({ docName: 'notes/restore' })) ===
        'The quick brown fox jumps'
    )
    const v1 = await manager.createVersion({
      docName: 'notes/restore',
      createdBy: 'u1',
      label: 'draft',
    })
    assert.equal(v1.seq, 1)
    assert.equal(v1.label, 'draft')

    client.text.delete(4, 12)
    client.text.insert(client.text.length, ' high')
    await waitFor(
      async () =>
        (await manager.getDocumentText({ docName: 'notes/restore' })) === 'The fox jumps high'
    )

    await manager.restoreVersion({ docName: 'notes/restore', versionId: v1.id, restoredBy: 'u2' })
    await waitFor(
      () => client.text.toString() === 'The quick brown fox jumps',
      5000,
      'the client to see the restore'
    )
    assert.equal(
      await manager.getDocumentText({ docName: 'notes/restore' }),
      'The quick brown fox jumps'
    )

    const versions = await manager.listVersions({ docName: 'notes/restore' })
    assert.deepEqual(
      versions.map(({ seq, label, createdBy }) => ({ seq, label, createdBy })),
      [
        { seq: 2, label: 'restored from #1', createdBy: 'u2' },
        { seq: 1, label: 'draft', createdBy: 'u1' },
      ]
    )
    const replaced = await manager.getVersionState({
      docName: 'notes/restore',
      versionId: versions[0].id,
    })
    const doc = new Y.Doc()
    Y.applyUpdate(doc, replaced)
    assert.equal(doc.getText('content').toString(), 'The fox jumps high')
    assert.deepEqual(
      await manager.diffVersions({ docName: 'notes/restore', aId: v1.id, bId: versions[0].id }),
      { added: 5, removed: 12 }
    )
  })

  test('restoring a document that is not open restores maps and texts in storage', async ({
    assert,
  }) => {
    const storage = new InMemoryCollaborationStorage()
    const { manager } = await setupCollabApp({ storage })
    const doc = new Y.Doc()
    doc.getMap('meta').set('title', 'Original')
    doc.getMap('meta').set('tags', ['a', 'b'])
    doc.getText('content').insert(0, 'body')
    await manager.persistDocument({ docName: 'cold/1', state: Y.encodeStateAsUpdate(doc) })
    const version = await manager.createVersion({ docName: 'cold/1', createdBy: null })

    const change = new Y.Doc()
    Y.applyUpdate(change, await manager.getDocumentState({ docName: 'cold/1' }))
    change.getMap('meta').set('title', 'Changed')
    change.getMap('meta').delete('tags')
    change.getText('content').delete(0, 4)
    await manager.persistDocument({ docName: 'cold/1', state: Y.encodeStateAsUpdate(change) })
    assert.equal(await manager.getDocumentText({ docName: 'cold/1' }), '')

    await manager.restoreVersion({ docName: 'cold/1', versionId: version.id, restoredBy: 'u1' })
    const restored = new Y.Doc()
    Y.applyUpdate(restored, await manager.getDocumentState({ docName: 'cold/1' }))
    assert.deepEqual(restored.getMap('meta').toJSON(), { title: 'Original', tags: ['a', 'b'] })
    assert.equal(restored.getText('content').toString(), 'body')
    assert.isFalse(await manager.hasLiveDocument({ docName: 'cold/1' }))
  })

  test('getVersionState throws on an unknown id and prune keeps N per document', async ({
    assert,
  }) => {
    const { manager } = await setupCollabApp({ storage: new InMemoryCollaborationStorage() })
    await assert.rejects(
      () => manager.getVersionState({ docName: 'a/1', versionId: 'nope' }),
      /Unknown version/
    )
    for (const docName of ['a/1', 'a/2']) {
      for (let index = 0; index < 3; index++) {
        await manager.createVersion({ docName, createdBy: 'u1' })
      }
    }
    assert.equal(await manager.pruneVersions({ keep: 1, dryRun: true }), 4)
    assert.equal(await manager.pruneVersions({ keep: 2, docName: 'a/1' }), 1)
    assert.equal(await manager.pruneVersions({ keep: 1 }), 3)
    assert.deepEqual(
      (await manager.listVersions({ docName: 'a/1' })).map(({ seq }) => seq),
      [3]
    )
  })

  test('persistDocument throws without a configured storage', async ({ assert }) => {
    const { manager } = await setupCollabApp()
    await assert.rejects(
      () => manager.persistDocument({ docName: 'x/1', state: Y.encodeStateAsUpdate(new Y.Doc()) }),
      /needs a configured storage/
    )
  })

  test('withLiveDocument runs only on an open document', async ({ assert }) => {
    const { wsBase, manager } = await setupCollabApp()
    let runs = 0
    const closed = await manager.withLiveDocument({ docName: 'live/1', run: () => runs++ })
    assert.deepEqual(closed, { live: false, reason: 'not-loaded' })
    assert.equal(runs, 0)
    const client = connectClient(wsBase, 'live/1')
    await client.synced
    const open = await manager.withLiveDocument({
      docName: 'live/1',
      run: (doc: Y.Doc) => {
        doc.getText('content').insert(0, 'server side')
        return 'ok'
      },
    })
    assert.deepEqual(open, { live: true, value: 'ok' })
    await waitFor(() => client.text.toString() === 'server side')
  })

  test('comments: three anchor kinds, spaces, resolve, unresolve and remove', async ({
    assert,
  }) => {
    const { manager } = await setupCollabApp({ storage: new InMemoryCollaborationStorage() })
    const text = await manager.comments.create('doc/1', {
      space: 'review',
      anchor: { kind: 'text-range', start: 1, end: 5, selectedText: 'ello' },
      body: 'typo?',
      userId: 'u1',
      authorName: 'Ann',
    })
    await manager.comments.create('doc/1', {
      space: 'design',
      anchor: { kind: 'canvas-object', shapeId: 'rect-1', relativeX: 0.5, relativeY: 0.25 },
      body: 'align',
      userId: 'u2',
    })
    await manager.comments.create('doc/1', {
      space: 'review',
      anchor: { kind: 'timestamp', at: 12.5, end: 14 },
      body: 'cut here',
      userId: 'u2',
    })
    assert.lengthOf(await manager.comments.list('doc/1'), 3)
    assert.deepEqual(
      (await manager.comments.list('doc/1', 'review')).map(({ body }) => body),
      ['typo?', 'cut here']
    )
    const resolved = await manager.comments.resolve('doc/1', text.id, true)
    assert.isString(resolved!.resolvedAt)
    const reopened = await manager.comments.resolve('doc/1', text.id, false)
    assert.isNull(reopened!.resolvedAt)
    assert.isNull(await manager.comments.resolve('doc/1', 'missing', true))
    assert.isTrue(await manager.comments.remove('doc/1', text.id))
    assert.isFalse(await manager.comments.remove('doc/1', text.id))
    assert.isNull(await manager.comments.get('doc/1', text.id))
  })
})
