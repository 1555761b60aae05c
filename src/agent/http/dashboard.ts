import type { HttpContext, Router } from '@adonisjs/core/http'
import type { MiddlewareFn } from '@adonisjs/core/types/http'
import {
  AgentAlreadyDecidedException,
  AgentDashboardForbiddenException,
  AgentInvalidRequestException,
  AgentNotFoundException,
  AgentNotImplementedException,
} from '../errors.ts'
import type { GovernanceQueries } from '../store/contract.ts'
import type { ResolvedAgentConfig } from '../types.ts'
import { toRouteMiddleware } from './routes.ts'
import { assertNoNul } from './requests.ts'
import { MAX_LIMIT, day, integer, manager } from './dashboard_params.ts'
import { registerInsightRoutes } from './dashboard_insights.ts'

/** `where[field]=value` filters: unknown fields are 400 naming the field */
function where<Field extends string>(
  query: Record<string, unknown>,
  fields: readonly Field[]
): Partial<Record<Field, string>> {
  const raw = query.where
  if (raw === undefined) return {}
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AgentInvalidRequestException('"where" must be where[field]=value pairs', 'where')
  }
  const filters: Partial<Record<Field, string>> = {}
  for (const [field, value] of Object.entries(raw)) {
    if (!fields.includes(field as Field)) {
      throw new AgentInvalidRequestException(
        `Unknown where field "${field}": use one of ${fields.join(', ')}`,
        `where[${field}]`
      )
    }
    if (typeof value !== 'string' || value.length > 200) {
      throw new AgentInvalidRequestException(
        `where[${field}] must be one string of at most 200 characters`,
        `where[${field}]`
      )
    }
    assertNoNul(value, `where[${field}]`)
    filters[field as Field] =
      field === 'fromDay' || field === 'toDay' ? day(value, `where[${field}]`) : value
  }
  return filters
}

function paging(query: Record<string, unknown>) {
  return {
    page: integer(query.page, 'page', 1, 1_000_000),
    limit: integer(query.limit, 'limit', 25, MAX_LIMIT),
  }
}

async function queries(ctx: HttpContext): Promise<GovernanceQueries> {
  const agents = await manager(ctx)
  const governance = agents.config.store.governance
  if (!governance)
    throw new AgentNotImplementedException(
      'The agent store does not provide the governance queries'
    )
  return governance
}

const list = (read: (governance: GovernanceQueries, limit: number) => Promise<unknown>) => {
  return async (ctx: HttpContext) =>
    read(await queries(ctx), integer(ctx.request.qs().limit, 'limit', 50, MAX_LIMIT))
}

const RUN_FIELDS = ['agentName', 'status', 'errorCode', 'fromDay', 'toDay'] as const
const TOOL_CALL_FIELDS = ['toolName', 'toolType', 'status', 'threadId', 'fromDay', 'toDay'] as const
const THREAD_FIELDS = ['actorRef', 'title', 'fromDay', 'toDay'] as const

/** `POST /approvals/:toolCallId`: 204 when this decision won */
async function decide(ctx: HttpContext) {
  const body = ctx.request.body()
  const { approved, reason } = body as { approved?: unknown; reason?: unknown }
  if (typeof approved !== 'boolean') {
    throw new AgentInvalidRequestException('"approved" must be true or false', 'approved')
  }
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 2000)) {
    throw new AgentInvalidRequestException(
      '"reason" must be a string of at most 2000 characters',
      'reason'
    )
  }
  if (reason !== undefined) assertNoNul(reason, 'reason')
  const toolCallId = String(ctx.params.toolCallId ?? '')
  if (!toolCallId || toolCallId.length > 191 || toolCallId.includes('\u0000'))
    throw new AgentNotFoundException('tool call')
  const agents = await manager(ctx)
  const won = await agents.decideFromDashboard(toolCallId, approved, reason)
  if (won === null) throw new AgentNotFoundException('tool call')
  if (!won) throw new AgentAlreadyDecidedException()
  ctx.response.noContent()
}

/**
 * Deny by default: without `dashboard.authorize` every request is 403, as
 * the governance API shows every actor's data and decides their tool calls.
 */
function authorization(config: NonNullable<ResolvedAgentConfig['dashboard']>): MiddlewareFn {
  return async (ctx, next) => {
    if (!config.authorize || (await config.authorize(ctx)) !== true) {
      throw new AgentDashboardForbiddenException()
    }
    return next()
  }
}

/**
 * Mounts the governance API under `dashboard.path` (default
 * `/ai-gateway/api`): its middleware, then the authorization check.
 */
export function registerDashboardRoutes(
  router: Router,
  config: NonNullable<ResolvedAgentConfig['dashboard']>
) {
  return router
    .group(() => {
      router
        .get(
          'runs',
          list((governance, limit) => governance.recentRuns(limit))
        )
        .as('runs')
      router
        .get('runs-page', async (ctx) => {
          const qs = ctx.request.qs()
          const { page, limit } = paging(qs)
          const governance = await queries(ctx)
          return governance.runsPage(page, limit, where(qs, RUN_FIELDS))
        })
        .as('runs_page')
      router
        .get(
          'tool-calls',
          list((governance, limit) => governance.recentToolCalls(limit))
        )
        .as('tool_calls')
      router
        .get('tool-calls-page', async (ctx) => {
          const qs = ctx.request.qs()
          const { page, limit } = paging(qs)
          const governance = await queries(ctx)
          return governance.toolCallsPage(page, limit, where(qs, TOOL_CALL_FIELDS))
        })
        .as('tool_calls_page')
      router
        .get(
          'threads',
          list((governance, limit) => governance.recentThreads(limit))
        )
        .as('threads')
      router
        .get('threads-page', async (ctx) => {
          const qs = ctx.request.qs()
          const { page, limit } = paging(qs)
          const governance = await queries(ctx)
          return governance.threadsPage(page, limit, where(qs, THREAD_FIELDS))
        })
        .as('threads_page')
      router
        .get(
          'approvals',
          list((governance, limit) => governance.pendingApprovals(limit))
        )
        .as('approvals')
      router.post('approvals/:toolCallId', decide).as('approvals.decide')
      registerInsightRoutes(router)
    })
    .prefix(`/${config.path}`)
    .as('atrium.agent.dashboard')
    .use([...config.middleware.map(toRouteMiddleware), authorization(config)] as any)
}
