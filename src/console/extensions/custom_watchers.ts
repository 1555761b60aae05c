import type { Logger } from '@adonisjs/core/logger'
import type { ApplicationService } from '@adonisjs/core/types'
import debug from '../debug.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import { E_CONSOLE_CONFIG } from '../errors.ts'
import {
  ENTRY_TYPES,
  type EntryType,
  type ResolvedConsoleConfig,
  type WatcherDescriptor,
} from '../types.ts'
import type { ConsoleWatcherContext, CustomEntry, CustomWatcher } from './types.ts'

const MAX_TAGS = 16
const TAG = /^[A-Za-z0-9:.-]{1,64}$/

/**
 * The `record` a custom watcher gets: checks the type against the built-in
 * and declared ones, bounds what the app hands over, and never throws into
 * the app's event handler.
 */
export function customRecorder(
  config: ResolvedConsoleConfig,
  recorder: ConsoleRecorder,
  watcher: string,
  logger?: Logger
): ConsoleWatcherContext['record'] {
  const known = new Set<string>([...ENTRY_TYPES, ...config.customEntryTypes])
  const warned = new Set<string>()
  return (entry: CustomEntry) => {
    try {
      if (!entry || typeof entry !== 'object' || !known.has(entry.type)) {
        const type = String(entry?.type)
        if (!warned.has(type)) {
          warned.add(type)
          logger?.warn(
            `console watcher "${watcher}" recorded an entry of type ${JSON.stringify(type).slice(0, 40)}, which no extension declares in "entryTypes" of config/console.ts; such entries are dropped`
          )
        }
        return
      }
      const content = redactValue(entry.content ?? {}, config.redact)
      recorder.record({
        // a declared custom type: stores and lists treat the type as a string of 16 characters
        type: entry.type as EntryType,
        summary: String(entry.summary ?? '').slice(0, 255),
        status: Number.isSafeInteger(entry.status) ? entry.status! : null,
        method: typeof entry.method === 'string' ? entry.method.slice(0, 10) : null,
        durationMs: Number.isFinite(entry.durationMs) ? entry.durationMs! : null,
        slow: entry.slow === true,
        tags: Array.isArray(entry.tags)
          ? entry.tags.filter((tag) => typeof tag === 'string' && TAG.test(tag)).slice(0, MAX_TAGS)
          : [],
        content:
          content && typeof content === 'object' && !Array.isArray(content)
            ? (content as Record<string, unknown>)
            : { value: content },
      })
    } catch (error) {
      debug('custom watcher %s: entry not recorded (%s)', watcher, (error as Error)?.message)
    }
  }
}

/**
 * Starts one custom watcher and returns what stops it. A watcher whose
 * `install` throws is a boot error naming it: otherwise it would silently record nothing.
 */
export async function startCustomWatcher(
  app: ApplicationService,
  config: ResolvedConsoleConfig,
  recorder: ConsoleRecorder,
  descriptor: WatcherDescriptor & { install: CustomWatcher['install'] },
  logger?: Logger
): Promise<{ uninstall(): void }> {
  const record = customRecorder(config, recorder, descriptor.name, logger)
  let stop: void | (() => void)
  try {
    stop = await descriptor.install({ app, record })
  } catch (error) {
    const owner = descriptor.extension ? `extensions[${descriptor.extension}].watchers` : 'watchers'
    throw new E_CONSOLE_CONFIG(
      `Watcher "${descriptor.name}" in "${owner}" of config/console.ts failed to install: ${(error as Error)?.message ?? error}`
    )
  }
  debug('custom watcher %s (extension %s) installed', descriptor.name, descriptor.extension)
  return {
    uninstall() {
      try {
        if (typeof stop === 'function') stop()
      } catch (error) {
        debug('custom watcher %s failed to stop: %s', descriptor.name, (error as Error)?.message)
      }
    },
  }
}
