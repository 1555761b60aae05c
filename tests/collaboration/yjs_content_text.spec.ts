import { test } from '@japa/runner'
import * as Y from 'yjs'
import {
  diffStrings,
  docFromState,
  flatten,
  replaceDocContent,
  rootKinds,
  textOfDoc,
} from '../../src/collaboration/engines/yjs/content.ts'

/**
 * Database-free: what the versions routes show of a stored Yjs document (its
 * root kinds, its text, the one string a diff compares), the character diff
 * between two versions, and a restore of every kind of root, on documents
 * decoded from bytes as the routes decode them.
 */
function stored(build: (doc: Y.Doc) => void) {
  const doc = new Y.Doc()
  build(doc)
  return docFromState(Y.encodeStateAsUpdate(doc))
}

test.group('Yjs document content: kinds and text', () => {
  test('every kind of root is recognised from bytes alone', ({ assert }) => {
    const doc = stored((source) => {
      source.getText('plain').insert(0, 'words')
      source.getText('formatted').insert(0, 'bold', { bold: true })
      source.getText('embedded').insertEmbed(0, { image: 'a.png' })
      source.getMap('settings').set('theme', 'dark')
      source.getArray('numbers').insert(0, [1, 2])
      source.getArray('blobs').insert(0, [new Uint8Array([1])])
      source.getArray('nested').insert(0, [new Y.Map()])
      source.getXmlFragment('rich').insert(0, [new Y.XmlText('x')])
      source.getXmlFragment('elements').insert(0, [new Y.XmlElement('p')])
      // its first item deleted: the kind is read from the first item still holding content
      source.getText('edited').insert(0, 'ab')
      source.getText('edited').delete(0, 1)
    })
    assert.deepEqual(Object.fromEntries(rootKinds(doc)), {
      plain: 'text',
      formatted: 'text',
      embedded: 'text',
      edited: 'text',
      settings: 'map',
      numbers: 'array',
      blobs: 'array',
      nested: 'array',
      rich: 'xml',
      elements: 'xml',
    })
  })

  test('roots accessed by name keep the kind they were accessed as', ({ assert }) => {
    const doc = new Y.Doc()
    doc.getText('t')
    doc.getMap('m')
    doc.getArray('a')
    doc.getXmlFragment('x')
    assert.deepEqual(Object.fromEntries(rootKinds(doc)), {
      t: 'text',
      m: 'map',
      a: 'array',
      x: 'xml',
    })
  })

  test('an empty state is an empty document', ({ assert }) => {
    const doc = docFromState(new Uint8Array())
    assert.equal(rootKinds(doc).size, 0)
    assert.equal(textOfDoc(doc), '')
    // deleted content stays readable for the diff of an older version
    assert.isFalse(doc.gc)
  })

  test('the text is the root text `content`, else the first root text by name', ({ assert }) => {
    assert.equal(
      textOfDoc(
        stored((doc) => {
          doc.getText('a-notes').insert(0, 'first by name')
          doc.getText('content').insert(0, 'the content')
        })
      ),
      'the content'
    )
    assert.equal(
      textOfDoc(
        stored((doc) => {
          doc.getText('zeta').insert(0, 'last')
          doc.getText('beta').insert(0, 'first')
          doc.getMap('alpha').set('k', 'a map is not text')
        })
      ),
      'first'
    )
    assert.equal(textOfDoc(stored((doc) => doc.getMap('only').set('k', 1))), '')
  })

  test('flatten joins every root by name: text, JSON of maps and arrays, XML', ({ assert }) => {
    const doc = stored((source) => {
      source.getText('b-text').insert(0, 'hello')
      source.getMap('a-map').set('k', 1)
      source.getArray('c-array').insert(0, ['x'])
      const paragraph = new Y.XmlElement('p')
      paragraph.insert(0, [new Y.XmlText('hi')])
      source.getXmlFragment('d-xml').insert(0, [paragraph])
    })
    assert.equal(flatten(doc), '{"k":1}\nhello\n["x"]\n<p>hi</p>')
  })
})

