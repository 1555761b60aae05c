import type { Logger } from '@adonisjs/core/logger'
import { publishConsoleEvent } from '../events.ts'
import { batchStorage, IGNORED_BATCH } from '../batch.ts'
import debug from '../debug.ts'
import { entryId } from '../ids.ts'
import { redactUrl, redactValue } from '../redact.ts'
import type { ConsoleStore } from '../stores/contract.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import type { AlertFinding, ConsoleAlert, ResolvedAlertRule, ResolvedAlerts } from './config.ts'
import { findingsOf } from './rules.ts'

/** The lease one instance of a fleet evaluates under, so a fleet sends each alert once */
export const ALERTS_LEASE = 'console:alerts'
/** Subjects tracked per rule; beyond, the quiet ones are forgotten first */
const MAX_TRACKED = 1000

/** One rule's subject between evaluations */
interface Incident {
  /** The condition held at the last evaluation */
  active: boolean
  /** A "firing" notification was sent for the current incident */
  notified: boolean
  startedAt: number
  lastFiringAt?: number
  finding: AlertFinding
}

const URL_IN_TEXT = /https?:\/\/[^\s"'<>]+/g

/** A channel's error message with every URL cut to its origin: webhook paths and queries hold secrets */
function safeMessage(error: unknown) {
  const text = String((error as Error)?.message ?? error).slice(0, 300)
  return text.replace(URL_IN_TEXT, (url) => (URL.canParse(url) ? new URL(url).origin : '[url]'))
}

/**
 * Evaluates `alerts.rules` off the request path, on an unref'd timer, from
 * what the console stored (rollups and entries), and notifies the channels:
 * "firing" when a rule's subject starts holding (at most once per cooldown),
 * "resolved" when a notified one stops. A channel's failure is logged and
 * counted, never thrown; payloads are redacted like every exit.
 */
export class AlertEvaluator {
  #alerts: ResolvedAlerts
  #store: ConsoleStore
  #redact: ResolvedConsoleConfig['redact']
  #logger?: Logger
  #owner = `alerts-${entryId()}`
  #incidents = new Map<string, Map<string, Incident>>()
  #timer?: NodeJS.Timeout
  #running?: Promise<ConsoleAlert[]>
  #warned = new Set<string>()
  /** Notifications delivered, and deliveries that failed (per channel) */
  sent = 0
  failed = 0

  constructor(
    alerts: ResolvedAlerts,
    store: ConsoleStore,
    redact: ResolvedConsoleConfig['redact'],
    logger?: Logger
  ) {
    this.#alerts = alerts
    this.#store = store
    this.#redact = redact
    this.#logger = logger
  }

  start() {
    if (this.#timer) return
    this.#timer = setInterval(() => {
      // an evaluation never throws into the app, not even from a bug of its own
      this.evaluate().catch((error) => debug('alert evaluation failed: %s', safeMessage(error)))
    }, this.#alerts.intervalMs)
    this.#timer.unref()
  }

  async stop() {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running?.catch(() => {})
  }

  /**
   * One evaluation at `now`: the notifications it sent. Skipped (empty) while
   * another evaluation runs or another instance holds the alerts lease.
   */
  evaluate(now = Date.now()): Promise<ConsoleAlert[]> {
    if (this.#running) return Promise.resolve([])
    // the console's own work: a webhook's fetch or a log line is not recorded
    this.#running = batchStorage
      .run(IGNORED_BATCH, () => this.#evaluate(now))
      .finally(() => {
        this.#running = undefined
      })
    return this.#running
  }

  async #evaluate(now: number) {
    if (!(await this.#holdsLease(now))) return []
    const alerts: ConsoleAlert[] = []
    for (const rule of this.#alerts.rules) {
      let findings: AlertFinding[]
      try {
        findings = await findingsOf(this.#store, rule, now)
      } catch (error) {
        this.#warnOnce(
          `rule:${rule.name}`,
          `console alert rule "${rule.name}" could not be evaluated (${safeMessage(error)}); it is retried at each evaluation`
        )
        continue
      }
      alerts.push(...this.#transitions(rule, findings, now))
    }
    for (const alert of alerts) {
      publishConsoleEvent(alert.status === 'firing' ? 'alert.fired' : 'alert.resolved', alert)
    }
    await Promise.all(alerts.map((alert) => this.#deliver(alert)))
    return alerts
  }

  /** Another instance evaluating holds the lease; a store without the leases table evaluates alone */
  async #holdsLease(now: number) {
    try {
      return await this.#store.acquireLease({
        name: ALERTS_LEASE,
        owner: this.#owner,
        yieldingOwner: this.#owner,
        expiresAt: now + this.#alerts.intervalMs * 3,
      })
    } catch (error) {
      this.#warnOnce(
        'lease',
        `console alerts evaluate without the fleet lease (${safeMessage(error)}): each instance may send the same alert`
      )
      return true
    }
  }

  /** The notifications a rule's findings cause, and its incidents updated */
  #transitions(rule: ResolvedAlertRule, findings: AlertFinding[], now: number) {
    let incidents = this.#incidents.get(rule.name)
    if (!incidents) this.#incidents.set(rule.name, (incidents = new Map()))
    const alerts: ConsoleAlert[] = []
    const holding = new Set<string>()
    for (const finding of findings) {
      const key = finding.key ?? finding.subject
      holding.add(key)
      let incident = incidents.get(key)
      if (!incident || !incident.active) {
        incident = { ...incident, active: true, notified: false, startedAt: now, finding }
        incidents.set(key, incident)
      }
      incident.finding = finding
      const cooled =
        incident.lastFiringAt === undefined || now - incident.lastFiringAt >= rule.cooldownMs
      if (!incident.notified && cooled) {
        incident.notified = true
        incident.lastFiringAt = now
        alerts.push(this.#alert('firing', rule, incident, now))
      }
    }
    for (const [key, incident] of incidents) {
      if (holding.has(key) || !incident.active) continue
      incident.active = false
      if (incident.notified && this.#alerts.resolved) {
        alerts.push(this.#alert('resolved', rule, incident, now))
      }
      incident.notified = false
    }
    this.#forgetQuiet(incidents, rule, now)
    return alerts
  }

  /** Drops subjects that neither hold nor are cooling down, oldest first past `MAX_TRACKED` */
  #forgetQuiet(incidents: Map<string, Incident>, rule: ResolvedAlertRule, now: number) {
    for (const [key, incident] of incidents) {
      if (incident.active) continue
      if (incident.lastFiringAt === undefined || now - incident.lastFiringAt >= rule.cooldownMs) {
        incidents.delete(key)
      }
    }
    for (const key of incidents.keys()) {
      if (incidents.size <= MAX_TRACKED) break
      incidents.delete(key)
    }
  }

  #alert(
    status: ConsoleAlert['status'],
    rule: ResolvedAlertRule,
    incident: Incident,
    now: number
  ): ConsoleAlert {
    const { finding } = incident
    const dashboard = this.#alerts.dashboardUrl
    let url: string | null = null
    if (dashboard) {
      url = finding.entryId ? `${dashboard}#/entries/${finding.entryId}` : `${dashboard}#/health`
    }
    const text = (value: string) =>
      value.replace(URL_IN_TEXT, (found) => redactUrl(found, this.#redact))
    const alert: ConsoleAlert = {
      status,
      rule: rule.name,
      kind: rule.kind,
      subject: text(finding.subject),
      summary: text(status === 'resolved' ? `resolved: ${finding.summary}` : finding.summary),
      value: finding.value,
      threshold: finding.threshold,
      windowMs: rule.withinMs,
      startedAt: new Date(incident.startedAt).toISOString(),
      at: new Date(now).toISOString(),
      url,
      details: (redactValue(finding.details ?? {}, this.#redact) ?? {}) as Record<string, unknown>,
    }
    // bounded like every stored value: strings, depth and keys
    return redactValue(alert, this.#redact) as ConsoleAlert
  }

  async #deliver(alert: ConsoleAlert) {
    await Promise.all(
      this.#alerts.channels.map(async (channel) => {
        try {
          await channel.send(alert, { logger: this.#logger })
          this.sent++
          debug('alert %s %s sent to %s', alert.rule, alert.status, channel.name)
        } catch (error) {
          this.failed++
          this.#logger?.warn(
            `console alert channel "${channel.name}" failed to send "${alert.rule}" (${alert.status}): ${safeMessage(error)}`
          )
        }
      })
    )
  }

  #warnOnce(key: string, message: string) {
    if (this.#warned.has(key)) return
    this.#warned.add(key)
    this.#logger?.warn(message)
  }
}
