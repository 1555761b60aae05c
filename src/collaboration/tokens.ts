import { createHmac, timingSafeEqual } from 'node:crypto'
import { assertDocumentName, isValidDocumentName } from './document_name.ts'
import { automergeDocumentId } from './engines/automerge/document_id.ts'
import { CollabForbiddenError, CollabTokenSecretMissingError } from './errors.ts'
import { isHostedEngine } from './hosted_room.ts'
import type {
  CollabConnectionContext,
  CollabEngineName,
  CollabPermission,
  CollabTokenInfo,
  CollabTokenPayload,
  CollaborationConfig,
} from './types.ts'

/**
 * Lifetime of a collaboration token.
 */
export const COLLAB_TOKEN_TTL_SECONDS = 300

/**
 * The secrets `resolveTokenSecret` falls back to, set by the provider from
 * `config/collaboration.ts` and the application key.
 */
const defaults: { tokenSecret?: string; appKey?: string } = {}

/**
 * Sets the config secret and application key used when no explicit secret is
 * passed (the provider calls it at boot; tests may too).
 */
export function configureTokenSecrets(options: { tokenSecret?: string; appKey?: string }) {
  defaults.tokenSecret = options.tokenSecret || undefined
  defaults.appKey = options.appKey || undefined
}

/**
 * The signing key: explicit, then config `tokenSecret`, then a key derived
 * from the application key (never the raw key, so a leaked token secret does
 * not leak the key that encrypts cookies). Throws when none is set.
 */
export function resolveTokenSecret(secret?: string): string {
  if (secret) {
    return secret
  }
  if (defaults.tokenSecret) {
    return defaults.tokenSecret
  }
  if (defaults.appKey) {
    return createHmac('sha256', defaults.appKey).update('atrium:collaboration:token').digest('hex')
  }
  throw new CollabTokenSecretMissingError()
}

/**
 * Timing-safe string comparison; false for a missing side.
 */
