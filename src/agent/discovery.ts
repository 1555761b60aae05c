import { readdir } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ApplicationService } from '@adonisjs/core/types'
import debug from './debug.ts'
import { agentOptionsOf } from './decorators.ts'
import { AgentConfigException } from './errors.ts'
import type { AgentClass } from './types.ts'

/** Where agent classes are discovered, relative to the app root */
export const AGENTS_DIRECTORY = 'app/agents'

/** Modules of the app: sources under node ace serve, build output in production */
const MODULE_FILE = /\.(ts|js|mts|mjs)$/
const DECLARATION_FILE = /\.d\.[mc]?ts$/

/**
 * The `@agent()` classes exported by the modules of `app/agents/` (its
 * subfolders included), by file path then export name. Every module is
 * imported through the app's importer; one that fails stops the boot naming
 * the file. A missing folder holds no agents.
 */
export async function discoverAgents(app: ApplicationService) {
  const root = app.makePath(AGENTS_DIRECTORY)
  const classes: AgentClass[] = []
  const files = new Map<AgentClass, string>()
  let entries
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { classes, files }
    throw error
  }
  const modules = entries
    .filter(
      (entry) =>
        entry.isFile() && MODULE_FILE.test(entry.name) && !DECLARATION_FILE.test(entry.name)
    )
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
  for (const file of modules) {
    const name = `${AGENTS_DIRECTORY}/${relative(root, file).split(sep).join('/')}`
    let exports: Record<string, unknown>
    try {
      exports = await app.import(pathToFileURL(file).href)
    } catch (error) {
      throw new AgentConfigException(
        `Cannot import ${name} while discovering agents in ${AGENTS_DIRECTORY}/: ${(error as Error)?.message ?? error}. Fix the module, move it out of ${AGENTS_DIRECTORY}/, or list the agents in "agents" of config/agent.ts`,
        { cause: error }
      )
    }
    for (const value of Object.values(exports)) {
      if (!agentOptionsOf(value) || files.has(value as AgentClass)) continue
      classes.push(value as AgentClass)
      files.set(value as AgentClass, name)
    }
  }
  debug('discovered %d agent(s) in %d module(s) of %s', classes.length, modules.length, root)
  return { classes, files }
}