test.group('Yjs document content: diff', () => {
  test('counts characters added and removed around the common ends', ({ assert }) => {
    assert.deepEqual(diffStrings('same', 'same'), { added: 0, removed: 0 })
    assert.deepEqual(diffStrings('', 'new'), { added: 3, removed: 0 })
    assert.deepEqual(diffStrings('gone', ''), { added: 0, removed: 4 })
    assert.deepEqual(diffStrings('hello world', 'hello brave world'), { added: 6, removed: 0 })
    assert.deepEqual(diffStrings('hello brave world', 'hello world'), { added: 0, removed: 6 })
    assert.deepEqual(diffStrings('the cat sat', 'the dog sat'), { added: 3, removed: 3 })
    // the prefix and the suffix overlap: "aa" -> "aaa" is one character added
    assert.deepEqual(diffStrings('aa', 'aaa'), { added: 1, removed: 0 })
    assert.deepEqual(diffStrings('abcabc', 'abc'), { added: 0, removed: 3 })
  })

  test('the shortest edit script between the differing middles', ({ assert }) => {
    // common ends "xa" and "dy"; middles "bc" and "cb": one removal and one insertion
    assert.deepEqual(diffStrings('xabcdy', 'xacbdy'), { added: 1, removed: 1 })
    assert.deepEqual(diffStrings('kitten', 'sitting'), { added: 3, removed: 2 })
    assert.deepEqual(diffStrings('abc', 'xyz'), { added: 3, removed: 3 })
    assert.deepEqual(diffStrings('a1b2c3', 'abc'), { added: 0, removed: 3 })
    assert.deepEqual(diffStrings('abc', 'a1b2c3'), { added: 3, removed: 0 })
  })

  test('the counts are those of the longest common subsequence', ({ assert }) => {
    /** Characters of `a` and `b` outside a longest common subsequence, by dynamic programming */
    const expected = (a: string, b: string) => {
      let previous = new Array<number>(b.length + 1).fill(0)
      for (const char of a) {
        const row = [0]
        for (let j = 1; j <= b.length; j++) {
          row[j] = char === b[j - 1] ? previous[j - 1] + 1 : Math.max(previous[j], row[j - 1])
        }
        previous = row
      }
      const common = previous[b.length]
      return { added: b.length - common, removed: a.length - common }
    }
    // pairs where a wrong step direction or a lost diagonal gives more edits
    const pairs: Array<[string, string]> = [
      ['accabbab', 'abbcaaa'],
      ['cbbcca', 'bcaccbc'],
      ['babcccc', 'acccabbc'],
      ['babcbaba', 'bcbaccbb'],
      ['cccbb', 'bca'],
      ['cbbab', 'bcaab'],
    ]
    // and every pair of strings of up to three letters over "ab"
    const words = ['']
    for (const word of words) if (word.length < 3) words.push(`${word}a`, `${word}b`)
    for (const a of words) for (const b of words) pairs.push([a, b])
    for (const [a, b] of pairs) {
      assert.deepEqual(diffStrings(a, b), expected(a, b), `"${a}" -> "${b}"`)
    }
  })

  test('past maxEdits the whole middles count', ({ assert }) => {
    assert.deepEqual(diffStrings('xabcdy', 'xacbdy', 1), { added: 2, removed: 2 })
    assert.deepEqual(diffStrings('xabcdy', 'xacbdy', 2), { added: 1, removed: 1 })
  })
})

test.group('Yjs document content: restore', () => {
  test('texts are patched around their common ends, maps key by key, arrays replaced', ({
    assert,
  }) => {
    const target = stored((doc) => {
      doc.getText('t').insert(0, 'hello brave world')
      doc.getMap('m').set('keep', 1)
      doc.getMap('m').set('back', 'again')
      doc.getArray('a').insert(0, [1, 2, 3])
    })
    const live = new Y.Doc()
    live.getText('t').insert(0, 'hello world')
    live.getMap('m').set('keep', 1)
    live.getMap('m').set('back', 'changed since')
    live.getMap('m').set('extra', true)
    live.getArray('a').insert(0, [3, 2, 1])
    const changes: Array<{ origin: unknown; update: Uint8Array }> = []
    live.on('update', (update: Uint8Array, origin: unknown) => changes.push({ origin, update }))

    replaceDocContent(live, target, 'restore')

    assert.equal(live.getText('t').toString(), 'hello brave world')
    assert.deepEqual(live.getMap('m').toJSON(), { keep: 1, back: 'again' })
    assert.deepEqual(live.getArray('a').toJSON(), [1, 2, 3])
    // one transaction, with the given origin
    assert.lengthOf(changes, 1)
    assert.equal(changes[0].origin, 'restore')
    // the text was patched, not rewritten: deleted are the array's 3 values, the map's "extra"
    // and its "back" overwritten ("keep", equal, was not touched)
    const { ds } = Y.decodeUpdate(changes[0].update)
    const deleted = [...ds.clients.values()].flat().reduce((sum, range) => sum + range.len, 0)
    assert.equal(deleted, 5)
  })

  test('a document already equal to the version is left untouched', ({ assert }) => {
    const build = (doc: Y.Doc) => {
      doc.getText('t').insert(0, 'same')
      doc.getMap('m').set('k', { nested: [1] })
      doc.getArray('a').insert(0, ['x'])
      doc.getXmlFragment('x').insert(0, [new Y.XmlElement('p')])
    }
    const live = new Y.Doc()
    build(live)
    let changed = 0
    live.on('update', () => changed++)
    replaceDocContent(live, stored(build), 'restore')
    assert.equal(changed, 0)
  })

  test('roots the version does not have are emptied', ({ assert }) => {
    const live = new Y.Doc()
    live.getText('t').insert(0, 'later text')
    live.getMap('m').set('k', 1)
    live.getArray('a').insert(0, [1])
    live.getXmlFragment('x').insert(0, [new Y.XmlElement('p')])
    replaceDocContent(
      live,
      stored(() => {}),
      'restore'
    )
    assert.equal(live.getText('t').toString(), '')
    assert.deepEqual(live.getMap('m').toJSON(), {})
    assert.deepEqual(live.getArray('a').toJSON(), [])
    assert.equal(live.getXmlFragment('x').length, 0)
  })

  test('a root of another type in the live document is skipped, the others restored', ({
    assert,
  }) => {
    const target = stored((doc) => {
      doc.getText('clash').insert(0, 'text in the version')
      doc.getText('t').insert(0, 'restored')
    })
    const live = new Y.Doc()
    live.getMap('clash').set('k', 1)
    live.getText('t').insert(0, 'changed')
    replaceDocContent(live, target, 'restore')
    assert.equal(live.getText('t').toString(), 'restored')
    assert.deepEqual(live.getMap('clash').toJSON(), { k: 1 })
  })
})
