import type { HttpContext } from '@adonisjs/core/http'
import { ConsoleInvalidQueryException } from '../errors.ts'

/** Largest login body read when the host has no bodyparser on the console's routes */
const MAX_LOGIN_BODY = 16 * 1024

/**
 * The JSON body of a console auth request: the bodyparser's result when it
 * ran, else the raw stream read here (capped), so login works whether or not
 * the host registered the bodyparser for these routes.
 */
export async function readJsonBody(ctx: HttpContext): Promise<Record<string, unknown>> {
  // the raw text, not the parsed body: the bodyparser turns "" into null, and
  // an empty password must reach the login hook verbatim
  const text = ctx.request.raw()
  if (text !== null) return parseObject(text)
  const raw = ctx.request.request
  if (raw.readableEnded || !raw.readable) return ctx.request.body() ?? {}
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of raw) {
    size += chunk.length
    if (size > MAX_LOGIN_BODY) {
      throw new ConsoleInvalidQueryException(`Body over ${MAX_LOGIN_BODY} bytes`, 'body')
    }
    chunks.push(chunk)
  }
  return parseObject(Buffer.concat(chunks).toString('utf8'))
}

function parseObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {}
  try {
    const value = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {}
  } catch {
    throw new ConsoleInvalidQueryException('Body is not valid JSON', 'body')
  }
}
