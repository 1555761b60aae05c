import { useState, type FormEvent } from 'react'
import { useAutomergeDoc } from 'adonis-atrium/collaboration/react'
import { Comments } from './comments.tsx'
import { Presence } from './presence.tsx'
import { Versions } from './versions.tsx'

interface Todo {
  id: string
  title: string
  done: boolean
}

interface TodoDoc {
  todos?: Todo[]
}

/** A shared to-do list on Automerge: add, tick and remove items; comment on one */
export function TodoList({ docName, user }: { docName: string; user: string }) {
  const { doc, change, synced, status } = useAutomergeDoc<TodoDoc>({ docName })
  const [title, setTitle] = useState('')
  const [selected, setSelected] = useState<string | null>(null)
  const todos = doc?.todos ?? []

  const add = (event: FormEvent) => {
    event.preventDefault()
    if (!title.trim()) return
    change((draft) => {
      draft.todos ??= []
      draft.todos.push({ id: crypto.randomUUID(), title: title.trim(), done: false })
    })
    setTitle('')
  }
  // items are found by id: another page may have moved them since this one rendered
  const edit = (id: string, apply: (list: Todo[], index: number) => void) =>
    change((draft) => {
      const index = draft.todos?.findIndex((todo) => todo.id === id) ?? -1
      if (draft.todos && index >= 0) apply(draft.todos, index)
    })

  const chosen = todos.findIndex((todo) => todo.id === selected)
  return (
    <section className="part" id="todos">
      <h2>To-do list · Automerge</h2>
      <Presence docName={docName} user={user} status={synced ? 'synced' : status} />
      <form onSubmit={add}>
        <input
          aria-label="New to-do"
          value={title}
          disabled={!doc}
          placeholder={doc ? 'Something to do' : 'Loading the list…'}
          onChange={(event) => setTitle(event.target.value)}
        />{' '}
        <button disabled={!doc}>Add</button>
      </form>
      <ul className="todo-items">
        {todos.map((todo) => (
          <li key={todo.id} className={todo.id === selected ? 'selected' : ''}>
            <label>
              <input
                type="checkbox"
                checked={todo.done}
                onChange={() =>
                  edit(todo.id, (list, index) => {
                    list[index].done = !list[index].done
                  })
                }
              />{' '}
              <span className={todo.done ? 'done' : ''}>{todo.title}</span>
            </label>{' '}
            <button className="secondary" onClick={() => setSelected(todo.id)}>
              Select
            </button>{' '}
            <button
              className="secondary"
              onClick={() => edit(todo.id, (list, index) => list.splice(index, 1))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <div className="columns">
        <Comments
          docName={docName}
          // a comment points at the selected to-do by its place and title
          anchor={() =>
            chosen >= 0
              ? {
                  kind: 'text-range',
                  start: chosen,
                  end: chosen + 1,
                  selectedText: todos[chosen].title,
                }
              : { kind: 'text-range', start: 0, end: 0, selectedText: '' }
          }
          describe={(comment) =>
            comment.anchor.kind === 'text-range' && comment.anchor.selectedText
              ? `“${comment.anchor.selectedText}”`
              : 'the list'
          }
        />
        <Versions docName={docName} />
      </div>
    </section>
  )
}
