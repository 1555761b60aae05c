import { fail, FILE } from '../config_checks.ts'
import type { ConsoleConfig, ResolvedMcp } from '../types.ts'

/** Shortest accepted `mcp.token`, in bytes: the same floor as `dashboardAuth.secret` */
export const MIN_MCP_TOKEN_BYTES = 32

/** Where the MCP endpoint answers under the mount path unless `mcp.path` says otherwise */
export const DEFAULT_MCP_PATH = '/mcp'

/** Sub-paths the console already serves; an MCP path there would shadow or be shadowed */
const TAKEN = ['/api', '/assets']

/**
 * `mcp` with its defaults applied: `true` is the tokenless development mode
 * (refused in production at boot), `{ token }` gates every request with a
 * bearer token, omitted or false mounts nothing.
 */
export function resolveMcp(value: ConsoleConfig['mcp'], mountPath: string): ResolvedMcp | false {
  if (value === undefined || value === false) return false
  if (value === true) return { token: null, path: `${mountPath}${DEFAULT_MCP_PATH}` }
  if (value === null || typeof value !== 'object') {
    fail(`Invalid "mcp" in ${FILE}: use true (development only), { token } or false`)
  }
  const token = value.token
  if (typeof token !== 'string' || token.length === 0) {
    fail(
      `Missing "mcp.token" in ${FILE}. Set CONSOLE_MCP_TOKEN to a random value of at least ${MIN_MCP_TOKEN_BYTES} bytes (node -e "console.log(crypto.randomBytes(32).toString('base64url'))"), or use mcp: true in development only`
    )
  }
  if (Buffer.byteLength(token) < MIN_MCP_TOKEN_BYTES) {
    fail(
      `"mcp.token" in ${FILE} is ${Buffer.byteLength(token)} bytes; use at least ${MIN_MCP_TOKEN_BYTES} random bytes`
    )
  }
  const path = value.path ?? DEFAULT_MCP_PATH
  if (
    typeof path !== 'string' ||
    !/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/.test(path) ||
    path.includes('//') ||
    TAKEN.some((taken) => path === taken || path.startsWith(`${taken}/`))
  ) {
    fail(
      `Invalid "mcp.path" in ${FILE}: use a path under the console such as '/mcp' (no trailing slash, not under /api or /assets)`
    )
  }
  return { token, path: `${mountPath}${path}` }
}
