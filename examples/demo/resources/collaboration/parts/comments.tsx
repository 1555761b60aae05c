import { useState, type FormEvent } from 'react'
import {
  useComments,
  type CollabComment,
  type CommentAnchor,
} from 'adonis-atrium/collaboration/react'
import { useServerChanges } from './server_changes.ts'

interface CommentsProps {
  docName: string
  /** Where a new comment points: the editor's selection, a to-do, a shape */
  anchor: () => CommentAnchor
  /** What a comment points at, in words */
  describe: (comment: CollabComment) => string
}

/** A document's comments: add one on the current selection, resolve or reopen them */
export function Comments({ docName, anchor, describe }: CommentsProps) {
  const { comments, error, refresh, create, resolve } = useComments({ docName, space: 'main' })
  useServerChanges(docName, 'comments', refresh)
  const [body, setBody] = useState('')

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (!body.trim()) return
    await create({ anchor: anchor(), body: body.trim() })
    setBody('')
  }

  return (
    <section className="comments">
      <h3>Comments</h3>
      <form onSubmit={submit}>
        <input
          aria-label="Comment"
          value={body}
          placeholder="Comment on the selection"
          onChange={(event) => setBody(event.target.value)}
        />{' '}
        <button>Add</button>
      </form>
      {error ? <p className="error">{error.message}</p> : null}
      <ul>
        {comments.map((comment) => (
          <li key={comment.id} className={comment.resolvedAt ? 'resolved' : ''}>
            <b>{comment.authorName ?? comment.userId}</b> on {describe(comment)}:{' '}
            <span className="body">{comment.body}</span>{' '}
            <button
              className="secondary"
              onClick={() => resolve(comment.id, !comment.resolvedAt).catch(() => {})}
            >
              {comment.resolvedAt ? 'Reopen' : 'Resolve'}
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}
