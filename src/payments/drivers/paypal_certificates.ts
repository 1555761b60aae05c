import { X509Certificate, type KeyObject } from 'node:crypto'
import debug from '../debug.ts'
import { reject, WebhookRejectedException } from '../errors.ts'

/**
 * The key of the one option that lets PayPal certificates come from a
 * loopback origin. It is a symbol exported by `adonis-atrium/payments/testing`,
 * so no value read from the environment or a JSON file can set it: a
 * production config reaches it only by importing the testing module on purpose.
 */
export const PAYPAL_TEST_CERTIFICATE_ORIGIN: unique symbol = Symbol.for(
  'atrium.payments.paypal.testCertificateOrigin'
)

/** Largest certificate body read, in bytes */
export const MAX_CERTIFICATE_BYTES = 16 * 1024
/** Most certificates kept at once (PayPal rotates one at a time) */
const MAX_CACHED = 8
/** A failed URL is not fetched again for this long, so forged deliveries cannot make every request call out */
const RETRY_AFTER_FAILURE_MS = 30_000
const CERTIFICATE_PATH = '/v1/notifications/certs/'

export interface CertificateStoreOptions {
  /** How long a fetched certificate is kept, in ms (default 24 hours; never past its expiry) */
  ttlMs?: number
  /** How long one fetch may take, in ms (default 5 000) */
  timeoutMs?: number
  /** A loopback origin (`http://127.0.0.1:<port>`) also accepted; tests only */
  testOrigin?: string
}

/**
 * Whether PayPal publishes certificates at this URL: https on a host under
 * paypal.com (`api.paypal.com`, `api.sandbox.paypal.com`, `api-m.paypal.com`,
 * ...), default port, no credentials, under `/v1/notifications/certs/`.
 */
export function isPayPalCertificateUrl(url: URL) {
  return (
    url.protocol === 'https:' &&
    url.hostname.endsWith('.paypal.com') &&
    url.port === '' &&
    url.username === '' &&
    url.password === '' &&
    url.pathname.startsWith(CERTIFICATE_PATH)
  )
}

function loopbackOrigin(value: string) {
  const url = new URL(value)
  if (!['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname)) {
    throw new Error(`PayPal test certificate origin must be a loopback address, got ${url.host}`)
  }
  return url.origin
}

/**
 * Fetches, checks and caches the certificates named by `paypal-cert-url`.
 * Only PayPal's hosts are asked; the body is capped, the fetch time-limited,
 * concurrent deliveries share one fetch, and a certificate outside its
 * validity window is refused.
 */
export class PayPalCertificateStore {
  #cache = new Map<string, { key: KeyObject; until: number }>()
  #pending = new Map<string, Promise<KeyObject>>()
  #failures = new Map<string, { at: number; message: string }>()
  #testOrigin?: string

  constructor(private options: CertificateStoreOptions = {}) {
    this.#testOrigin = options.testOrigin ? loopbackOrigin(options.testOrigin) : undefined
  }

  /** The public key of the certificate at `value`, fetched once and cached */
  async publicKey(value: string): Promise<KeyObject> {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      reject('paypal-cert-url is not a URL')
    }
    const fromTests =
      this.#testOrigin !== undefined &&
      url.origin === this.#testOrigin &&
      url.pathname.startsWith(CERTIFICATE_PATH)
    if (!fromTests && !isPayPalCertificateUrl(url)) {
      reject('paypal-cert-url is not a PayPal certificate URL')
    }
    const href = url.href
    const cached = this.#cache.get(href)
    if (cached && cached.until > Date.now()) {
      return cached.key
    }
    const failure = this.#failures.get(href)
    if (failure && Date.now() - failure.at < RETRY_AFTER_FAILURE_MS) {
      reject(failure.message)
    }
    let pending = this.#pending.get(href)
    if (!pending) {
      pending = this.#fetch(href).finally(() => this.#pending.delete(href))
      this.#pending.set(href, pending)
    }
    return pending
  }

  async #fetch(href: string): Promise<KeyObject> {
    try {
      const pem = await this.#download(href)
      let certificate: X509Certificate
      try {
        certificate = new X509Certificate(pem)
      } catch {
        reject('the PayPal certificate could not be read')
      }
      const now = Date.now()
      const validTo = Date.parse(certificate.validTo)
      if (Date.parse(certificate.validFrom) > now || !(validTo > now)) {
        reject('the PayPal certificate is not valid now')
      }
      const until = Math.min(validTo, now + (this.options.ttlMs ?? 24 * 60 * 60_000))
      if (this.#cache.size >= MAX_CACHED) {
        this.#cache.delete(this.#cache.keys().next().value!)
      }
      this.#cache.set(href, { key: certificate.publicKey, until })
      this.#failures.delete(href)
      return certificate.publicKey
    } catch (error) {
      const message =
        error instanceof WebhookRejectedException
          ? error.message
          : 'the PayPal certificate could not be fetched'
      debug('paypal certificate %s: %s', href, (error as Error)?.message)
      if (this.#failures.size >= MAX_CACHED) this.#failures.clear()
      this.#failures.set(href, { at: Date.now(), message })
      reject(message)
    }
  }

  /** The body of the certificate URL, refused past MAX_CERTIFICATE_BYTES */
  async #download(href: string) {
    const response = await fetch(href, {
      redirect: 'error',
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
    })
    if (!response.ok || !response.body) {
      reject(`the PayPal certificate URL answered ${response.status}`)
    }
    const reader = response.body.getReader()
    const chunks: Uint8Array[] = []
    let size = 0
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      size += read.value.byteLength
      if (size > MAX_CERTIFICATE_BYTES) {
        await reader.cancel()
        reject('the PayPal certificate is larger than expected')
      }
      chunks.push(read.value)
    }
    return Buffer.concat(chunks).toString('utf8')
  }
}
