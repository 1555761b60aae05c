import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'

/**
 * An entry a custom watcher records: the type is a built-in one or one its
 * extension declares under `entryTypes`; id, batch and time are assigned.
 */
export interface CustomEntry {
  type: string
  /** One line for lists, cut at 255 characters */
  summary: string
  /** Redacted and bounded as `redact` says, like every other entry's content */
  content?: Record<string, unknown>
  tags?: string[]
  status?: number | null
  method?: string | null
  durationMs?: number | null
  slow?: boolean
}

/** What a custom watcher's `install` receives */
export interface ConsoleWatcherContext {
  app: ApplicationService
  /**
   * Records one entry into the current request's batch (or alone outside
   * one). Never throws: an undeclared type is dropped, logged once.
   */
  record(entry: CustomEntry): void
}

/**
 * A watcher of the app's own: `install` subscribes to whatever it watches
 * (emitter events, a diagnostics channel) and returns what unsubscribes.
 */
export interface CustomWatcher {
  name: string
  install(context: ConsoleWatcherContext): void | (() => void) | Promise<void | (() => void)>
}

/** A named server-side function whose JSON the dashboard shows */
export type ConsoleDataProvider = (ctx: HttpContext) => unknown | Promise<unknown>

/** A screen of the dashboard's "Extensions" view: a title and the provider it shows */
export interface ConsoleExtensionPage {
  title: string
  /** A key of the extension's `dataProviders` */
  provider: string
}

/** What `defineConsoleExtension` accepts */
export interface ConsoleExtensionOptions {
  /** Lowercase letters, digits, `_` and `-`: the extension's segment in its API URLs */
  name: string
  watchers?: CustomWatcher[]
  /** Entry types of its own (lowercase, at most 16 characters, not a built-in type) */
  entryTypes?: string[]
  dataProviders?: Record<string, ConsoleDataProvider>
  pages?: ConsoleExtensionPage[]
}

/** A validated extension, as `extensions` in config/console.ts takes it */
export interface ConsoleExtension {
  name: string
  watchers: CustomWatcher[]
  entryTypes: string[]
  dataProviders: Record<string, ConsoleDataProvider>
  pages: ConsoleExtensionPage[]
}