export function secretsMatch(
  received: string | undefined | null,
  expected: string | undefined | null
) {
  if (typeof received !== 'string' || typeof expected !== 'string' || !expected) {
    return false
  }
  const a = createHmac('sha256', 'atrium').update(received).digest()
  const b = createHmac('sha256', 'atrium').update(expected).digest()
  return timingSafeEqual(a, b)
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')

function sign(input: string, secret: string) {
  return createHmac('sha256', secret).update(input).digest('base64url')
}

/**
 * Signs a token (a compact HS256 JWT) valid `expiresInSeconds` (default 300 s).
 */
export function signCollabToken(
  payload: Omit<CollabTokenPayload, 'exp'> & { exp?: number },
  secret: string,
  expiresInSeconds: number = COLLAB_TOKEN_TTL_SECONDS
): string {
  if (!secret) {
    throw new CollabTokenSecretMissingError()
  }
  assertDocumentName(payload.docName)
  const exp = payload.exp ?? Math.floor(Date.now() / 1000) + expiresInSeconds
  const body: CollabTokenPayload = { userId: String(payload.userId), docName: payload.docName, exp }
  if (payload.user) {
    body.user = payload.user
  }
  if (payload.readOnly) {
    body.readOnly = true
  }
  const encoded = `${HEADER}.${Buffer.from(JSON.stringify(body)).toString('base64url')}`
  return `${encoded}.${sign(encoded, secret)}`
}

/**
 * The payload of a token signed with `secret` for `expectedDocName` that has
 * not expired, else null.
 */
export function verifyCollabToken(
  token: string | undefined | null,
  secret: string,
  expectedDocName: string
): CollabTokenPayload | null {
  if (!secret) {
    throw new CollabTokenSecretMissingError()
  }
  if (typeof token !== 'string' || token.length > 8192 || !isValidDocumentName(expectedDocName)) {
    return null
  }
  const parts = token.split('.')
  if (parts.length !== 3 || parts[0] !== HEADER) {
    return null
  }
  const expected = Buffer.from(sign(`${parts[0]}.${parts[1]}`, secret))
  const received = Buffer.from(parts[2])
  if (expected.length !== received.length || !timingSafeEqual(expected, received)) {
    return null
  }
  let payload: CollabTokenPayload
  try {
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (
    !payload ||
    typeof payload.userId !== 'string' ||
    typeof payload.exp !== 'number' ||
    payload.docName !== expectedDocName ||
    payload.exp * 1000 <= Date.now()
  ) {
    return null
  }
  return payload
}

/**
 * Verifies a token of a document this app serves with the resolved secret.
 */
export function verifySelfHostedToken(
  token: string | undefined | null,
  docName: string,
  secret?: string
): CollabConnectionContext | null {
  const payload = verifyCollabToken(token, resolveTokenSecret(secret), docName)
  if (!payload) {
    return null
  }
  return payload.user ? { userId: payload.userId, user: payload.user } : { userId: payload.userId }
}

function hostedSecret(secret?: string) {
  if (!secret) {
    throw new CollabTokenSecretMissingError(
      'Missing "hosted.jwtSecret" in config/collaboration.ts: the hosted engines sign their tokens with it'
    )
  }
  return secret
}

/**
 * Signs a hosted-engine token (HS256 with `hosted.jwtSecret`).
 */
export function signHostedToken(
  payload: Omit<CollabTokenPayload, 'exp'> & { exp?: number },
  jwtSecret: string | undefined,
  expiresInSeconds?: number
) {
  return signCollabToken(payload, hostedSecret(jwtSecret), expiresInSeconds)
}

/**
 * Verifies a hosted-engine token (HS256 with `hosted.jwtSecret`).
 */
export function verifyHostedToken(
  token: string | undefined | null,
  docName: string,
  jwtSecret: string | undefined
): CollabConnectionContext | null {
  const payload = verifyCollabToken(token, hostedSecret(jwtSecret), docName)
  if (!payload) {
    return null
  }
  return payload.user ? { userId: payload.userId, user: payload.user } : { userId: payload.userId }
}

/**
 * The WebSocket URL of a document: the upgrade path on the app (absolute when
 * `baseUrl` is given, `http` becoming `ws`), or the room worker's URL for the
 * hosted engines. The token goes in the `token` query parameter.
 */
export function buildWsUrl(
  config: Pick<CollaborationConfig, 'path' | 'engine' | 'hosted'> & {
    baseUrl?: string
    engineName?: CollabEngineName
  },
  docName: string
): string {
  const engine = config.engineName ?? config.engine
  if (isHostedEngine(engine) && config.hosted) {
    const host = config.hosted.roomHost.replace(/\/+$/, '')
    const base = /^wss?:\/\//.test(host) ? host : `wss://${host}`
    return `${base}/parties/${config.hosted.party ?? 'main'}/${encodeURIComponent(docName)}`
  }
  const path = `${config.path}/${docName.split('/').map(encodeURIComponent).join('/')}`
  if (!config.baseUrl) {
    return path
  }
  return `${config.baseUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}${path}`
}

/**
 * Issues a token for `user` on `docName` after checking `authorize` (a
 * permission or a function returning one). Without a rule it refuses.
 */
export async function issueToken(
  config: Pick<CollaborationConfig, 'path' | 'engine' | 'hosted' | 'tokenSecret'> & {
    baseUrl?: string
    engineName?: CollabEngineName
  },
  user: { id: string | number; name?: string | null; avatarUrl?: string | null },
  docName: string,
  authorize?: CollabPermission | ((docName: string) => CollabPermission | Promise<CollabPermission>)
): Promise<Required<Omit<CollabTokenInfo, 'documentId'>> & Pick<CollabTokenInfo, 'documentId'>> {
  if (!authorize) {
    throw new CollabForbiddenError(
      'No authorize rule for this document: declare one in config/collaboration.ts'
    )
  }
  const permission = typeof authorize === 'function' ? await authorize(docName) : authorize
  if (!permission?.canRead) {
    throw new CollabForbiddenError(`Reading "${docName}" is not allowed`)
  }
  assertDocumentName(docName)
  const engine = config.engineName ?? config.engine
  const hosted = isHostedEngine(engine)
  const exp = Math.floor(Date.now() / 1000) + COLLAB_TOKEN_TTL_SECONDS
  const payload = {
    userId: String(user.id),
    docName,
    exp,
    ...(user.name || user.avatarUrl
      ? { user: { name: user.name ?? undefined, avatarUrl: user.avatarUrl ?? null } }
      : {}),
    ...(hosted && !permission.canWrite ? { readOnly: true as const } : {}),
  }
  const token = hosted
    ? signHostedToken(payload, config.hosted?.jwtSecret)
    : signCollabToken(payload, resolveTokenSecret(config.tokenSecret))
  return {
    token,
    wsUrl: buildWsUrl(config, docName),
    engine,
    expiresAt: new Date(exp * 1000).toISOString(),
    ...(engine === 'automerge' ? { documentId: automergeDocumentId(docName) } : {}),
  }
}
