import { useEffect } from 'react'

type Kind = 'comments' | 'versions'
type Listener = (docName: string, kind: Kind) => void

const listeners = new Set<Listener>()
let source: EventSource | null = null

/**
 * Calls `onChange` when another page changes the comments or versions of
 * `docName`. One event stream serves the whole page: a stream per panel
 * would take up the browser's six connections to the app.
 */
export function useServerChanges(docName: string, kind: Kind, onChange: () => void) {
  useEffect(() => {
    const listener: Listener = (name, changed) => {
      if (name === docName && changed === kind) onChange()
    }
    listeners.add(listener)
    source ??= openStream()
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0) {
        source?.close()
        source = null
      }
    }
  }, [docName, kind, onChange])
}

function openStream() {
  const stream = new EventSource('/collaboration-demo/changes')
  stream.onmessage = ({ data }) => {
    const { doc, kind } = JSON.parse(data) as { doc: string; kind: Kind }
    for (const listener of listeners) listener(doc, kind)
  }
  return stream
}
