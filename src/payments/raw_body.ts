import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { WebhookRejectedException, WebhookTooLargeException } from './errors.ts'

const RAW_BODIES = new WeakMap<object, Buffer>()

/**
 * The bytes captured for a webhook request, if the middleware ran.
 */
export function capturedRawBody(ctx: HttpContext): Buffer | undefined {
  return RAW_BODIES.get(ctx.request)
}

/**
 * Reads a request stream into one Buffer, refusing more than `limit` bytes.
 */
export function readBody(
  stream: NodeJS.ReadableStream,
  limit: number
): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    stream.on('data', (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > limit) {
        done = true
        resolve('too_large')
        stream.resume()
        return
      }
      chunks.push(chunk)
    })
    stream.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks))
    })
    stream.on('error', (error) => {
      if (!done) reject(error)
    })
  })
}

/**
 * A server middleware, registered by the payments provider, that captures
 * the exact bytes of `POST <prefix>/...` before the bodyparser runs and then
 * hides the body from it: signatures are checked against what the gateway
 * sent, and the bodyparser's JSON rules (strict mode, 422s) never answer for
 * a webhook. Bodies over `maxBodySize` (declared or streamed) are answered
 * 413 here, through `WebhookTooLargeException`.
 */
export function createRawBodyMiddleware(prefix: string, maxBodySize: number) {
  const path = `${prefix}/`
  return class WebhookRawBodyMiddleware {
    async handle(ctx: HttpContext, next: NextFn) {
      const request = ctx.request.request
      if (request.method !== 'POST' || !request.url?.startsWith(path)) {
        return next()
      }
      const declared = Number(request.headers['content-length'])
      if (Number.isFinite(declared) && declared > maxBodySize) {
        // Refused before a byte is read: the declared length alone is over the cap
        throw new WebhookTooLargeException(
          `body of ${declared} bytes is larger than maxBodySize (${maxBodySize})`
        )
      }
      let body: Buffer | 'too_large'
      try {
        body = await readBody(request, maxBodySize)
      } catch (error) {
        throw new WebhookRejectedException('request body was aborted', undefined, { cause: error })
      }
      if (body === 'too_large') {
        throw new WebhookTooLargeException(`body is larger than maxBodySize (${maxBodySize})`)
      }
      RAW_BODIES.set(ctx.request, body)
      // The stream is drained: tell the bodyparser there is nothing left to parse
      delete request.headers['content-length']
      delete request.headers['transfer-encoding']
      return next()
    }
  }
}
