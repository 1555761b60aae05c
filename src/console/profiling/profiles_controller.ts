import type { HttpContext } from '@adonisjs/core/http'
import {
  ConsoleInvalidQueryException,
  ConsoleNotFoundException,
  ConsoleProfilingBusyException,
  ConsoleProfilingPausedException,
} from '../errors.ts'
import { readJsonBody } from '../http/read_body.ts'
import { findEntry } from '../http/find_entry.ts'
import type { ConsoleManager } from '../manager.ts'
import type { CpuProfiler } from './profiler.ts'

const ARM_KEYS = ['count', 'method', 'path', 'ttlMs', 'windowMs']
const METHOD = /^[A-Z]{3,10}$/
const DEFAULT_TTL_MS = 60_000

function invalid(parameter: string, message: string): never {
  throw new ConsoleInvalidQueryException(message, parameter)
}

function wholeNumber(body: Record<string, unknown>, key: string, max: number, fallback: number) {
  const value = body[key]
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > max) {
    invalid(key, `"${key}" must be a whole number from 1 to ${max}`)
  }
  return value as number
}

/**
 * `POST /profiles/arm` (arms the next requests, or profiles a time window)
 * and `GET /profiles/:id/download` (the raw `.cpuprofile`). Both are
 * mutations as far as access goes: `authorizeAction` decides.
 */
export class ProfilesController {
  #manager: ConsoleManager
  #profiler: CpuProfiler

  constructor(manager: ConsoleManager, profiler: CpuProfiler) {
    this.#manager = manager
    this.#profiler = profiler
  }

  arm = async (ctx: HttpContext) => {
    await this.#manager.gates.authorizeAction(ctx, 'arm a CPU profile')
    if (this.#manager.recorder.paused) throw new ConsoleProfilingPausedException()
    const body = await readJsonBody(ctx)
    for (const key of Object.keys(body)) {
      if (!ARM_KEYS.includes(key))
        invalid(key, `Unknown field "${key}": use ${ARM_KEYS.join(', ')}`)
    }
    const limits = this.#manager.config.profiling
    if (body.windowMs !== undefined) {
      if (Object.keys(body).length > 1) {
        invalid('windowMs', '"windowMs" profiles everything for a while: send it alone')
      }
      const windowMs = wholeNumber(body, 'windowMs', limits.maxWindowMs, 0)
      if (!this.#profiler.hasRoom()) {
        throw new ConsoleProfilingBusyException(
          `${limits.maxConcurrent} CPU profile capture(s) already running (profiling.maxConcurrent)`
        )
      }
      const capture = this.#profiler.captureWindow(windowMs, { fromRequest: true })
      ctx.response.status(202)
      return { data: { window: { entryId: capture.id, endsAt: Date.now() + windowMs } } }
    }
    let method: string | undefined
    if (body.method !== undefined) {
      method = typeof body.method === 'string' ? body.method.toUpperCase() : ''
      if (!METHOD.test(method)) invalid('method', '"method" must be an HTTP method such as GET')
    }
    const path = body.path
    if (
      path !== undefined &&
      (typeof path !== 'string' || !path.startsWith('/') || path.length > 255)
    ) {
      invalid(
        'path',
        '"path" must start with "/" (a trailing "*" matches a prefix), 255 characters at most'
      )
    }
    const armed = this.#profiler.arm({
      count: wholeNumber(body, 'count', limits.maxArmedRequests, 1),
      ttlMs: wholeNumber(body, 'ttlMs', limits.maxArmTtlMs, DEFAULT_TTL_MS),
      method,
      path: path as string | undefined,
    })
    ctx.response.status(201)
    return { data: { armed } }
  }

  download = async (ctx: HttpContext) => {
    await this.#manager.gates.authorizeAction(ctx, 'download a CPU profile')
    const id = ctx.params.id
    const entry = await findEntry(this.#manager.store, id, {
      type: 'cpu_profile',
      label: 'CPU profile',
    })
    if (!entry.content.raw) {
      throw new ConsoleNotFoundException(
        `CPU profile ${id} has no raw profile kept (${entry.content.rawDropped ?? 'profiling.maxRawBytes is 0'})`
      )
    }
    ctx.response.header('content-type', 'application/json; charset=utf-8')
    ctx.response.header('content-disposition', `attachment; filename="profile-${id}.cpuprofile"`)
    ctx.response.header('cache-control', 'no-store')
    return ctx.response.send(JSON.stringify(entry.content.raw))
  }
}

/**
 * An entry as the read API shows it: a CPU profile's raw samples stay out
 * (they can weigh megabytes); `GET /profiles/:id/download` serves them.
 */
export function withoutRawProfile<T extends { type: string; content: Record<string, unknown> }>(
  entry: T
): T {
  if (entry.type !== 'cpu_profile' || !('raw' in entry.content)) return entry
  const content = { ...entry.content }
  delete content.raw
  return { ...entry, content }
}
