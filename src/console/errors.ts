import type { HttpContext } from '@adonisjs/core/http'
import { AtriumException } from '../shared/errors.ts'

/**
 * `config/console.ts` is invalid: raised by `defineConfig` or at boot, naming
 * the key and the fix.
 */
export class ConsoleConfigException extends AtriumException {
  static status = 500
  static code = 'E_CONSOLE_CONFIG'
}

/**
 * No valid dashboard session (missing, tampered, expired or malformed
 * cookie), a failed login, or a host guard that refused the request: 401.
 */
export class ConsoleUnauthenticatedException extends AtriumException {
  static status = 401
  static code = 'E_CONSOLE_UNAUTHENTICATED'

  static message = 'Authentication required'
}

/**
 * Authenticated (or no session gate) but refused by `authorizer` or
 * `authorizeAction`: 403.
 */
export class ConsoleForbiddenException extends AtriumException {
  static status = 403
  static code = 'E_CONSOLE_FORBIDDEN'

  static message = 'Not allowed'
}

/**
 * An auth mode that is not configured, or an entry or batch that does not exist: 404.
 */
export class ConsoleNotFoundException extends AtriumException {
  static status = 404
  static code = 'E_CONSOLE_NOT_FOUND'
}

/**
 * A query parameter or body the console API cannot use: 400 naming the parameter.
 */
export class ConsoleInvalidQueryException extends AtriumException {
  static status = 400
  static code = 'E_CONSOLE_INVALID_QUERY'

  constructor(message: string, parameter: string) {
    super(message, { status: 400, code: 'E_CONSOLE_INVALID_QUERY', details: { parameter } })
  }
}

/**
 * Search asked of a database whose search migration has not run: 503 naming it.
 */
export class ConsoleSearchUnavailableException extends AtriumException {
  static status = 503
  static code = 'E_CONSOLE_SEARCH_UNAVAILABLE'
}

/**
 * A client-error report whose fields the console cannot use: 422 naming the field.
 */
export class ConsoleInvalidReportException extends AtriumException {
  static status = 422
  static code = 'E_CONSOLE_INVALID_REPORT'

  constructor(message: string, field: string) {
    super(message, { status: 422, code: 'E_CONSOLE_INVALID_REPORT', details: { field } })
  }
}

/**
 * A client-error report over `clientErrors.maxBodyBytes`: 413.
 */
export class ConsoleReportTooLargeException extends AtriumException {
  static status = 413
  static code = 'E_CONSOLE_REPORT_TOO_LARGE'
}

/**
 * An IP past its client-error rate: 429 with `Retry-After`.
 */
export class ConsoleRateLimitedException extends AtriumException {
  static status = 429
  static code = 'E_CONSOLE_RATE_LIMITED'

  static message = 'Too many reports'

  constructor(readonly retryAfterSeconds: number) {
    super(undefined, { details: { retryAfter: retryAfterSeconds } })
  }

  async handle(error: this, ctx: HttpContext) {
    ctx.response.header('retry-after', String(error.retryAfterSeconds))
    return super.handle(error, ctx)
  }
}

export const E_CONSOLE_CONFIG = ConsoleConfigException
export const E_CONSOLE_UNAUTHENTICATED = ConsoleUnauthenticatedException
export const E_CONSOLE_FORBIDDEN = ConsoleForbiddenException
export const E_CONSOLE_NOT_FOUND = ConsoleNotFoundException
export const E_CONSOLE_INVALID_QUERY = ConsoleInvalidQueryException
export const E_CONSOLE_SEARCH_UNAVAILABLE = ConsoleSearchUnavailableException
export const E_CONSOLE_INVALID_REPORT = ConsoleInvalidReportException
export const E_CONSOLE_REPORT_TOO_LARGE = ConsoleReportTooLargeException
export const E_CONSOLE_RATE_LIMITED = ConsoleRateLimitedException

/**
 * The dashboard's built assets (build/console-ui) are not where the package
 * expects them, as in a checkout compiled without `npm run build`: 500.
 */
export class ConsoleUiMissingException extends AtriumException {
  static status = 500
  static code = 'E_CONSOLE_UI_MISSING'
}

/**
 * `POST /profiles/arm` while recording is paused by overload protection: a
 * profiler would add to the load, so arming waits for recording to resume: 503.
 */
export class ConsoleProfilingPausedException extends AtriumException {
  static status = 503
  static code = 'E_CONSOLE_PROFILING_PAUSED'

  static message = 'Recording is paused by overload protection; arm a CPU profile once it resumes'
}

/**
 * A time-window capture asked while `profiling.maxConcurrent` captures already run: 409.
 */
export class ConsoleProfilingBusyException extends AtriumException {
  static status = 409
  static code = 'E_CONSOLE_PROFILING_BUSY'
}

export const E_CONSOLE_PROFILING_PAUSED = ConsoleProfilingPausedException
export const E_CONSOLE_PROFILING_BUSY = ConsoleProfilingBusyException

/** `POST /entries/:id/explain` without `explainQuery` in config/console.ts: 501 */
export class ConsoleExplainNotConfiguredException extends AtriumException {
  static status = 501
  static code = 'E_CONSOLE_EXPLAIN_NOT_CONFIGURED'
  static message =
    'Set explainQuery in config/console.ts (explainWithLucid() plans SELECT statements) to explain queries'
}

