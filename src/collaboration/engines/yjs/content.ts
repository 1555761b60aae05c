import * as Y from 'yjs'

type RootKind = 'text' | 'map' | 'array' | 'xml'

/**
 * The kind of each root type, read from its items when the document was
 * decoded from bytes and the type was never accessed by name.
 */
export function rootKinds(doc: Y.Doc): Map<string, RootKind> {
  const kinds = new Map<string, RootKind>()
  for (const [name, type] of doc.share) {
    if (type instanceof Y.Text) {
      kinds.set(name, 'text')
    } else if (type instanceof Y.Map) {
      kinds.set(name, 'map')
    } else if (type instanceof Y.Array) {
      kinds.set(name, 'array')
    } else if (type instanceof Y.XmlFragment) {
      kinds.set(name, 'xml')
    } else if (type._map.size > 0) {
      kinds.set(name, 'map')
    } else {
      for (let item = type._start; item !== null; item = item.right) {
        const content = item.content
        if (
          content instanceof Y.ContentString ||
          content instanceof Y.ContentFormat ||
          content instanceof Y.ContentEmbed
        ) {
          kinds.set(name, 'text')
          break
        }
        // An XML fragment's children are XML nodes; an array's shared values are any other type
        if (content instanceof Y.ContentType && isXmlNode(content.type)) {
          kinds.set(name, 'xml')
          break
        }
        if (
          content instanceof Y.ContentAny ||
          content instanceof Y.ContentType ||
          content instanceof Y.ContentBinary ||
          content instanceof Y.ContentJSON ||
          content instanceof Y.ContentDoc
        ) {
          kinds.set(name, 'array')
          break
        }
      }
    }
  }
  return kinds
}

function isXmlNode(type: unknown) {
  return type instanceof Y.XmlElement || type instanceof Y.XmlText || type instanceof Y.XmlHook
}

export function docFromState(state: Uint8Array): Y.Doc {
  const doc = new Y.Doc({ gc: false })
  if (state.byteLength) {
    Y.applyUpdate(doc, state)
  }
  return doc
}

/**
 * The text of the document: the root text `content` when present, else the
 * first root text by name. Empty when the document holds no text.
 */
export function textOfDoc(doc: Y.Doc): string {
  const texts = [...rootKinds(doc)].filter(([, kind]) => kind === 'text').map(([name]) => name)
  if (texts.length === 0) {
    return ''
  }
  const name = texts.includes('content') ? 'content' : texts.sort()[0]
  return doc.getText(name).toString()
}

function commonEnds(a: string, b: string) {
  let prefix = 0
  const max = Math.min(a.length, b.length)
  while (prefix < max && a.charCodeAt(prefix) === b.charCodeAt(prefix)) {
    prefix++
  }
  let suffix = 0
  while (
    suffix < max - prefix &&
    a.charCodeAt(a.length - 1 - suffix) === b.charCodeAt(b.length - 1 - suffix)
  ) {
    suffix++
  }
  return { prefix, suffix }
}

/**
 * One string per document that `diff` compares: each root's text or JSON.
 */
export function flatten(doc: Y.Doc): string {
  return [...rootKinds(doc)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, kind]) => {
      switch (kind) {
        case 'text':
          return doc.getText(name).toString()
        case 'map':
          return JSON.stringify(doc.getMap(name).toJSON())
        case 'array':
          return JSON.stringify(doc.getArray(name).toJSON())
        case 'xml':
          return doc.getXmlFragment(name).toString()
      }
    })
    .join('\n')
}

/**
 * Characters added and removed between two strings: the shortest edit script
 * (Myers) between their differing middles, or the whole middles when the
 * edit distance passes `maxEdits`.
 */
export function diffStrings(a: string, b: string, maxEdits = 2000) {
  const { prefix, suffix } = commonEnds(a, b)
  const left = a.slice(prefix, a.length - suffix)
  const right = b.slice(prefix, b.length - suffix)
  const n = left.length
  const m = right.length
  if (n === 0 || m === 0) {
    return { added: m, removed: n }
  }
  const max = Math.min(n + m, maxEdits)
  const v = new Int32Array(2 * max + 2)
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[max + k - 1] < v[max + k + 1])
      let x = down ? v[max + k + 1] : v[max + k - 1] + 1
      let y = x - k
      while (x < n && y < m && left.charCodeAt(x) === right.charCodeAt(y)) {
        x++
        y++
      }
      v[max + k] = x
      if (x >= n && y >= m) {
        // d edits: (n - common) removals and (m - common) insertions with n + m - 2·common = d
        const common = (n + m - d) / 2
        return { added: m - common, removed: n - common }
      }
    }
  }
  return { added: m, removed: n }
}

function cloneValue(value: unknown) {
  return value instanceof Y.AbstractType ? value.clone() : value
}

function jsonOf(value: unknown) {
  return JSON.stringify(value instanceof Y.AbstractType ? value.toJSON() : value)
}

/**
 * Makes `live` hold the content of `target` by applying new operations
 * (never re-applying old updates, which cannot undo deletions): texts are
 * patched around their common prefix and suffix, maps key by key, arrays
 * and XML replaced where they differ, and roots absent from `target` cleared.
 */
export function replaceDocContent(live: Y.Doc, target: Y.Doc, origin: unknown) {
  const targetKinds = rootKinds(target)
  const liveKinds = rootKinds(live)
  live.transact(() => {
    for (const [name, kind] of targetKinds) {
      try {
        if (kind === 'text') {
          const text = live.getText(name)
          const current = text.toString()
          const wanted = target.getText(name).toString()
          const { prefix, suffix } = commonEnds(current, wanted)
          const removed = current.length - prefix - suffix
          if (removed > 0) {
            text.delete(prefix, removed)
          }
          const inserted = wanted.slice(prefix, wanted.length - suffix)
          if (inserted) {
            text.insert(prefix, inserted)
          }
        } else if (kind === 'map') {
          const map = live.getMap(name)
          const wanted = target.getMap(name)
          for (const key of [...map.keys()]) {
            if (!wanted.has(key)) {
              map.delete(key)
            }
          }
          for (const [key, value] of wanted.entries()) {
            if (!map.has(key) || jsonOf(map.get(key)) !== jsonOf(value)) {
              map.set(key, cloneValue(value))
            }
          }
        } else if (kind === 'array') {
          const array = live.getArray(name)
          const wanted = target.getArray(name)
          if (JSON.stringify(array.toJSON()) !== JSON.stringify(wanted.toJSON())) {
            array.delete(0, array.length)
            array.insert(0, wanted.toArray().map(cloneValue))
          }
        } else {
          const fragment = live.getXmlFragment(name)
          const wanted = target.getXmlFragment(name)
          if (fragment.toString() !== wanted.toString()) {
            fragment.delete(0, fragment.length)
            fragment.insert(0, wanted.toArray().map((node) => node.clone()) as any)
          }
        }
      } catch {
        // a root declared with another type in the live document cannot be patched in place
      }
    }
    for (const [name, kind] of liveKinds) {
      if (targetKinds.has(name)) {
        continue
      }
      if (kind === 'text' || kind === 'array' || kind === 'xml') {
        const type =
          kind === 'text'
            ? live.getText(name)
            : kind === 'array'
              ? live.getArray(name)
              : live.getXmlFragment(name)
        if (type.length) {
          type.delete(0, type.length)
        }
      } else {
        const map = live.getMap(name)
        for (const key of [...map.keys()]) {
          map.delete(key)
        }
      }
    }
  }, origin)
}
