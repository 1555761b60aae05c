import type { HttpContext } from '@adonisjs/core/http'
import type { Logger } from '@adonisjs/core/logger'
import debug from '../debug.ts'
import { ConsoleExtensionFailedException, ConsoleNotFoundException } from '../errors.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import type { ConsoleExtension } from './types.ts'

/**
 * `GET {path}/api/extensions` (what the dashboard's "Extensions" screen
 * lists) and `GET {path}/api/extensions/:name/:provider` (one data
 * provider's JSON). Both sit behind the API's gates.
 */
export class ExtensionsController {
  #byName: Map<string, ConsoleExtension>
  #api: string
  #logger?: Logger
  #warned = new Set<string>()

  constructor(config: ResolvedConsoleConfig, logger?: Logger) {
    this.#byName = new Map(config.extensions.map((extension) => [extension.name, extension]))
    this.#api = `${config.path}/api`
    this.#logger = logger
  }

  index = async () => {
    return {
      data: [...this.#byName.values()].map((extension) => ({
        name: extension.name,
        entryTypes: extension.entryTypes.map((type) => ({ type, url: `${this.#api}/${type}` })),
        providers: Object.keys(extension.dataProviders),
        pages: extension.pages.map((page) => ({
          ...page,
          url: `${this.#api}/extensions/${extension.name}/${page.provider}`,
        })),
      })),
    }
  }

  data = async (ctx: HttpContext) => {
    const { name, provider } = ctx.params
    const extension = this.#byName.get(name)
    // own keys only: "constructor" or "__proto__" in the URL name no function
    const handler =
      extension && Object.hasOwn(extension.dataProviders, provider)
        ? extension.dataProviders[provider]
        : undefined
    if (!handler) {
      throw new ConsoleNotFoundException(`No data provider "${provider}" in extension "${name}"`)
    }
    let body: string
    try {
      body = JSON.stringify({ data: (await handler(ctx)) ?? null })
    } catch (error) {
      // a 4xx the provider meant (not found, invalid query) is its answer
      const status = (error as { status?: unknown })?.status
      if (typeof status === 'number' && status >= 400 && status < 500) throw error
      this.#report(name, provider, error)
      throw new ConsoleExtensionFailedException(
        `Data provider "${provider}" of extension "${name}" failed`,
        { details: { extension: name, provider } }
      )
    }
    ctx.response.header('content-type', 'application/json; charset=utf-8')
    return ctx.response.send(body)
  }

  #report(name: string, provider: string, error: unknown) {
    const key = `${name}/${provider}`
    debug('data provider %s failed: %s', key, (error as Error)?.message)
    if (this.#warned.has(key)) return
    this.#warned.add(key)
    this.#logger?.warn(
      `console data provider "${provider}" of extension "${name}" failed (${(error as Error)?.message ?? error}); answered 502. Further failures of it are not logged`
    )
  }
}
