import { AtriumException } from '../shared/errors.ts'

/**
 * `config/agent.ts` is invalid, or the app boots with options this build
 * cannot honour. The message names the option and the fix.
 */
export class AgentConfigException extends AtriumException {
  static status = 500
  static code = 'E_AGENT_CONFIG'

  constructor(message: string, options?: ErrorOptions) {
    super(message, { ...options, status: 500, code: 'E_AGENT_CONFIG' })
  }
}

/**
 * The actor resolver found no actor for the request.
 */
export class AgentUnauthenticatedException extends AtriumException {
  static status = 401
  static code = 'E_AGENT_UNAUTHENTICATED'

  static message = 'No actor could be resolved for this request'
}

/**
 * A thread or run that exists but belongs to another actor.
 */
export class AgentForbiddenException extends AtriumException {
  static status = 403
  static code = 'E_AGENT_FORBIDDEN'

  constructor(resource: 'thread' | 'run' | 'tool call' | 'attachment') {
    super(`This ${resource} belongs to another actor`, {
      status: 403,
      code: 'E_AGENT_FORBIDDEN',
      details: { resource },
    })
  }
}

/**
 * A thread or run that does not exist (or was deleted).
 */
export class AgentNotFoundException extends AtriumException {
  static status = 404
  static code = 'E_AGENT_NOT_FOUND'

  constructor(resource: 'thread' | 'run' | 'tool call' | 'message' | 'attachment') {
    super(`Unknown ${resource}`, { status: 404, code: 'E_AGENT_NOT_FOUND', details: { resource } })
  }
}

/**
 * A request body or parameter the gateway cannot accept; `field` names it.
 */
export class AgentInvalidRequestException extends AtriumException {
  static status = 400
  static code = 'E_AGENT_INVALID_REQUEST'

  constructor(message: string, field?: string) {
    super(message, {
      status: 400,
      code: 'E_AGENT_INVALID_REQUEST',
      details: field ? { field } : undefined,
    })
  }
}

/**
 * An attachment larger than `attachments.maxBytes`; `field` names it.
 */
export class AgentPayloadTooLargeException extends AtriumException {
  static status = 413
  static code = 'E_AGENT_PAYLOAD_TOO_LARGE'

  constructor(message: string, field: string) {
    super(message, { status: 413, code: 'E_AGENT_PAYLOAD_TOO_LARGE', details: { field } })
  }
}

/**
 * A resume asked for frames the run's event log no longer holds.
 */
export class AgentReplayGoneException extends AtriumException {
  static status = 410
  static code = 'E_AGENT_REPLAY_GONE'

  constructor(firstKept: number) {
    super(`Frames before ${firstKept} are no longer kept for this run`, {
      status: 410,
      code: 'E_AGENT_REPLAY_GONE',
      details: { firstKept },
    })
  }
}

/**
 * A regenerate on a thread that holds no user message to answer again.
 */
export class AgentNothingToRegenerateException extends AtriumException {
  static status = 409
  static code = 'E_AGENT_NOTHING_TO_REGENERATE'

  static message = 'This thread has no user message to answer again'
}

/**
 * A thread that cannot take this request now: a transient thread being
 * promoted, or one whose run is still streaming when a promote comes.
 */
export class AgentThreadBusyException extends AtriumException {
  static status = 409
  static code = 'E_AGENT_THREAD_BUSY'

  constructor(message: string) {
    super(message, { status: 409, code: 'E_AGENT_THREAD_BUSY', details: { resource: 'thread' } })
  }
}

/**
 * What a transient thread cannot do or hold: more threads than the actor or
 * the process may keep, more messages than one may hold, a fork.
 */
export class AgentTransientThreadException extends AtriumException {
  static status = 409
  static code = 'E_AGENT_TRANSIENT_THREAD'

  constructor(message: string) {
    super(message, { status: 409, code: 'E_AGENT_TRANSIENT_THREAD' })
  }
}

/**
 * The governance API refused the request: `dashboard.authorize` is missing
 * (deny by default) or said no.
 */
export class AgentDashboardForbiddenException extends AtriumException {
  static status = 403
  static code = 'E_AGENT_DASHBOARD_FORBIDDEN'

  static message =
    'The governance API denies this request: dashboard.authorize in config/agent.ts must allow it'
}

/**
 * A decision on a tool call that is no longer waiting for one.
 */
export class AgentAlreadyDecidedException extends AtriumException {
  static status = 409
  static code = 'E_AGENT_ALREADY_DECIDED'

  static message = 'This tool call is not waiting for a decision'
}

/**
 * The store does not provide what a governance route reads or writes
 * (its queries, its aggregates, its prices): the route is not served.
 */
export class AgentNotImplementedException extends AtriumException {
  static status = 501
  static code = 'E_AGENT_NOT_IMPLEMENTED'

  constructor(message: string) {
    super(message, { status: 501, code: 'E_AGENT_NOT_IMPLEMENTED' })
  }
}

export const E_AGENT_CONFIG = AgentConfigException
export const E_AGENT_UNAUTHENTICATED = AgentUnauthenticatedException
export const E_AGENT_FORBIDDEN = AgentForbiddenException
export const E_AGENT_NOT_FOUND = AgentNotFoundException
export const E_AGENT_INVALID_REQUEST = AgentInvalidRequestException
export const E_AGENT_REPLAY_GONE = AgentReplayGoneException
export const E_AGENT_NOTHING_TO_REGENERATE = AgentNothingToRegenerateException
export const E_AGENT_THREAD_BUSY = AgentThreadBusyException
export const E_AGENT_TRANSIENT_THREAD = AgentTransientThreadException
export const E_AGENT_DASHBOARD_FORBIDDEN = AgentDashboardForbiddenException
export const E_AGENT_ALREADY_DECIDED = AgentAlreadyDecidedException
export const E_AGENT_NOT_IMPLEMENTED = AgentNotImplementedException
