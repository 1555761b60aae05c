/**
 * The payments fuzz cases, shared by tests/hostile/payments_fuzz.spec.ts and
 * benchmarks/payments/fuzz.ts: seeded random bodies, truncated deliveries,
 * deliveries re-signed with the wrong key and deliveries whose signature
 * header is mangled, for any gateway described as a `FuzzGateway`.
 */
import { signedWebhook, type SigningCredentials } from '../../src/payments/testing.ts'

/** A gateway the fuzzer targets: its route name, a delivery, and right and wrong credentials */
export interface FuzzGateway {
  name: string
  payload(id: string): unknown
  credentials: SigningCredentials
  wrongCredentials: SigningCredentials
}

/** Small deterministic PRNG so a failure replays with the same inputs */
export function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Every header some gateway signs or authenticates with */
const SIGNATURE_HEADERS = [
  'stripe-signature',
  'x-webhook-signature',
  'asaas-access-token',
  'x-openpix-signature',
  'x-authenticity-token',
  'x-fake-signature',
  'x-payload-signature',
  'x-signature',
  'x-request-id',
  'x-hub-signature',
  'x-razorpay-signature',
  'x-square-hmacsha256-signature',
  'paddle-signature',
  // Standard Webhooks' timestamp is left out: it is signed as the number it
  // parses to, so a leading zero (one of the manglings) is still authentic
  'webhook-id',
  'webhook-signature',
  'paypal-transmission-sig',
  'paypal-transmission-id',
  'paypal-cert-url',
  'x-mollie-signature',
]

/** A real delivery signed as the gateway signs it, with the wrong key */
function wrongKey(gateway: FuzzGateway, random: () => number) {
  const payload = gateway.payload(`w${Math.floor(random() * 1e9)}`)
  return signedWebhook(gateway.name, payload, gateway.wrongCredentials)
}

/** A correctly signed delivery cut short: the signature no longer covers the bytes */
function truncated(gateway: FuzzGateway, random: () => number) {
  const payload = gateway.payload(`t${Math.floor(random() * 1e9)}`)
  const signed = signedWebhook(gateway.name, payload, gateway.credentials)
  const cut = 1 + Math.floor(random() * (signed.body.length - 2))
  return { ...signed, body: signed.body.slice(0, cut) }
}

/** A correctly signed delivery whose signature header is mangled */
function mangledHeader(gateway: FuzzGateway, random: () => number) {
  const payload = gateway.payload(`h${Math.floor(random() * 1e9)}`)
  const signed = signedWebhook(gateway.name, payload, gateway.credentials)
  const changed = { ...signed.headers }
  // Headers the gateway signs (informational ones such as X-Event-Name are not)
  const names = Object.keys(changed).filter((name) => SIGNATURE_HEADERS.includes(name))
  const query = { ...signed.query }
  if (names.length === 0 && Object.keys(query).length === 0) {
    // Adyen signs inside the body, item by item: mangle an item's hmacSignature
    const notification = JSON.parse(signed.body)
    const additional = notification.notificationItems?.[0]?.NotificationRequestItem?.additionalData
    if (additional?.hmacSignature) {
      const signature: string = additional.hmacSignature
      const at = Math.floor((random() * signature.length) / 2)
      additional.hmacSignature =
        signature.slice(0, at) + (signature[at] === '0' ? '1' : '0') + signature.slice(at + 1)
    }
    return { ...signed, body: JSON.stringify(notification) }
  }
  if (names.length === 0) {
    // Query-authenticated or unsigned: mangle or drop the query instead
    for (const key of Object.keys(query)) {
      if (random() < 0.5) delete query[key]
      else query[key] = `${query[key]}x`
    }
    return { ...signed, query }
  }
  const name = names[Math.floor(random() * names.length)]
  const value = changed[name]
  // The first half: a base64 value's last characters can carry unused bits
  const at = Math.floor((random() * value.length) / 2)
  const flip = value[at] === '0' ? '1' : '0'
  const choice = Math.floor(random() * 4)
  if (choice === 0) delete changed[name]
  else if (choice === 1) changed[name] = value.slice(0, at) + flip + value.slice(at + 1)
  else if (choice === 2) changed[name] = `0${value}`
  else changed[name] = value.slice(0, at)
  return { ...signed, headers: changed, query }
}

function junk(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 6 : 9))
  switch (pick) {
    case 0:
      return null
    case 1:
      return random() > 0.5
    case 2:
      return Math.floor(random() * 1e6) / (random() > 0.5 ? 100 : 1)
    case 3:
      return ''
    case 4:
      return String.fromCharCode(
        ...Array.from(
          { length: 1 + Math.floor(random() * 12) },
          () => 32 + Math.floor(random() * 0x2fff)
        )
      )
    case 5:
      return -1e21
    case 6:
      return Array.from({ length: Math.floor(random() * 3) }, () => junk(random, depth + 1))
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, (_, index) => [
          `k${index}${Math.floor(random() * 9)}`,
          junk(random, depth + 1),
        ])
      )
  }
}

/** A gateway-shaped payload whose required fields are replaced by junk */
function mangled(gateway: FuzzGateway, random: () => number) {
  const payload = JSON.parse(JSON.stringify(gateway.payload('fz')))
  const visit = (value: any) => {
    if (!value || typeof value !== 'object') return
    for (const key of Object.keys(value)) {
      if (random() < 0.5) value[key] = junk(random)
      else visit(value[key])
    }
  }
  visit(payload)
  return payload
}

function body(gateway: FuzzGateway, random: () => number): string | Buffer {
  const kind = Math.floor(random() * 4)
  if (kind === 0) {
    return Buffer.from(
      Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256))
    )
  }
  if (kind === 1) {
    return JSON.stringify(junk(random))
  }
  if (kind === 2) {
    return JSON.stringify(mangled(gateway, random))
  }
  // A real payload with a forged or missing signature
  return JSON.stringify(gateway.payload(`f${Math.floor(random() * 1e9)}`))
}

function headers(random: () => number) {
  const result: Record<string, string> = {
    'content-type': [
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
    ][Math.floor(random() * 4)],
  }
  for (const name of SIGNATURE_HEADERS) {
    if (random() < 0.4) {
      result[name] = Array.from({ length: Math.floor(random() * 80) }, () =>
        String.fromCharCode(33 + Math.floor(random() * 90))
      ).join('')
    }
  }
  if (random() < 0.3)
    result['stripe-signature'] = `t=${Math.floor(random() * 2e9)},v1=${'ab'.repeat(32)}`
  return result
}

/** One fuzz case: where it goes and what it sends */
export interface FuzzCase {
  provider: string
  body: string | Buffer
  headers: Record<string, string>
  query?: Record<string, string>
}

export function fuzzCase(gateway: FuzzGateway, random: () => number): FuzzCase {
  const provider = gateway.name
  const kind = Math.floor(random() * 5)
  if (kind === 0) return { provider, ...wrongKey(gateway, random) }
  if (kind === 1) return { provider, ...truncated(gateway, random) }
  if (kind === 2) return { provider, ...mangledHeader(gateway, random) }
  const query: Record<string, string> | undefined =
    random() < 0.2 ? { webhookSecret: 'abacate-url-secret' } : undefined
  return { provider, body: body(gateway, random), headers: headers(random), query }
}
