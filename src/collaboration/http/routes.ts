import type { Router } from '@adonisjs/core/http'
import type { HttpContext } from '@adonisjs/core/http'
import { collaboration } from '../current.ts'
import {
  CollabAuthorizationError,
  CollabForbiddenError,
  CollabNotFoundError,
  CollabUnauthorizedError,
  CollabValidationError,
} from '../errors.ts'
import type { CollaborationManager } from '../manager.ts'
import { issueToken, resolveTokenSecret, secretsMatch } from '../tokens.ts'
import type {
  AuthorizeFn,
  CollabComment,
  CollabEngineName,
  CollabPermission,
  CollabUser,
  HostedConfig,
  ResolveUserFn,
} from '../types.ts'

/**
 * Options of `collaborationRoutes`; each falls back to the manager's config.
 */
export interface CollaborationRoutesOptions {
  prefix?: string
  middleware?: any[]
  resolveUser?: ResolveUserFn
  authorize?: AuthorizeFn
  manager?: CollaborationManager | (() => CollaborationManager | Promise<CollaborationManager>)
  engine?: CollabEngineName
  path?: string
  hosted?: Partial<Pick<HostedConfig, 'roomHost' | 'jwtSecret' | 'party'>>
}

/**
 * The default `resolveUser`: `ctx.auth.check()` then `ctx.auth.user`
 * (needs `@adonisjs/auth`); null when nobody is signed in.
 */
