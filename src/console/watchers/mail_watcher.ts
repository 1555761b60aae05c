import { performance } from 'node:perf_hooks'
import { batchStorage } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/** A recipient as `@adonisjs/mail` (nodemailer) holds it */
type Recipient = string | { address?: string; name?: string }

/** What the watcher reads of `mail:sending` / `mail:sent` */
export interface MailEvent {
  mailerName?: string
  message?: {
    from?: Recipient
    to?: Recipient[]
    cc?: Recipient[]
    bcc?: Recipient[]
    replyTo?: Recipient[]
    subject?: string
    html?: unknown
    text?: unknown
  }
  response?: { messageId?: string }
}

/** The app emitter, as far as this watcher needs it */
interface Emitter {
  on(event: string, listener: (data: any) => void): () => void
}

/** Recipients recorded per field; the rest are counted */
const MAX_RECIPIENTS = 20

function address(recipient: Recipient | undefined): string | null {
  if (!recipient) return null
  if (typeof recipient === 'string') return recipient.slice(0, 320)
  const email = String(recipient.address ?? '').slice(0, 320)
  return recipient.name ? `${String(recipient.name).slice(0, 100)} <${email}>` : email
}

function addresses(list: Recipient | Recipient[] | undefined): string[] {
  if (!list) return []
  const all = Array.isArray(list) ? list : [list]
  const kept = all.slice(0, MAX_RECIPIENTS).map((recipient) => address(recipient) ?? '')
  if (all.length > MAX_RECIPIENTS) kept.push(`[${all.length - MAX_RECIPIENTS} more]`)
  return kept
}

/**
 * Records mail sent through `@adonisjs/mail`, from the `mail:sending` and
 * `mail:sent` events of the app emitter: mailer, from, to, cc, bcc,
 * reply-to, subject, message id and the time between the two events. Bodies
 * are recorded only with `bodies: true`, redacted and bounded. The emitter
 * keeps the sender's async context, so mail sent during a request joins its
 * batch.
 */
export class MailWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #bodies: boolean
  #sending = new WeakMap<object, number>()
  #unsubscribe: (() => void)[] = []

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { bodies?: boolean }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#bodies = options.bodies === true
  }

  install(emitter: Emitter) {
    this.#unsubscribe.push(
      emitter.on('mail:sending', (event: MailEvent) => {
        if (event?.message) this.#sending.set(event.message, performance.now())
      }),
      emitter.on('mail:sent', (event: MailEvent) => this.record(event))
    )
  }

  uninstall() {
    for (const unsubscribe of this.#unsubscribe) unsubscribe()
    this.#unsubscribe = []
  }

  /** Records one sent mail; never throws */
  record(event: MailEvent) {
    try {
      if (batchStorage.getStore()?.ignored || !this.#config.enabled) return
      const message = event?.message ?? {}
      const startedAt = this.#sending.get(message)
      const durationMs = startedAt === undefined ? null : performance.now() - startedAt
      const subject = typeof message.subject === 'string' ? message.subject : ''
      const to = addresses(message.to)
      const content: Record<string, unknown> = {
        mailer: event?.mailerName ?? null,
        from: address(message.from as Recipient | undefined),
        to,
        cc: addresses(message.cc),
        bcc: addresses(message.bcc),
        replyTo: addresses(message.replyTo),
        subject: redactValue(subject, this.#config.redact),
        messageId: event?.response?.messageId ?? null,
      }
      if (this.#bodies) {
        content.html = redactValue(
          typeof message.html === 'string' ? message.html : null,
          this.#config.redact
        )
        content.text = redactValue(
          typeof message.text === 'string' ? message.text : null,
          this.#config.redact
        )
      }
      this.#recorder.record({
        type: 'mail',
        summary: `${subject} → ${to.join(', ')}`.slice(0, 255),
        status: null,
        method: null,
        durationMs,
        slow: false,
        tags: event?.mailerName ? [String(event.mailerName).slice(0, 64)] : [],
        content,
      })
    } catch {
      // recording never fails sending mail
    }
  }
}
