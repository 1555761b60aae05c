import { useCallback, useEffect, useState } from 'react'
import { json, post, streamChat } from './api.ts'
import type { StreamFrame, ThreadDetail, ThreadSummary } from './api.ts'
import { Messages, type PendingApproval } from './messages.tsx'
import { ThreadList } from './threads.tsx'

/** The run streaming now */
interface Live {
  runId: string | null
  text: string
  approval: PendingApproval | null
}

/**
 * Threads and the conversation of the selected one: send (streamed over
 * SSE), Approve or Reject a tool call, Cancel, Regenerate and Fork.
 * `onChange` tells the governance view that figures moved.
 */
export function Chat({ onChange }: { onChange: () => void }) {
  const [threads, setThreads] = useState<ThreadSummary[]>([])
  const [selected, setSelected] = useState<string | null>(null)
  const [thread, setThread] = useState<ThreadDetail | null>(null)
  const [live, setLive] = useState<Live | null>(null)
  const [draft, setDraft] = useState('')
  const [notice, setNotice] = useState<string | null>(null)

  const reloadThreads = useCallback(
    () =>
      json<ThreadSummary[]>('/agent/threads')
        .then(setThreads)
        .catch((error: Error) => setNotice(error.message)),
    []
  )
  useEffect(() => void reloadThreads(), [reloadThreads])
  useEffect(() => {
    if (!selected) return setThread(null)
    json<ThreadDetail>(`/agent/threads/${selected}`)
      .then(setThread)
      .catch((error: Error) => setNotice(error.message))
  }, [selected])

  /** Streams one turn, then shows the thread as stored */
  const run = async (body: Record<string, unknown>) => {
    setNotice(null)
    setLive({ runId: null, text: '', approval: null })
    let threadId = (body.threadId as string | undefined) ?? null
    const onFrame = ({ event, data }: StreamFrame) => {
      if (event === 'meta') {
        threadId = data.threadId
        setLive((now) => now && { ...now, runId: data.runId })
      } else if (event === 'approval') {
        setLive((now) => now && { ...now, approval: data })
        onChange()
      } else if (event === 'error') {
        setNotice(`The run failed (${data.code}).`)
      } else if (event === 'done' && data.aborted) {
        setNotice('Cancelled.')
      } else if (typeof data?.delta === 'string') {
        setLive((now) => now && { ...now, text: now.text + data.delta })
      }
    }
    try {
      await streamChat(body, onFrame)
    } catch (error) {
      setNotice((error as Error).message)
    }
    if (threadId) {
      const stored = await json<ThreadDetail>(`/agent/threads/${threadId}`).catch(() => null)
      setThread(stored)
      setSelected(threadId)
    }
    setLive(null)
    await reloadThreads()
    onChange()
  }

  const send = (event: React.FormEvent) => {
    event.preventDefault()
    const message = draft.trim()
    if (!message || live) return
    setDraft('')
    if (thread) {
      const pending = { id: -1, runId: null, role: 'user' as const, content: message }
      setThread({ ...thread, messages: [...thread.messages, pending] })
    }
    void run({ message, ...(selected ? { threadId: selected } : {}) })
  }

  const regenerate = () => {
    if (!thread || live) return
    const lastUser = thread.messages.findLastIndex((message) => message.role === 'user')
    setThread({ ...thread, messages: thread.messages.slice(0, lastUser + 1) })
    void run({ threadId: thread.id, regenerate: true })
  }

  const cancel = () => {
    if (!live?.runId) return
    post(`/agent/chat/${live.runId}/cancel`).catch((error: Error) => setNotice(error.message))
  }

  const decide = async (approved: boolean) => {
    const approval = live?.approval
    if (!approval) return
    const route = approved ? 'approve' : 'reject'
    const body = approved
      ? { toolCallId: approval.toolCallId }
      : { toolCallId: approval.toolCallId, reason: 'Rejected on the demo page' }
    try {
      const { ok } = await post<{ ok: boolean }>(`/agent/tool-call/${route}`, body)
      if (!ok) setNotice('This call was already decided (perhaps in the governance view).')
      const decided = ok ? (approved ? 'approved' : 'rejected') : undefined
      setLive((now) => now && { ...now, approval: { ...approval, decided } })
    } catch (error) {
      setNotice((error as Error).message)
    }
    onChange()
  }

  const fork = async (messageId: number) => {
    if (!thread) return
    try {
      const copy = await post<ThreadSummary>(`/agent/threads/${thread.id}/fork-from/${messageId}`)
      await reloadThreads()
      setSelected(copy.id)
    } catch (error) {
      setNotice((error as Error).message)
    }
  }

  const canRegenerate = !live && thread?.messages.some((message) => message.role === 'user')
  return (
    <div id="chat">
      <ThreadList
        threads={threads}
        selected={selected}
        onSelect={(id) => !live && setSelected(id)}
      />
      <section className="conversation" aria-label="Conversation">
        <h2>{thread ? (thread.title ?? 'Untitled thread') : 'New thread'}</h2>
        <Messages
          messages={thread?.messages ?? []}
          streaming={live ? live.text : null}
          approval={live?.approval ?? null}
          onFork={live ? undefined : fork}
          onDecide={decide}
        />
        {notice && <p className="notice">{notice}</p>}
        <form onSubmit={send}>
          <input
            aria-label="Message"
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            placeholder='Try "hello", "refund order 1042, 25 USD" or "tell me a long story"'
            maxLength={4000}
          />
          <button type="submit" disabled={!!live}>
            Send
          </button>
          <button type="button" onClick={cancel} disabled={!live?.runId}>
            Cancel
          </button>
          <button type="button" onClick={regenerate} disabled={!canRegenerate}>
            Regenerate
          </button>
        </form>
      </section>
    </div>
  )
}
