import type { HttpContext } from '@adonisjs/core/http'
import { ConsoleAiNotConfiguredException, ConsoleInvalidQueryException } from '../errors.ts'
import { findEntry } from './find_entry.ts'
import type { ConsoleManager } from '../manager.ts'

/**
 * `GET /ai`: whether exception diagnosis is on and which model answers, so
 * the page shows its "Diagnose" button only when a click can work.
 */
export function aiStatusHandler(manager: ConsoleManager) {
  return () => {
    const ai = manager.config.ai
    return { data: { diagnosis: !!ai, model: ai ? ai.label : null } }
  }
}

/**
 * `POST /entries/:id/diagnose`: a mutation, since a model call costs money
 * and writes the answer onto the entry. The stored answer is returned
 * without a new call.
 */
export function diagnoseHandler(manager: ConsoleManager) {
  return async (ctx: HttpContext) => {
    await manager.gates.authorizeAction(ctx, 'diagnose an exception')
    const diagnoser = manager.diagnoser
    if (!diagnoser) throw new ConsoleAiNotConfiguredException()
    const entry = await findEntry(manager.store, ctx.params.id)
    if (entry.type !== 'exception') {
      throw new ConsoleInvalidQueryException('Only exception entries are diagnosed', 'id')
    }
    const { diagnosis, cached } = await diagnoser.diagnose(entry)
    return { data: { ...diagnosis, cached } }
  }
}
