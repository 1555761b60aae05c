/**
 * The demo's /agent page: the agent gateway's chat (threads, streamed
 * answers, approvals, cancel, regenerate, fork) beside its governance view.
 * The Adonis page (features/agent.ts) renders #agent-root.
 */
import { StrictMode, useState } from 'react'
import { createRoot } from 'react-dom/client'
import { Chat } from './parts/chat.tsx'
import { GovernanceView } from './parts/governance.tsx'
import './page.css'

function App() {
  // bumped whenever a run or a decision may have moved a figure of the governance view
  const [version, setVersion] = useState(0)
  return (
    <div className="agent-page">
      <Chat onChange={() => setVersion((value) => value + 1)} />
      <GovernanceView version={version} />
    </div>
  )
}

createRoot(document.querySelector<HTMLElement>('#agent-root')!).render(
  <StrictMode>
    <App />
  </StrictMode>
)
