import type { HttpRequest } from '@adonisjs/core/http'

/**
 * Parses a `Cookie` header into name/value pairs. Malformed pairs are skipped,
 * the first of two same-named cookies wins, and values are URI-decoded when
 * they decode cleanly. Never throws.
 */
export function parseCookieHeader(header: string | undefined | null): Record<string, string> {
  const cookies: Record<string, string> = Object.create(null)
  if (typeof header !== 'string' || header.length === 0) return cookies
  for (const part of header.split(';')) {
    const index = part.indexOf('=')
    if (index <= 0) continue
    const name = part.slice(0, index).trim()
    if (!name || name in cookies) continue
    let value = part.slice(index + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1)
    }
    try {
      cookies[name] = decodeURIComponent(value)
    } catch {
      cookies[name] = value
    }
  }
  return cookies
}

/**
 * The cookies of an Adonis request (or a raw Node request), read from the
 * raw header: the console signs its own cookie, so Adonis' cookie
 * encryption and signing are not involved.
 */
export function readCookieHeader(
  request: Pick<HttpRequest, 'header'> | { headers: Record<string, string | string[] | undefined> }
): Record<string, string> {
  const header =
    'header' in request && typeof request.header === 'function'
      ? request.header('cookie')
      : (request as { headers: Record<string, string | string[] | undefined> }).headers.cookie
  return parseCookieHeader(Array.isArray(header) ? header.join('; ') : header)
}

/** Options of a `Set-Cookie` line */
export interface SetCookieOptions {
  path: string
  maxAgeSeconds: number
  secure: boolean
}

/** A `Set-Cookie` value: httpOnly, SameSite=Lax, Secure on https */
export function serializeCookie(name: string, value: string, options: SetCookieOptions): string {
  const parts = [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Lax',
  ]
  if (options.maxAgeSeconds <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT')
  if (options.secure) parts.push('Secure')
  return parts.join('; ')
}
