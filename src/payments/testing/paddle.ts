import { createHmac } from 'node:crypto'

/**
 * `Paddle-Signature: ts=<unix>;h1=<hex HMAC-SHA256 of "<ts>:<body>">`.
 */
export function paddleSignature(body: string, secret: string, timestamp?: number) {
  const ts = timestamp ?? Math.floor(Date.now() / 1000)
  const h1 = createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex')
  return `ts=${ts};h1=${h1}`
}
