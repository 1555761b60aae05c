import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { E_PAYMENTS_CONFIG } from './errors.ts'
import { isLibraryNamespace, isWebhookEventType } from './events.ts'
import type {
  DefinedWebhookHandler,
  TypedWebhookHandler,
  WebhookEvent,
  WebhookEventType,
  WebhookHandlerClass,
  WebhookHandlerEntry,
  WebhookHandlerFn,
} from './types.ts'

/**
 * Declares a handler for one event type; the result is callable and carries
 * `type` and `handle`, for `billing.handlers` or a file in `app/payment_handlers/`.
 */
export function defineWebhookHandler<T extends WebhookEventType>(
  type: T,
  handle: TypedWebhookHandler<T>
): DefinedWebhookHandler<T>
export function defineWebhookHandler<T extends string>(
  type: T,
  handle: WebhookHandlerFn
): DefinedWebhookHandler<T>
export function defineWebhookHandler(type: string, handle: WebhookHandlerFn) {
  const handler = ((event: WebhookEvent<any>) => handle(event)) as DefinedWebhookHandler
  handler.type = type
  handler.handle = handle
  return handler
}

function isHandlerClass(value: unknown): value is WebhookHandlerClass {
  return (
    typeof value === 'function' &&
    typeof (value as any).eventType === 'string' &&
    typeof (value as any).prototype?.handle === 'function'
  )
}

function isDefined(value: unknown): value is DefinedWebhookHandler {
  return typeof value === 'function' && typeof (value as any).type === 'string' && 'handle' in value
}

/** Builds a class instance per event (through the container in the app) */
export type ClassResolver = (handler: WebhookHandlerClass) => Promise<{
  handle(event: WebhookEvent<any>): void | Promise<void>
}>

/**
 * The handlers of one app, one per event type, checked at boot: a type in
 * the library namespace must be one of the ten (or a declared passthrough),
 * and two handlers may not claim one type.
 */
export class HandlerRegistry {
  #handlers = new Map<string, { source: string; run: WebhookHandlerFn }>()
  #passthrough: Set<string>
  #resolve: ClassResolver

  constructor(
    options: {
      passthroughEvents?: string[]
      resolveClass?: ClassResolver
    } = {}
  ) {
    this.#passthrough = new Set(options.passthroughEvents ?? [])
    this.#resolve = options.resolveClass ?? (async (Handler) => new Handler())
  }

  /**
   * Builds a registry from a plain `{ type: fn }` map (the `WebhookProcessor` escape hatch).
   */
  static from(
    handlers: HandlerRegistry | Partial<Record<string, WebhookHandlerEntry>> | undefined,
    passthroughEvents?: string[]
  ) {
    if (handlers instanceof HandlerRegistry) {
      return handlers
    }
    const registry = new HandlerRegistry({ passthroughEvents })
    for (const [type, entry] of Object.entries(handlers ?? {})) {
      if (entry) registry.add(type, entry as WebhookHandlerFn, `billing.handlers["${type}"]`)
    }
    return registry
  }

  #checkType(type: string, source: string) {
    if (isLibraryNamespace(type) && !isWebhookEventType(type) && !this.#passthrough.has(type)) {
      throw new E_PAYMENTS_CONFIG([
        `Unknown webhook event type "${type}" in ${source}. Use one of the ten canonical types, or declare "${type}" in billing.passthroughEvents of config/payments.ts`,
      ])
    }
  }

  /**
   * Registers one handler; throws naming both sources when the type is taken.
   */
  add(
    type: string,
    entry: WebhookHandlerFn | DefinedWebhookHandler | WebhookHandlerClass,
    source: string
  ) {
    this.#checkType(type, source)
    const taken = this.#handlers.get(type)
    if (taken) {
      throw new E_PAYMENTS_CONFIG([
        `Two webhook handlers claim "${type}": ${taken.source} and ${source}. Keep one of them`,
      ])
    }
    let run: WebhookHandlerFn
    if (isHandlerClass(entry)) {
      run = async (event) => {
        const handler = await this.#resolve(entry)
        return handler.handle(event)
      }
    } else if (isDefined(entry)) {
      run = entry.handle
    } else {
      run = entry as WebhookHandlerFn
    }
    this.#handlers.set(type, { source, run })
  }

  /**
   * Adds the `billing.handlers` config map. A plain function is either the
   * handler or a lazy import (`() => import('#payment_handlers/x')`); both
   * have the same shape, so the first call tells: a module back means a lazy
   * import, whose handler then runs (and is cached) for this and later events.
   */
  async addConfig(handlers: Partial<Record<string, WebhookHandlerEntry>>) {
    for (const [type, entry] of Object.entries(handlers)) {
      if (!entry) continue
      const source = `billing.handlers["${type}"] (config/payments.ts)`
      if (isHandlerClass(entry) || isDefined(entry)) {
        const declared = isHandlerClass(entry) ? entry.eventType : entry.type
        if (declared !== type) {
          throw new E_PAYMENTS_CONFIG([
            `${source} handles "${declared}". Use the key "${declared}"`,
          ])
        }
        this.add(type, entry, source)
        continue
      }
      let loaded: WebhookHandlerFn | undefined
      const fn = entry as (event: WebhookEvent<any>) => unknown
      this.add(
        type,
        async (event) => {
          if (loaded) return loaded(event)
          const result: any = await fn(event)
          const value =
            result && typeof result === 'object' && 'default' in result ? result.default : undefined
          if (isHandlerClass(value) || isDefined(value)) {
            const declared = isHandlerClass(value) ? value.eventType : value.type
            if (declared !== type) {
              throw new E_PAYMENTS_CONFIG([
                `${source} handles "${declared}". Use the key "${declared}"`,
              ])
            }
            loaded = isHandlerClass(value)
              ? async (next) => {
                  const handler = await this.#resolve(value)
                  return handler.handle(next)
                }
              : value.handle
            return loaded(event)
          }
        },
        source
      )
    }
  }

  /**
   * Loads every handler file of a folder: default export a class with a
   * static `eventType`, or a `defineWebhookHandler(...)` result.
   */
  async addFolder(folder: string, label: string) {
    const files = await readdir(folder).catch(() => [] as string[])
    for (const file of files.sort()) {
      if (!/\.(ts|js|mjs)$/.test(file) || file.endsWith('.d.ts')) continue
      const module = await import(pathToFileURL(join(folder, file)).href)
      const value = module.default
      const source = `${label}/${file}`
      if (isHandlerClass(value)) {
        this.add(value.eventType, value, source)
      } else if (isDefined(value)) {
        this.add(value.type, value, source)
      } else {
        throw new E_PAYMENTS_CONFIG([
          `${source} must export default a class with a static "eventType" and a handle(event) method, or defineWebhookHandler(type, fn)`,
        ])
      }
    }
  }

  get(type: string): WebhookHandlerFn | undefined {
    return this.#handlers.get(type)?.run
  }

  types() {
    return [...this.#handlers.keys()]
  }
}
