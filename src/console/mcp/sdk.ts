import { importOptional } from '../../shared/optional_import.ts'
import { E_CONSOLE_CONFIG } from '../errors.ts'
import type { ResolvedMcp } from '../types.ts'

const USED_FOR = '"mcp" in config/console.ts'

/** The parts of the MCP SDK (and the zod it validates tool inputs with) the console uses */
export interface McpSdk {
  McpServer: typeof import('@modelcontextprotocol/sdk/server/mcp.js').McpServer
  Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport
  z: typeof import('zod')
}

let loading: Promise<McpSdk> | undefined

/**
 * Imports the optional SDK once; a missing package is one boot error naming
 * the install command. A failed import is not kept, so a later call retries.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= (async () => {
    const [server, transport, z] = await Promise.all([
      importOptional<typeof import('@modelcontextprotocol/sdk/server/mcp.js')>(
        '@modelcontextprotocol/sdk/server/mcp.js',
        USED_FOR
      ),
      importOptional<
        typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')
      >('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js', USED_FOR),
      importOptional<typeof import('zod')>('zod', USED_FOR),
    ])
    return {
      McpServer: server.McpServer,
      Transport: transport.WebStandardStreamableHTTPServerTransport,
      z: (z as any).default ?? z,
    }
  })()
  loading.catch(() => (loading = undefined))
  return loading
}

/**
 * Boot checks of `mcp`: the tokenless mode is refused in production, and the
 * SDK must be installed. Nothing happens when `mcp` is off.
 */
export async function prepareMcp(mcp: ResolvedMcp | false, inProduction: boolean) {
  if (!mcp) return
  if (mcp.token === null && inProduction) {
    throw new E_CONSOLE_CONFIG(
      `"mcp: true" in config/console.ts serves recorded data without a token and is refused in production: use mcp: { token: env.get('CONSOLE_MCP_TOKEN') }`
    )
  }
  await loadMcpSdk()
}
