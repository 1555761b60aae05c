import { fail, FILE } from '../config_checks.ts'
import {
  ENTRY_TYPES,
  type ConsoleConfig,
  type EntryType,
  type ResolvedPrune,
  type WatcherDescriptor,
} from '../types.ts'
import type { ConsoleExtension, ConsoleExtensionOptions } from './types.ts'

const NAME = /^[a-z][a-z0-9_-]{0,63}$/
/** `console_entries.type` is 16 characters; `-` is left out so no type reads as a route */
const ENTRY_TYPE = /^[a-z][a-z0-9_]{0,15}$/
/**
 * First segments the API already serves: a custom type's list answers at
 * `{path}/api/<type>`, so it may not take one of them
 */
const RESERVED_TYPES = [
  'requests',
  'queries',
  'exceptions',
  'logs',
  'features',
  'events',
  'jobs',
  'search',
  'entries',
  'batches',
  'health',
  'prune',
  'profiles',
  'live',
  'auth',
  'extensions',
]

/**
 * An extension for `extensions` in config/console.ts: watchers of the app's
 * own, the entry types they record, server-side data providers and the
 * dashboard pages that show them. Validates now and throws a config error
 * naming the key.
 */
export function defineConsoleExtension(options: ConsoleExtensionOptions): ConsoleExtension {
  if (options === null || typeof options !== 'object') {
    fail(`Invalid "extensions" in ${FILE}: use defineConsoleExtension({ name, ... })`)
  }
  const name = options.name
  if (typeof name !== 'string' || !NAME.test(name)) {
    fail(
      `Invalid extension name ${JSON.stringify(name)} in "extensions" of ${FILE}: use 1 to 64 lowercase letters, digits, "_" or "-", starting with a letter`
    )
  }
  const key = `extensions[${name}]`
  const watchers = options.watchers ?? []
  if (!Array.isArray(watchers)) fail(`Invalid "${key}.watchers" in ${FILE}: use a list`)
  for (const watcher of watchers) {
    if (
      !watcher ||
      typeof watcher.name !== 'string' ||
      !NAME.test(watcher.name) ||
      typeof watcher.install !== 'function'
    ) {
      fail(
        `Invalid "${key}.watchers" in ${FILE}: each watcher is { name, install(context) } with a lowercase name`
      )
    }
  }
  const entryTypes = options.entryTypes ?? []
  if (!Array.isArray(entryTypes)) fail(`Invalid "${key}.entryTypes" in ${FILE}: use a list`)
  for (const type of entryTypes) {
    if (typeof type !== 'string' || !ENTRY_TYPE.test(type)) {
      fail(
        `Invalid entry type ${JSON.stringify(type)} in "${key}.entryTypes" of ${FILE}: use 1 to 16 lowercase letters, digits or "_", starting with a letter`
      )
    }
    if ((ENTRY_TYPES as readonly string[]).includes(type) || RESERVED_TYPES.includes(type)) {
      fail(
        `Entry type "${type}" in "${key}.entryTypes" of ${FILE} is a built-in type or API route; use a name of your own`
      )
    }
  }
  const dataProviders = options.dataProviders ?? {}
  if (dataProviders === null || typeof dataProviders !== 'object') {
    fail(`Invalid "${key}.dataProviders" in ${FILE}: use { name: (ctx) => json }`)
  }
  for (const [provider, handler] of Object.entries(dataProviders)) {
    if (!NAME.test(provider) || typeof handler !== 'function') {
      fail(
        `Invalid "${key}.dataProviders.${provider}" in ${FILE}: use a lowercase name and a function (ctx) => json`
      )
    }
  }
  const pages = options.pages ?? []
  if (!Array.isArray(pages)) fail(`Invalid "${key}.pages" in ${FILE}: use a list`)
  for (const page of pages) {
    if (!page || typeof page.title !== 'string' || page.title.length === 0) {
      fail(`Invalid "${key}.pages" in ${FILE}: each page is { title, provider }`)
    }
    if (!Object.hasOwn(dataProviders, page.provider)) {
      fail(
        `Page "${page.title}" in "${key}.pages" of ${FILE} shows provider "${page.provider}", which "${key}.dataProviders" does not declare`
      )
    }
  }
  return {
    name,
    watchers: [...watchers],
    entryTypes: unique(entryTypes, `${key}.entryTypes`),
    dataProviders: { ...dataProviders },
    pages: pages.map((page) => ({ title: page.title, provider: page.provider })),
  }
}

function unique(values: string[], key: string) {
  const seen = new Set<string>()
  for (const value of values) {
    if (seen.has(value)) fail(`Duplicate "${value}" in "${key}" of ${FILE}`)
    seen.add(value)
  }
  return [...values]
}

/**
 * `extensions` checked as a whole: names, entry types and watcher names are
 * unique across extensions and the `watchers` option; the extensions'
 * watchers follow the configured ones.
 */
export function resolveExtensions(
  value: unknown,
  configured: WatcherDescriptor[]
): { extensions: ConsoleExtension[]; entryTypes: string[]; watchers: WatcherDescriptor[] } {
  if (value === undefined) return { extensions: [], entryTypes: [], watchers: configured }
  if (!Array.isArray(value)) {
    fail(`Invalid "extensions" in ${FILE}: use a list of defineConsoleExtension({...})`)
  }
  const names = new Set<string>()
  const types = new Map<string, string>()
  const watcherNames = new Set(configured.map((watcher) => watcher.name))
  const watchers = [...configured]
  const extensions: ConsoleExtension[] = []
  for (const item of value as ConsoleExtension[]) {
    // a plain object written without the helper is validated the same way
    const extension = defineConsoleExtension(item)
    if (names.has(extension.name)) {
      fail(`Duplicate extension "${extension.name}" in "extensions" of ${FILE}`)
    }
    names.add(extension.name)
    for (const type of extension.entryTypes) {
      const owner = types.get(type)
      if (owner) {
        fail(
          `Entry type "${type}" is declared by both extensions "${owner}" and "${extension.name}" in ${FILE}`
        )
      }
      types.set(type, extension.name)
    }
    for (const watcher of extension.watchers) {
      if (watcherNames.has(watcher.name)) {
        fail(
          `Duplicate watcher "${watcher.name}" in "extensions[${extension.name}].watchers" of ${FILE}: watcher names are unique across "watchers" and every extension`
        )
      }
      watcherNames.add(watcher.name)
      watchers.push({
        name: watcher.name,
        options: {},
        extension: extension.name,
        install: watcher.install,
      })
    }
    extensions.push(extension)
  }
  return { extensions, entryTypes: [...types.keys()], watchers }
}

/**
 * Retention of the declared types: pruned by `after`, by `maxRows` given as
 * one number, and archived when `archive.types` is left to its default
 * (every type), so an extension's entries never outlive the built-in ones.
 */
export function pruneCustomTypes(
  prune: ResolvedPrune,
  config: Pick<ConsoleConfig, 'prune' | 'archive'>,
  types: string[]
): ResolvedPrune {
  if (types.length === 0) return prune
  // declared types are strings the store keeps like built-in ones
  const custom = types as EntryType[]
  const maxRows = { ...prune.maxRows }
  if (typeof config.prune?.maxRows === 'number') {
    for (const type of custom) maxRows[type] = config.prune.maxRows
  }
  const archive =
    prune.archive && config.archive?.types === undefined
      ? { ...prune.archive, types: [...prune.archive.types, ...custom] }
      : prune.archive
  return { ...prune, maxRows, archive, customTypes: custom }
}
