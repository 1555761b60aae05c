import type { HttpContext } from '@adonisjs/core/http'
import { ConsoleInvalidQueryException } from '../errors.ts'
import type { ConsoleManager } from '../manager.ts'
import { MAX_PULSE_MINUTES, pulseOf } from '../pulse.ts'

/** `minutes` of a health request: a whole number from 1 to 1440, or the configured window */
export function parseMinutes(value: unknown, fallback: number) {
  if (value === undefined || value === '') return fallback
  const minutes = typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN
  if (!(minutes >= 1 && minutes <= MAX_PULSE_MINUTES)) {
    throw new ConsoleInvalidQueryException(
      `"minutes" must be a whole number from 1 to ${MAX_PULSE_MINUTES}`,
      'minutes'
    )
  }
  return minutes
}

/**
 * `GET {path}/api/health`: the recorder's state and the pulse of the last
 * `minutes` (traffic and latencies from the rollups, exception families,
 * stored rows).
 */
export class HealthController {
  #manager: ConsoleManager

  constructor(manager: ConsoleManager) {
    this.#manager = manager
  }

  show = async (ctx: HttpContext) => {
    const { config, store } = this.#manager
    const minutes = parseMinutes(ctx.request.qs().minutes, config.pulse.windowMinutes)
    return {
      data: {
        recorder: this.#manager.recorderState(),
        ...(await pulseOf(store, config.pulse, minutes)),
      },
    }
  }
}
