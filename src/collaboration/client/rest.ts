import type {
  CollabClientConfig,
  CollabComment,
  CollabTokenInfo,
  CollabVersion,
  CommentAnchor,
} from './types.ts'

/**
 * A REST call the server answered with an error status: `status` is the
 * HTTP status, `body` the parsed JSON body (`{ errors: [...] }`) or text.
 */
export class CollabRestError extends Error {
  status: number
  body: unknown
  /** The first error code of the body (`E_COLLAB_FORBIDDEN`), when there is one */
  code?: string

  constructor(status: number, body: unknown) {
    const first = (body as any)?.errors?.[0]
    const message =
      typeof first?.message === 'string'
        ? first.message
        : `Collaboration request failed with status ${status}`
    super(message)
    this.name = 'CollabRestError'
    this.status = status
    this.body = body
    this.code = typeof first?.code === 'string' ? first.code : undefined
  }
}

/** Origin of the page, or an error naming `baseUrl` outside a browser */
function defaultBaseUrl(): string {
  const origin = (globalThis as any).location?.origin
  if (typeof origin !== 'string' || origin === 'null') {
    throw new Error('No page origin: set "baseUrl" of the collaboration client')
  }
  return origin
}

/** The absolute URL of a collaboration route */
export function collabUrl(config: CollabClientConfig, path: string): string {
  const base = (config.baseUrl ?? defaultBaseUrl()).replace(/\/+$/, '')
  const prefix = (config.prefix ?? '/collaboration').replace(/\/+$/, '')
  return `${base}${prefix}${path}`
}

/**
 * Calls a collaboration route with the configured headers and returns the
 * parsed JSON body (`undefined` for 204); any other status throws
 * `CollabRestError`.
 */
export async function collabFetch<T>(
  config: CollabClientConfig,
  path: string,
  init: RequestInit = {}
): Promise<T> {
  const headers = new Headers(config.getHeaders ? await config.getHeaders() : undefined)
  new Headers(init.headers).forEach((value, key) => headers.set(key, value))
  if (init.body !== undefined && !headers.has('content-type')) {
    headers.set('content-type', 'application/json')
  }
  headers.set('accept', headers.get('accept') ?? 'application/json')
  const fetchImpl = config.fetchImpl ?? globalThis.fetch
  const response = await fetchImpl(collabUrl(config, path), {
    credentials: config.credentials ?? 'same-origin',
    ...init,
    headers,
  })
  if (response.status === 204) {
    return undefined as T
  }
  const type = response.headers.get('content-type') ?? ''
  if (type.includes('application/octet-stream')) {
    if (!response.ok) {
      throw new CollabRestError(response.status, null)
    }
    return new Uint8Array(await response.arrayBuffer()) as T
  }
  const text = await response.text()
  let body: unknown = text
  if (type.includes('json') && text) {
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  if (!response.ok) {
    throw new CollabRestError(response.status, body)
  }
  return body as T
}

const query = (values: Record<string, string | number | undefined>) => {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) params.set(key, String(value))
  }
  return `?${params}`
}

/** Page of a list route: 1-based `page`, `size` capped at 200 by the server */
export interface PageInput {
  page?: number
  size?: number
}

/** `GET /token`: a token for the document, its WebSocket URL and engine */
export function fetchToken(config: CollabClientConfig, docName: string) {
  return collabFetch<CollabTokenInfo>(config, `/token${query({ doc: docName })}`)
}

/** `GET /comments`, oldest first */
export function listComments(
  config: CollabClientConfig,
  docName: string,
  options: PageInput & { space?: string } = {}
) {
  return collabFetch<CollabComment[]>(
    config,
    `/comments${query({ doc: docName, space: options.space, page: options.page, size: options.size })}`
  )
}

export interface CreateCommentInput {
  docName: string
  space: string
  anchor: CommentAnchor
  body: string
  authorName?: string
}

/** `POST /comments`; the author is the caller */
export function createComment(config: CollabClientConfig, input: CreateCommentInput) {
  return collabFetch<CollabComment>(config, '/comments', {
    method: 'POST',
    body: JSON.stringify(input),
  })
}

/** `PATCH /comments/:id`: resolves (or, with `false`, reopens) a comment */
export function resolveComment(
  config: CollabClientConfig,
  docName: string,
  commentId: string,
  resolved = true
) {
  return collabFetch<CollabComment>(
    config,
    `/comments/${encodeURIComponent(commentId)}${query({ doc: docName })}`,
    { method: 'PATCH', body: JSON.stringify({ resolved }) }
  )
}

/** `DELETE /comments/:id` */
export function deleteComment(config: CollabClientConfig, docName: string, commentId: string) {
  return collabFetch<void>(
    config,
    `/comments/${encodeURIComponent(commentId)}${query({ doc: docName })}`,
    { method: 'DELETE' }
  )
}

/** `GET /versions` */
export function listVersions(config: CollabClientConfig, docName: string, options: PageInput = {}) {
  return collabFetch<CollabVersion[]>(
    config,
    `/versions${query({ doc: docName, page: options.page, size: options.size })}`
  )
}

/** `POST /versions`: snapshots the document; `createdBy` is the caller */
export function createVersion(config: CollabClientConfig, docName: string, label?: string) {
  return collabFetch<CollabVersion>(config, '/versions', {
    method: 'POST',
    body: JSON.stringify(label === undefined ? { docName } : { docName, label }),
  })
}

/** `POST /versions/restore`: writes the version's content into the live document */
export function restoreVersion(config: CollabClientConfig, docName: string, versionId: string) {
  return collabFetch<void>(config, '/versions/restore', {
    method: 'POST',
    body: JSON.stringify({ docName, versionId }),
  })
}

/** `GET /state`: the document's binary state */
export function fetchState(config: CollabClientConfig, docName: string) {
  return collabFetch<Uint8Array>(config, `/state${query({ doc: docName })}`, {
    headers: { accept: 'application/octet-stream' },
  })
}
