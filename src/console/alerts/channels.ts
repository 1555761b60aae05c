import { fail, FILE } from '../config_checks.ts'
import type { AlertChannel, ConsoleAlert } from './config.ts'

/** Longest wait for a webhook's answer by default */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5000

/** Options of `alertChannels.webhook()` */
export interface WebhookChannelOptions {
  /** Where the alert is POSTed as JSON */
  url: string
  /** `'webhook'` by default; names the channel in logs */
  name?: string
  /** Extra request headers, such as an `authorization` the receiver checks */
  headers?: Record<string, string>
  /** Abort after this many ms (5000) */
  timeoutMs?: number
  /** The JSON body to send instead of the alert itself, e.g. Slack's `{ text }` */
  body?: (alert: ConsoleAlert) => unknown
}

/** A channel error whose message names neither the URL nor the body: both may hold secrets */
export class AlertDeliveryError extends Error {}

function webhook(options: WebhookChannelOptions): AlertChannel {
  const where = `alertChannels.webhook() in "alerts.channels" of ${FILE}`
  let url: URL | null = null
  if (typeof options?.url === 'string' && URL.canParse(options.url)) url = new URL(options.url)
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    fail(`Invalid "url" of ${where}: use an http(s) URL`)
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) {
    fail(`Invalid "timeoutMs" of ${where}: use 1 to 60000 milliseconds`)
  }
  if (options.body !== undefined && typeof options.body !== 'function') {
    fail(`Invalid "body" of ${where}: use a function (alert) => JSON body`)
  }
  const target = url.href
  return {
    name: options.name ?? 'webhook',
    async send(alert) {
      let response: Response
      try {
        response = await fetch(target, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'adonis-atrium-console',
            ...options.headers,
          },
          body: JSON.stringify(options.body ? options.body(alert) : alert),
          signal: AbortSignal.timeout(timeoutMs),
        })
      } catch (error: any) {
        if (error?.name === 'TimeoutError') {
          throw new AlertDeliveryError(`no answer within ${timeoutMs} ms`)
        }
        const code = error?.cause?.code ?? error?.code
        throw new AlertDeliveryError(`request failed${code ? ` (${code})` : ''}`)
      }
      // the body is not needed; reading it frees the connection
      await response.arrayBuffer().catch(() => {})
      if (!response.ok) throw new AlertDeliveryError(`answered ${response.status}`)
    },
  }
}

function log(options: { name?: string; level?: 'error' | 'warn' | 'info' } = {}): AlertChannel {
  const level = options.level ?? 'error'
  if (!['error', 'warn', 'info'].includes(level)) {
    fail(
      `Invalid "level" of alertChannels.log() in "alerts.channels" of ${FILE}: use 'error', 'warn' or 'info'`
    )
  }
  return {
    name: options.name ?? 'log',
    send(alert, { logger }) {
      const prefix = alert.status === 'firing' ? 'console alert' : 'console alert resolved'
      logger?.[alert.status === 'firing' ? level : 'info']({ alert }, `${prefix}: ${alert.summary}`)
    },
  }
}

/** Channels for `alerts.channels`; any `{ name, send(alert) }` object works too */
export const alertChannels = { webhook, log }
