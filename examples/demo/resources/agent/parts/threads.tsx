import type { ThreadSummary } from './api.ts'

/** The actor's threads (`GET /agent/threads`), most recently updated first */
export function ThreadList({
  threads,
  selected,
  onSelect,
}: {
  threads: ThreadSummary[]
  selected: string | null
  onSelect: (id: string | null) => void
}) {
  return (
    <nav id="threads" aria-label="Threads">
      <button className="new-thread" onClick={() => onSelect(null)}>
        New thread
      </button>
      <ul>
        {threads.map((thread) => (
          <li key={thread.id}>
            <button
              aria-current={thread.id === selected ? 'true' : undefined}
              onClick={() => onSelect(thread.id)}
            >
              {thread.title ?? 'Untitled thread'}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  )
}
