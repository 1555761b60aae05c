import type { ThreadMessage } from './api.ts'

/** A tool call waiting for a person, as the `approval` frame announced it */
export interface PendingApproval {
  toolCallId: string
  toolName: string
  input: unknown
  decided?: 'approved' | 'rejected'
}

/** One stored message: the user's, the assistant's (with its tool calls) or a tool's result */
function Message({
  message,
  onFork,
}: {
  message: ThreadMessage
  onFork?: (messageId: number) => void
}) {
  return (
    <li className={`message ${message.role}`} data-message-id={message.id}>
      {message.role === 'tool' ? (
        (message.toolResults ?? []).map((result) => (
          <p key={result.toolCallId} className="tool-result">
            <code>{result.toolName}</code> result: <code>{JSON.stringify(result.output)}</code>
          </p>
        ))
      ) : (
        <>
          {message.content && <p>{message.content}</p>}
          {(message.toolCalls ?? []).map((call) => (
            <p key={call.toolCallId} className="tool-call">
              Calls <code>{call.toolName}</code> with <code>{JSON.stringify(call.input)}</code>
            </p>
          ))}
        </>
      )}
      {onFork && (
        <button className="link fork" onClick={() => onFork(message.id)}>
          Fork from here
        </button>
      )}
    </li>
  )
}

/** The thread's stored messages, then the run streaming now (its text and its approval) */
export function Messages({
  messages,
  streaming,
  approval,
  onFork,
  onDecide,
}: {
  messages: ThreadMessage[]
  streaming: string | null
  approval: PendingApproval | null
  onFork?: (messageId: number) => void
  onDecide: (approved: boolean) => void
}) {
  return (
    <ol id="messages">
      {messages.map((message) => (
        <Message key={message.id} message={message} onFork={onFork} />
      ))}
      {streaming !== null && (
        <li className="message assistant streaming" aria-live="polite">
          <p>{streaming || '…'}</p>
        </li>
      )}
      {approval && (
        <li className="approval" aria-label="Approval">
          <p>
            The agent wants to run <code>{approval.toolName}</code> with{' '}
            <code>{JSON.stringify(approval.input)}</code>.
          </p>
          {approval.decided ? (
            <p className="muted">You {approval.decided} it.</p>
          ) : (
            <p>
              <button onClick={() => onDecide(true)}>Approve</button>{' '}
              <button onClick={() => onDecide(false)}>Reject</button>
            </p>
          )}
        </li>
      )}
    </ol>
  )
}
