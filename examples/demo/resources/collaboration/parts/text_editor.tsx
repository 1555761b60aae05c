import { useLayoutEffect, useRef } from 'react'
import { createTextAdapter, useCollabEditor } from 'adonis-atrium/collaboration/react'
import { Comments } from './comments.tsx'
import { Presence } from './presence.tsx'
import { Versions } from './versions.tsx'

const textAdapter = createTextAdapter()

/**
 * Where a caret at `position` belongs after the text changed from `before`
 * to `after`: an edit in front of it moves it, one behind it does not.
 */
function shiftCaret(position: number, before: string, after: string) {
  let prefix = 0
  while (prefix < before.length && before[prefix] === after[prefix]) prefix++
  return position <= prefix ? position : Math.max(prefix, position + after.length - before.length)
}

/** Shared notes on Yjs: a textarea bound to the document's `content` text */
export function TextEditor({ docName, user }: { docName: string; user: string }) {
  const { state, update, synced, status } = useCollabEditor({
    docName,
    editorId: 'content',
    adapter: textAdapter,
  })
  const area = useRef<HTMLTextAreaElement>(null)
  const shown = useRef(state)
  // the caret as the user left it: by the layout effect, React's new value has moved it
  const caret = useRef({ start: 0, end: 0 })
  const rememberCaret = () => {
    const element = area.current
    if (element) caret.current = { start: element.selectionStart, end: element.selectionEnd }
  }

  // a remote edit replaces the value; keep the caret on the text it was on
  useLayoutEffect(() => {
    const element = area.current
    const before = shown.current
    shown.current = state
    if (!element || document.activeElement !== element || before === state) return
    const start = shiftCaret(caret.current.start, before, state)
    const end = shiftCaret(caret.current.end, before, state)
    element.setSelectionRange(start, end)
    caret.current = { start, end }
  }, [state])

  const selection = () => {
    const element = area.current
    const start = element?.selectionStart ?? 0
    const end = Math.max(element?.selectionEnd ?? 0, start)
    return { start, end, selectedText: state.slice(start, end) }
  }

  return (
    <section className="part" id="notes">
      <h2>Notes · Yjs</h2>
      <Presence docName={docName} user={user} status={synced ? 'synced' : status} />
      <textarea
        ref={area}
        rows={8}
        aria-label="Notes"
        disabled={!synced}
        placeholder={synced ? 'Type here…' : 'Loading the document…'}
        value={state}
        onSelect={rememberCaret}
        onChange={(event) => {
          // the local edit is the new baseline: the caret is already where the user put it
          shown.current = event.target.value
          rememberCaret()
          update(event.target.value)
        }}
      />
      <div className="columns">
        <Comments
          docName={docName}
          anchor={() => ({ kind: 'text-range', ...selection() })}
          describe={(comment) =>
            comment.anchor.kind === 'text-range' && comment.anchor.selectedText
              ? `“${comment.anchor.selectedText}”`
              : 'the notes'
          }
        />
        <Versions docName={docName} />
      </div>
    </section>
  )
}
