import { createHmac } from 'node:crypto'

/** `X-Mollie-Signature: sha256=<hex HMAC-SHA256 of the raw body>` of a next-gen webhook */
export function mollieSignature(body: string, secret: string) {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** The classic webhook's form body: only the payment id (`id=tr_...`) */
export function mollieClassicBody(payload: unknown) {
  const id = typeof payload === 'string' ? payload : (payload as { id?: string })?.id
  return new URLSearchParams({ id: String(id) }).toString()
}
