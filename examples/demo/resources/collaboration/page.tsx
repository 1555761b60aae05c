/**
 * The demo's collaboration page: a text editor on Yjs, a to-do list on
 * Automerge and an Excalidraw canvas, each with presence, comments and
 * versions, all through adonis-atrium's React hooks. The Adonis page
 * (features/collaboration.ts) renders #collaboration-root with the user.
 */
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { CollaborationProvider } from 'adonis-atrium/collaboration/react'
import { createTransport, loadAutomerge } from './parts/automerge.ts'
import { TextEditor } from './parts/text_editor.tsx'
import { TodoList } from './parts/todo_list.tsx'
import { Whiteboard } from './parts/whiteboard.tsx'
import './page.css'

const root = document.querySelector<HTMLElement>('#collaboration-root')!
const user = root.dataset.user ?? 'alice'

function App() {
  return (
    <CollaborationProvider
      // the demo has no login: the collaboration routes read the user from this header
      getHeaders={() => ({ 'x-demo-user': user })}
      createTransport={createTransport}
    >
      <TextEditor docName="demo/notes" user={user} />
      <TodoList docName="todos/demo" user={user} />
      <Whiteboard docName="demo/canvas" user={user} />
    </CollaborationProvider>
  )
}

loadAutomerge()
  .then(() =>
    createRoot(root).render(
      <StrictMode>
        <App />
      </StrictMode>
    )
  )
  .catch((error: unknown) => {
    root.textContent = `Could not start Automerge: ${String(error)}`
  })
