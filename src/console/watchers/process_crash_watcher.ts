import debug from '../debug.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { exceptionEntry } from './exception_watcher.ts'

type Origin = 'uncaughtException' | 'unhandledRejection'

/**
 * Started crash watchers, newest last. The process gets one set of listeners
 * whatever the number of consoles (tests boot several): the newest records,
 * so a crash is one entry.
 */
const started: ProcessCrashWatcher[] = []
/** Set once a crash is on its way to Node's default handling */
let exiting = false

function newest() {
  return started.at(-1)
}

function othersListening(event: 'uncaughtException' | 'unhandledRejection', own: Function) {
  const listeners: Function[] =
    event === 'uncaughtException'
      ? process.listeners('uncaughtException')
      : process.listeners('unhandledRejection')
  // Node's domain module keeps one of its own beside any other, never alone
  return listeners.some(
    (listener) => listener !== own && listener.name !== 'domainUncaughtExceptionClear'
  )
}

/**
 * An uncaught exception (or a rejection Node raises as one). With another
 * listener, the app decides what a crash does: record and flush in the
 * background. Alone, this listener stands in for Node's default: record,
 * flush within `flushTimeoutMs`, then take itself away and throw the error
 * again, so Node prints it and exits with code 1 as it would have.
 */
function onUncaughtException(error: unknown, origin: Origin) {
  const watcher = newest()
  watcher?.record(error, origin)
  if (othersListening('uncaughtException', onUncaughtException)) {
    void watcher?.flush()
    return
  }
  if (exiting) return
  exiting = true
  // if something calls process.exit() meanwhile, it is still a failure
  process.exitCode = 1
  const flushed = watcher ? watcher.flushWithin() : Promise.resolve()
  void flushed.finally(() => {
    process.off('uncaughtException', onUncaughtException)
    process.nextTick(() => {
      throw error
    })
  })
}

/**
 * A rejection the app handles with an `unhandledRejection` listener of its
 * own, so the process lives on. Attached only while such a listener exists:
 * a listener alone would stop Node from crashing on the rejection.
 */
function onUnhandledRejection(reason: unknown) {
  const watcher = newest()
  watcher?.record(reason, 'unhandledRejection')
  void watcher?.flush()
}

function onNewListener(event: string | symbol, listener: Function) {
  if (event !== 'unhandledRejection' || listener === onUnhandledRejection) return
  if (!process.listeners('unhandledRejection').includes(onUnhandledRejection)) {
    process.on('unhandledRejection', onUnhandledRejection)
  }
}

function onRemoveListener(event: string | symbol, listener: Function) {
  if (event !== 'unhandledRejection' || listener === onUnhandledRejection) return
  if (!othersListening('unhandledRejection', onUnhandledRejection)) {
    process.off('unhandledRejection', onUnhandledRejection)
  }
}

function attach() {
  process.on('uncaughtException', onUncaughtException)
  process.on('newListener', onNewListener)
  process.on('removeListener', onRemoveListener)
  if (othersListening('unhandledRejection', onUnhandledRejection)) {
    process.on('unhandledRejection', onUnhandledRejection)
  }
}

function detach() {
  process.off('uncaughtException', onUncaughtException)
  process.off('newListener', onNewListener)
  process.off('removeListener', onRemoveListener)
  process.off('unhandledRejection', onUnhandledRejection)
}

/**
 * `exceptions.processCrashes`: uncaught exceptions and unhandled rejections
 * as exception entries tagged `crash`, each in a batch of its own that
 * sampling and overload protection never drop, flushed before the process
 * goes down. Whether the process exits stays Node's (or the app's) choice.
 */
export class ProcessCrashWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #flushTimeoutMs: number

  constructor(config: ResolvedConsoleConfig, recorder: ConsoleRecorder, flushTimeoutMs: number) {
    this.#config = config
    this.#recorder = recorder
    this.#flushTimeoutMs = flushTimeoutMs
  }

  install() {
    if (started.includes(this)) return
    if (started.length === 0) attach()
    started.push(this)
  }

  uninstall() {
    const index = started.indexOf(this)
    if (index < 0) return
    started.splice(index, 1)
    if (started.length === 0) detach()
  }

  /** Records one crash; never throws */
  record(error: unknown, origin: Origin) {
    try {
      const entry = exceptionEntry(error, this.#config, { method: null, path: null, status: null })
      entry.tags = ['crash', origin === 'unhandledRejection' ? 'unhandled-rejection' : 'uncaught']
      entry.content.origin = origin
      this.#recorder.recordAlone(entry)
      debug('recorded a process crash (%s)', origin)
    } catch {
      // a crash handler that throws would replace the app's error with ours
    }
  }

  flush() {
    return this.#recorder.flush()
  }

  /** Flushes, giving up after `flushTimeoutMs`; the timer keeps the process up until then */
  async flushWithin() {
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#flushTimeoutMs)
    })
    try {
      await Promise.race([this.#recorder.flush().catch(() => {}), bound])
    } finally {
      clearTimeout(timer)
    }
  }
}