export const defaultResolveUser: ResolveUserFn = async (ctx) => {
  const auth = (ctx as any).auth
  if (!auth || typeof auth.check !== 'function') {
    return null
  }
  if (!(await auth.check())) {
    return null
  }
  const user = auth.user
  if (!user) {
    return null
  }
  return {
    id: user.id,
    name: user.fullName ?? user.name ?? user.email ?? null,
    avatarUrl: user.avatarUrl ?? null,
  }
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

const ANCHOR_KINDS = ['text-range', 'canvas-object', 'timestamp'] as const
const MAX_BODY_BYTES = 64 * 1024 * 1024
const MAX_JSON_BYTES = 1024 * 1024

let validators: ReturnType<typeof buildValidators> | undefined

async function buildValidators() {
  const { default: vine } = await import('@vinejs/vine')
  const docName = () => vine.string().trim().minLength(1).maxLength(255)
  const anchor = vine
    .union([
      vine.union.if(
        (value) => vine.helpers.isObject(value) && (value as any).kind === 'text-range',
        vine.object({
          kind: vine.literal('text-range'),
          start: vine.number().min(0),
          end: vine.number().min(0),
          selectedText: vine.string().maxLength(10_000).optional(),
        })
      ),
      vine.union.if(
        (value) => vine.helpers.isObject(value) && (value as any).kind === 'canvas-object',
        vine.object({
          kind: vine.literal('canvas-object'),
          shapeId: vine.string().minLength(1).maxLength(255),
          relativeX: vine.number(),
          relativeY: vine.number(),
        })
      ),
      vine.union.if(
        (value) => vine.helpers.isObject(value) && (value as any).kind === 'timestamp',
        vine.object({
          kind: vine.literal('timestamp'),
          at: vine.number().min(0),
          end: vine.number().min(0).optional(),
        })
      ),
    ])
    .otherwise((_, field) => {
      field.report(`anchor.kind must be one of ${ANCHOR_KINDS.join(', ')}`, 'anchor', field)
    })
  const paging = {
    page: vine.number().withoutDecimals().min(1).optional(),
    size: vine.number().withoutDecimals().optional(),
  }
  return {
    doc: vine.compile(vine.object({ doc: docName() })),
    listComments: vine.compile(
      vine.object({ doc: docName(), space: vine.string().maxLength(255).optional(), ...paging })
    ),
    listVersions: vine.compile(vine.object({ doc: docName(), ...paging })),
    createComment: vine.compile(
      vine.object({
        docName: docName(),
        space: vine.string().trim().minLength(1).maxLength(255),
        anchor,
        body: vine.string().trim().minLength(1).maxLength(20_000),
        authorName: vine.string().maxLength(255).optional().nullable(),
      })
    ),
    patchComment: vine.compile(vine.object({ resolved: vine.boolean().optional() })),
    createVersion: vine.compile(
      vine.object({
        docName: docName(),
        label: vine.string().trim().maxLength(255).optional().nullable(),
      })
    ),
    restoreVersion: vine.compile(
      vine.object({
        docName: docName(),
        versionId: vine.string().trim().minLength(1).maxLength(64),
      })
    ),
  }
}

async function validate<K extends keyof Awaited<ReturnType<typeof buildValidators>>>(
  name: K,
  data: unknown
): Promise<any> {
  validators ??= buildValidators()
  const all = await validators
  const compiled = all[name]
  try {
    return await (compiled as any).validate(data)
  } catch (error: any) {
    if (error?.code === 'E_VALIDATION_ERROR') {
      const messages = (error.messages ?? []).map((entry: any) => entry.message).join('; ')
      throw new CollabValidationError(`Invalid request: ${messages}`)
    }
    throw error
  }
}

/**
 * Reads the raw request body, whether or not the bodyparser ran (without
 * it the stream is still unread; with it, binary bodies are never parsed).
 */
async function rawBody(ctx: HttpContext, limit: number): Promise<Buffer> {
  const request = ctx.request.request
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
      throw new CollabValidationError(`Request body is larger than ${limit} bytes`)
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

function sendError(ctx: HttpContext, error: any) {
  const status = typeof error?.status === 'number' && error.status >= 400 ? error.status : 500
  if (
    status >= 500 &&
    !(error instanceof CollabAuthorizationError) &&
    !error?.code?.startsWith?.('E_COLLAB')
  ) {
    throw error
  }
  ctx.response.status(status).send({ error: { code: error.code, message: error.message } })
}

/**
 * Mounts the collaboration REST routes (token, comments, versions, state)
 * on `router`, synchronously, so it composes inside a route group.
 */
export function collaborationRoutes(router: Router, options: CollaborationRoutesOptions = {}) {
  const manager = async (): Promise<CollaborationManager> => {
    if (typeof options.manager === 'function') {
      return options.manager()
    }
    return options.manager ?? collaboration.current
  }

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
      try {
        const result = await run(ctx, await manager())
        if (result !== undefined) {
          return result
        }
      } catch (error) {
        sendError(ctx, error)
      }
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

  const group = router
    .group(() => {
      router.get(
        '/token',
        handle(async (ctx, current) => {
          const { doc } = await validate('doc', ctx.request.qs())
          const caller = await user(ctx, current)
          const permission = await permissionOf(ctx, current, doc)
          const engine = options.engine ?? (await current.engineFor({ docName: doc }))
          const hosted = current.config.hosted
            ? { ...current.config.hosted, ...options.hosted }
            : (options.hosted as any)
          const origin = `${ctx.request.protocol()}://${ctx.request.host()}`
          return issueToken(
            {
              ...current.config,
              path: options.path ?? current.config.path,
              hosted,
              engineName: engine,
              baseUrl: origin,
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

      const workerSecret = (current: CollaborationManager) => {
        const hosted = { ...current.config.hosted, ...options.hosted }
        return (
          current.config.hosted?.workerSecret ??
          hosted.jwtSecret ??
          resolveTokenSecret(current.config.tokenSecret)
        )
      }

      router.get(
        '/state',
        handle(async (ctx, current) => {
          const { doc } = await validate('doc', ctx.request.qs())
          const received = ctx.request.header('x-collab-worker-secret')
          if (received === undefined || !secretsMatch(received, workerSecret(current))) {
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
          const received = ctx.request.header('x-collab-worker-secret')
          if (!secretsMatch(received, workerSecret(current))) {
            throw new CollabForbiddenError('Missing or wrong x-collab-worker-secret header')
          }
          const body = await rawBody(ctx, MAX_BODY_BYTES)
          if (body.length === 0) {
            throw new CollabValidationError('Invalid request: the body holds no document state')
          }
          try {
            await current.persistDocument({ docName: doc, state: new Uint8Array(body) })
          } catch (error: any) {
            if (error?.code === 'E_COLLAB_CONFIG') {
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