/** A replay of a request whose body was not recorded: sending it without would be another request, 409 */
export class ConsoleReplayIncompleteException extends AtriumException {
  static status = 409
  static code = 'E_CONSOLE_REPLAY_INCOMPLETE'
}

/** A replay the app's own server never answered (the connection dropped, 30 s passed): 502 */
export class ConsoleReplayFailedException extends AtriumException {
  static status = 502
  static code = 'E_CONSOLE_REPLAY_FAILED'
}

/**
 * `explainWithLucid()` on a recorded query the database cannot plan now (its
 * table dropped since, its connection gone, a redacted binding of the wrong
 * type): 422 with the database's reason
 */
export class ConsoleExplainFailedException extends AtriumException {
  static status = 422
  static code = 'E_CONSOLE_EXPLAIN_FAILED'
}

export const E_CONSOLE_EXPLAIN_NOT_CONFIGURED = ConsoleExplainNotConfiguredException
export const E_CONSOLE_EXPLAIN_FAILED = ConsoleExplainFailedException
export const E_CONSOLE_REPLAY_INCOMPLETE = ConsoleReplayIncompleteException
export const E_CONSOLE_REPLAY_FAILED = ConsoleReplayFailedException

/** A prune asked while another process holds the prune lock: 409 */
export class ConsolePruneBusyException extends AtriumException {
  static status = 409
  static code = 'E_CONSOLE_PRUNE_BUSY'
  static message = 'Another process is pruning the console; try again once its prune ends'
}

/**
 * `archive.sink` threw: the prune stops, and the entries it was given stay
 * stored for the next prune to hand over again
 */
export class ConsoleArchiveFailedException extends AtriumException {
  static status = 500
  static code = 'E_CONSOLE_ARCHIVE_FAILED'
}

/** The prune lock's `console_leases` table has not been migrated: 500 naming the fix */
export class ConsoleLeasesMissingException extends AtriumException {
  static status = 500
  static code = 'E_CONSOLE_LEASES_MISSING'
}

export const E_CONSOLE_PRUNE_BUSY = ConsolePruneBusyException
export const E_CONSOLE_ARCHIVE_FAILED = ConsoleArchiveFailedException
export const E_CONSOLE_LEASES_MISSING = ConsoleLeasesMissingException

/**
 * An extension's data provider threw or answered something that is not
 * JSON: 502 naming the extension and the provider, never the error's text
 * (it is logged).
 */
export class ConsoleExtensionFailedException extends AtriumException {
  static status = 502
  static code = 'E_CONSOLE_EXTENSION_FAILED'
}

export const E_CONSOLE_EXTENSION_FAILED = ConsoleExtensionFailedException
/** `POST /entries/:id/diagnose` without `ai` in config/console.ts: 501 */
export class ConsoleAiNotConfiguredException extends AtriumException {
  static status = 501
  static code = 'E_CONSOLE_AI_NOT_CONFIGURED'
  static message =
    'Set ai: { model } in config/console.ts (any AI SDK language model) to diagnose exceptions'
}

/**
 * The model call of a diagnosis failed (the provider answered an error, the
 * connection broke, the answer was empty): 502, with the provider's status
 * when it sent one. Nothing is stored, so the next click tries again.
 */
export class ConsoleDiagnosisFailedException extends AtriumException {
  static status = 502
  static code = 'E_CONSOLE_DIAGNOSIS_FAILED'

  constructor(message: string, upstreamStatus: number | null) {
    super(message, {
      status: 502,
      code: 'E_CONSOLE_DIAGNOSIS_FAILED',
      details: { upstreamStatus, retryable: true },
    })
  }
}

export const E_CONSOLE_AI_NOT_CONFIGURED = ConsoleAiNotConfiguredException
export const E_CONSOLE_DIAGNOSIS_FAILED = ConsoleDiagnosisFailedException
/**
 * Something the job's queue manager cannot do: an action (retry, remove) it
 * does not implement, or a listing its backend cannot give: 501
 */
export class ConsoleQueueActionUnsupportedException extends AtriumException {
  static status = 501
  static code = 'E_CONSOLE_QUEUE_ACTION_UNSUPPORTED'
}

/** A queue or schedule manager whose `init()` failed, or that threw answering: 503 naming it */
export class ConsoleManagerUnavailableException extends AtriumException {
  static status = 503
  static code = 'E_CONSOLE_MANAGER_UNAVAILABLE'
}

/** A queue action the job's state does not allow (retrying a job that has not failed): 409 */
export class ConsoleQueueJobStateException extends AtriumException {
  static status = 409
  static code = 'E_CONSOLE_QUEUE_JOB_STATE'
}

export const E_CONSOLE_QUEUE_ACTION_UNSUPPORTED = ConsoleQueueActionUnsupportedException
export const E_CONSOLE_QUEUE_JOB_STATE = ConsoleQueueJobStateException
export const E_CONSOLE_MANAGER_UNAVAILABLE = ConsoleManagerUnavailableException
