import type { Router } from '@adonisjs/core/http'
import type { HttpContext } from '@adonisjs/core/http'
import {
  CollabAuthorizationError,
  CollabBodyTooLargeError,
  CollabForbiddenError,
  CollabShuttingDownError,
  CollabNotFoundError,
  CollabUnauthorizedError,
  CollabValidationError,
} from '../errors.ts'
import type { CollaborationManager } from '../manager.ts'
import { issueToken, secretsMatch } from '../tokens.ts'
import type {
  AuthorizeFn,
  CollabComment,
  CollabPermission,
  CollabUser,
  ResolveUserFn,
} from '../types.ts'
import { defaultResolveUser } from './resolve_user.ts'
import { validate } from './validators.ts'

/**
 * Options of `collaborationRoutes`; each falls back to the manager's config.
 */
export interface CollaborationRoutesOptions {
  manager: CollaborationManager | (() => CollaborationManager | Promise<CollaborationManager>)
  prefix?: string
  middleware?: any[]
  resolveUser?: ResolveUserFn
  authorize?: AuthorizeFn
}

/**
 * Who may resolve, reopen or delete a comment: its author, or anyone with `canWrite`.
 */
export function canMutateComment({
  comment,
  userId,
  permission,
}: {
  comment: Pick<CollabComment, 'userId'>
  userId: string
  permission: Pick<CollabPermission, 'canWrite'>
}) {
  return comment.userId === String(userId) || permission.canWrite === true
}

/** Largest document state `POST /state` accepts */
export const MAX_STATE_BYTES = 64 * 1024 * 1024
/** Largest JSON body the comment and version routes read themselves */
export const MAX_JSON_BYTES = 1024 * 1024

/**
 * Reads the raw request body, whether or not the bodyparser ran (without
 * it the stream is still unread; with it, binary bodies are never parsed).
 */
