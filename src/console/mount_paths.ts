import { E_CONSOLE_CONFIG } from './errors.ts'
import type { ResolvedConsoleConfig } from './types.ts'

type MountedConfig = Pick<
  ResolvedConsoleConfig,
  'path' | 'ui' | 'mcp' | 'dashboardAuth' | 'clientErrors'
>

/** The config of the console this process booted last, for `consoleMountPaths()` without argument */
let booted: MountedConfig | undefined

/** Called by the console manager: its paths are the ones `consoleMountPaths()` answers */
export function rememberMountedConsole(config: MountedConfig) {
  booted = config
}

/** Called at shutdown: a console that stopped serving no longer has paths */
export function forgetMountedConsole(config: MountedConfig) {
  if (booted === config) booted = undefined
}

/**
 * The path prefixes the console serves (its API with the sign-in and
 * client-error routes, the page and its assets, the MCP endpoint), for an
 * app that registers request capture itself (`registerRequestMiddleware:
 * false`) and must leave them out. Without an argument, the console this
 * process booted; a request path belongs to the console when it equals a
 * prefix or continues it after a `/`.
 */
export function consoleMountPaths(config: MountedConfig | undefined = booted): string[] {
  if (!config) {
    throw new E_CONSOLE_CONFIG(
      "consoleMountPaths() was called before the console booted: call it from a middleware (not at import time), or pass the console manager's config"
    )
  }
  const api = `${config.path}/api`
  const paths = [api]
  // under the API already; named so the list reads as every surface, each of which a public route could shadow
  if (config.dashboardAuth) paths.push(`${api}/auth`)
  if (config.clientErrors.enabled) paths.push(`${api}/client-errors`)
  if (config.ui.enabled) paths.push(config.path, `${config.path}/assets`)
  if (config.mcp) paths.push(config.mcp.path)
  return paths
}

/** Whether a request path (without its query string) is one the console serves */
export function isConsolePath(path: string, prefixes: string[]) {
  return prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))
}
