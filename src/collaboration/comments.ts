import { randomUUID } from 'node:crypto'
import type { CollaborationManager } from './manager.ts'
import type { CollabComment, CommentAnchor, ListPageOptions } from './types.ts'

/**
 * Comments of the documents, kept in the configured storage.
 */
export class CollabComments {
  constructor(protected manager: CollaborationManager) {}

  /** Comments oldest first, optionally of one space and one page */
  list(docName: string, space?: string, page?: ListPageOptions) {
    return this.manager.config.storage.listComments(docName, space, page)
  }

  async get(docName: string, commentId: string): Promise<CollabComment | null> {
    const storage = this.manager.config.storage
    if (storage.getComment) {
      return storage.getComment(docName, commentId)
    }
    const comments = await storage.listComments(docName)
    return comments.find(({ id }) => id === commentId) ?? null
  }

  async create(
    docName: string,
    input: {
      space: string
      anchor: CommentAnchor
      body: string
      userId: string
      authorName?: string | null
    }
  ): Promise<CollabComment> {
    const comment: CollabComment = {
      id: randomUUID(),
      documentName: docName,
      space: input.space,
      anchor: input.anchor,
      body: input.body,
      userId: String(input.userId),
      authorName: input.authorName ?? null,
      resolvedAt: null,
      createdAt: new Date().toISOString(),
      updatedAt: null,
    }
    await this.manager.config.storage.saveComment(docName, comment)
    return comment
  }

  /** Sets or clears `resolvedAt`; null for an unknown comment */
  async resolve(
    docName: string,
    commentId: string,
    resolved = true
  ): Promise<CollabComment | null> {
    const comment = await this.get(docName, commentId)
    if (!comment) {
      return null
    }
    const now = new Date().toISOString()
    const next = {
      ...comment,
      resolvedAt: resolved ? (comment.resolvedAt ?? now) : null,
      updatedAt: now,
    }
    await this.manager.config.storage.saveComment(docName, next)
    return next
  }

  /** False for an unknown comment */
  async remove(docName: string, commentId: string): Promise<boolean> {
    if (!(await this.get(docName, commentId))) {
      return false
    }
    await this.manager.config.storage.deleteComment(docName, commentId)
    return true
  }
}