async function rawBody(ctx: HttpContext, limit: number): Promise<Buffer> {
  const request = ctx.request.request
  const declared = Number(ctx.request.header('content-length'))
  if (Number.isFinite(declared) && declared > limit) {
    throw new CollabBodyTooLargeError(`Request body is larger than ${limit} bytes`)
  }
  if (request.readableEnded || (request as any).complete) {
    const raw = ctx.request.raw()
    if (raw !== null && raw !== undefined) {
      return Buffer.from(raw, 'binary')
    }
    if (request.readableEnded) {
      return Buffer.alloc(0)
    }
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request) {
    size += chunk.length
    if (size > limit) {
      throw new CollabBodyTooLargeError(`Request body is larger than ${limit} bytes`)
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

async function jsonBody(ctx: HttpContext): Promise<Record<string, unknown>> {
  const parsed = ctx.request.body()
  if (parsed && Object.keys(parsed).length) {
    return parsed
  }
  const raw = await rawBody(ctx, MAX_JSON_BYTES)
  if (raw.length === 0) {
    return {}
  }
  try {
    const value = JSON.parse(raw.toString('utf8'))
    return value && typeof value === 'object' ? value : {}
  } catch {
    throw new CollabValidationError('Invalid request: the body is not valid JSON')
  }
}

/**
 * Mounts the collaboration REST routes (token, comments, versions, state)
 * on `router`, synchronously, so it composes inside a route group. Errors
 * are thrown: each renders itself as the one JSON error body.
 */
export function collaborationRoutes(router: Router, options: CollaborationRoutesOptions) {
  const manager = async (): Promise<CollaborationManager> =>
    typeof options.manager === 'function' ? options.manager() : options.manager

  const user = async (ctx: HttpContext, current: CollaborationManager): Promise<CollabUser> => {
    const resolve = options.resolveUser ?? current.config.routes.resolveUser ?? defaultResolveUser
    const found = await resolve(ctx)
    if (!found || found.id === undefined || found.id === null) {
      throw new CollabUnauthorizedError()
    }
    return found
  }

  const permissionOf = async (ctx: HttpContext, current: CollaborationManager, docName: string) => {
    if (options.authorize) {
      try {
        return await options.authorize(ctx, docName)
      } catch (error) {
        throw new CollabAuthorizationError(undefined, { cause: error })
      }
    }
    return current.authorize(ctx, docName)
  }

  const handle =
    (run: (ctx: HttpContext, current: CollaborationManager) => Promise<unknown>) =>
    async (ctx: HttpContext) => {
      const current = await manager()
      if (current.isClosed) {
        throw new CollabShuttingDownError()
      }
      const result = await run(ctx, current)
      return result === null ? undefined : result
    }

  /**
   * The caller's permission on a document, or a 403 naming the action when
   * it lacks `right`.
   */
  const requirePermission = async (
    ctx: HttpContext,
    current: CollaborationManager,
    docName: string,
    right: 'canRead' | 'canWrite' | 'canComment',
    action: string
  ) => {
    const permission = await permissionOf(ctx, current, docName)
    if (!permission[right]) {
      throw new CollabForbiddenError(`${action} "${docName}" is not allowed`)
    }
    return permission
  }
  const requireRead = (ctx: HttpContext, current: CollaborationManager, docName: string) =>
    requirePermission(ctx, current, docName, 'canRead', 'Reading')

  /** True when the request carries the configured worker secret */
  const fromWorker = (ctx: HttpContext, current: CollaborationManager) => {
    const expected = current.config.hosted?.workerSecret
    return Boolean(expected) && secretsMatch(ctx.request.header('x-collab-worker-secret'), expected)
  }

  const group = router
    .group(() => {
      router.get(
        '/token',
        handle(async (ctx, current) => {
          const { doc } = await validate('doc', ctx.request.qs())
          const caller = await user(ctx, current)
          const permission = await permissionOf(ctx, current, doc)
          return issueToken(
            {
              ...current.config,
              engineName: await current.engineFor({ docName: doc }),
              baseUrl: `${ctx.request.protocol()}://${ctx.request.host()}`,
            },
            caller,
            doc,
            permission
          )
        })
      )

      router.get(
        '/comments',
        handle(async (ctx, current) => {
          const query = await validate('listComments', ctx.request.qs())
          await user(ctx, current)
          await requireRead(ctx, current, query.doc)
          return current.comments.list(query.doc, query.space, {
            page: query.page,
            size: query.size,
          })
        })
      )

      router.post(
        '/comments',
        handle(async (ctx, current) => {
          const body = await validate('createComment', await jsonBody(ctx))
          const caller = await user(ctx, current)
          await requirePermission(ctx, current, body.docName, 'canComment', 'Commenting on')
          const comment = await current.comments.create(body.docName, {
            space: body.space,
            anchor: body.anchor,
            body: body.body,
            userId: String(caller.id),
            authorName: body.authorName ?? caller.name ?? null,
          })
          ctx.response.status(201)
          return comment
        })
      )

      const mutateComment = async (ctx: HttpContext, current: CollaborationManager) => {
        const { doc } = await validate('doc', ctx.request.qs())
        const caller = await user(ctx, current)
        const permission = await requireRead(ctx, current, doc)
        const comment = await current.comments.get(doc, ctx.params.id)
        if (!comment) {
          throw new CollabNotFoundError(`Unknown comment "${ctx.params.id}" on "${doc}"`)
        }
        if (!canMutateComment({ comment, userId: String(caller.id), permission })) {
          throw new CollabForbiddenError(
            'Only the author or a user who can write may change this comment'
          )
        }
        return { doc, comment }
      }

      router.patch(
        '/comments/:id',
        handle(async (ctx, current) => {
          const { doc, comment } = await mutateComment(ctx, current)
          const body = await validate('patchComment', await jsonBody(ctx))
          return current.comments.resolve(doc, comment.id, body.resolved ?? true)
        })
      )

      router.delete(
        '/comments/:id',
        handle(async (ctx, current) => {
          const { doc, comment } = await mutateComment(ctx, current)
          await current.comments.remove(doc, comment.id)
          ctx.response.noContent()
          return null
        })
      )

      router.get(
        '/versions',
        handle(async (ctx, current) => {
          const query = await validate('listVersions', ctx.request.qs())
          await user(ctx, current)
          await requireRead(ctx, current, query.doc)
          return current.listVersions({
            docName: query.doc,
            page: { page: query.page, size: query.size },
          })
        })
      )

      router.post(
        '/versions',
        handle(async (ctx, current) => {
          const body = await validate('createVersion', await jsonBody(ctx))
          const caller = await user(ctx, current)
          await requirePermission(ctx, current, body.docName, 'canWrite', 'Creating versions of')
          const version = await current.createVersion({
            docName: body.docName,
            createdBy: String(caller.id),
            label: body.label ?? null,
          })
          ctx.response.status(201)
          return version
        })
      )

      router.post(
        '/versions/restore',
        handle(async (ctx, current) => {
          const body = await validate('restoreVersion', await jsonBody(ctx))
          const caller = await user(ctx, current)
          await requirePermission(ctx, current, body.docName, 'canWrite', 'Restoring versions of')
          await current.restoreVersion({
            docName: body.docName,
            versionId: body.versionId,
            restoredBy: String(caller.id),
          })
          ctx.response.noContent()
          return null
        })
      )

      router.get(
        '/state',
        handle(async (ctx, current) => {
          const { doc } = await validate('doc', ctx.request.qs())
          if (!fromWorker(ctx, current)) {
            await user(ctx, current)
            await requireRead(ctx, current, doc)
          }
          const state = await current.getDocumentState({ docName: doc })
          ctx.response.header('content-type', 'application/octet-stream')
          ctx.response.send(Buffer.from(state))
          return null
        })
      )

      router.post(
        '/state',
        handle(async (ctx, current) => {
          const { doc } = await validate('doc', ctx.request.qs())
          if (!fromWorker(ctx, current)) {
            throw new CollabForbiddenError(
              current.config.hosted?.workerSecret
                ? 'Missing or wrong x-collab-worker-secret header'
                : 'No room worker is configured: set "hosted.workerSecret" in config/collaboration.ts'
            )
          }
          const body = await rawBody(ctx, MAX_STATE_BYTES)
          if (body.length === 0) {
            throw new CollabValidationError('Invalid request: the body holds no document state')
          }
          try {
            await current.persistDocument({ docName: doc, state: new Uint8Array(body) })
          } catch (error: any) {
            if (error?.code === 'E_COLLAB_CONFIG' || error?.code === 'E_COLLAB_STORAGE') {
              throw error
            }
            throw new CollabValidationError(
              `Invalid request: the body is not a document state (${error.message})`
            )
          }
          ctx.response.noContent()
          return null
        })
      )
    })
    .prefix(options.prefix ?? '/collaboration')

  if (options.middleware?.length) {
    group.use(options.middleware)
  }
  return group
}
