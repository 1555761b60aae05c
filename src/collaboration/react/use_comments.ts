import { useCallback } from 'react'
import { createComment, deleteComment, listComments, resolveComment } from '../client/rest.ts'
import type { CollabComment, CommentAnchor } from '../client/types.ts'
import { useCollabClient } from './context.ts'
import { useRemoteList } from './use_remote_list.ts'

export interface UseCommentsInput {
  docName: string
  /** The comment space (a thread group such as `margin`); every space when omitted */
  space?: string
}

export interface NewComment {
  anchor: CommentAnchor
  body: string
  /** Defaults to the hook's space, else `default` */
  space?: string
  authorName?: string
}

/** Comments of a document (first page of 200, oldest first) and the calls that change them */
export function useComments({ docName, space }: UseCommentsInput) {
  const { config } = useCollabClient()
  const list = useRemoteList<CollabComment>(`${docName}\u0000${space ?? ''}`, () =>
    listComments(config, docName, { space, size: 200 })
  )
  const { mutate } = list
  const create = useCallback(
    (input: NewComment) =>
      mutate(() =>
        createComment(config, {
          docName,
          space: input.space ?? space ?? 'default',
          anchor: input.anchor,
          body: input.body,
          ...(input.authorName ? { authorName: input.authorName } : {}),
        })
      ),
    [config, docName, space, mutate]
  )
  const resolve = useCallback(
    (commentId: string, resolved = true) =>
      mutate(() => resolveComment(config, docName, commentId, resolved)),
    [config, docName, mutate]
  )
  const remove = useCallback(
    (commentId: string) => mutate(() => deleteComment(config, docName, commentId)),
    [config, docName, mutate]
  )
  return {
    comments: list.items,
    loading: list.loading,
    error: list.error,
    refresh: list.refresh,
    create,
    resolve,
    remove,
  }
}
