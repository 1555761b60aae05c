import { test } from '@japa/runner'
import * as Y from 'yjs'
import {
  docFromState,
  replaceDocContent,
  rootKinds,
} from '../../src/collaboration/engines/yjs/content.ts'

/**
 * Database-free: the kinds of a stored Yjs document's root types, read from
 * its bytes (where no root has been accessed by name yet), and a version
 * restore reaching every kind, XML fragments included (ProseMirror, Tiptap
 * and BlockNote keep their content in one).
 */
function paragraph(text: string) {
  const element = new Y.XmlElement('paragraph')
  element.insert(0, [new Y.XmlText(text)])
  return element
}

/** A document as a rich-text editor stores it, plus an array of maps, saved as bytes */
function storedDoc(words: string) {
  const doc = new Y.Doc()
  doc.getXmlFragment('prosemirror').insert(0, [paragraph(words)])
  const rows = new Y.Map()
  rows.set('title', words)
  doc.getArray('rows').insert(0, [rows])
  return Y.encodeStateAsUpdate(doc)
}

test.group('Yjs document content', () => {
  test('a stored XML fragment reads as xml, an array of shared maps as an array', ({ assert }) => {
    const kinds = rootKinds(docFromState(storedDoc('first draft')))
    assert.equal(kinds.get('prosemirror'), 'xml')
    assert.equal(kinds.get('rows'), 'array')
  })

  test('a version restore brings back the XML fragment of the stored version', ({ assert }) => {
    const live = new Y.Doc()
    Y.applyUpdate(live, storedDoc('first draft'))
    const fragment = live.getXmlFragment('prosemirror')
    fragment.delete(0, fragment.length)
    fragment.insert(0, [paragraph('rewritten since')])

    replaceDocContent(live, docFromState(storedDoc('first draft')), 'restore')

    assert.equal(fragment.toString(), '<paragraph>first draft</paragraph>')
    assert.deepEqual(live.getArray('rows').toJSON(), [{ title: 'first draft' }])
  })
})
