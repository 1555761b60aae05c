/**
 * The console's JSON API as the dashboard calls it. The shell names the API's
 * path in a meta tag; a 401 from any call (other than `/auth/*`) tells the app
 * to show the auth screen again.
 */

export type EntryType =
  | 'request'
  | 'query'
  | 'exception'
  | 'log'
  | 'http'
  | 'feature'
  | 'cache'
  | 'redis'
  | 'mail'
  | 'job'
  | 'schedule'
  | 'event'
  | 'client_error'
  | 'cpu_profile'

export interface EntrySummary {
  id: string
  batchId: string
  type: EntryType
  summary: string
  status: number | null
  method: string | null
  durationMs: number | null
  slow: boolean
  tags: string[]
  createdAt: number
}

/** The trace a request's batch belonged to (`traceContext`), with its `traceLink` URL */
export interface EntryTrace {
  traceId: string
  spanId: string | null
  sampled?: boolean
  url: string | null
}

export interface Entry extends EntrySummary {
  content: Record<string, unknown>
  trace?: EntryTrace
}

export interface EntryPage {
  data: EntrySummary[]
  nextCursor: string | null
}

export interface HealthRoute {
  method: string
  route: string
  requests: number
  errors: number
  avgMs: number | null
  p50Ms: number | null
  p99Ms: number | null
  maxMs: number | null
}

export interface ExceptionFamily {
  fingerprint: string
  class: string
  message: string
  count: number
  lastSeenAt: number
  lastId: string
}

export interface Health {
  recorder: Record<string, unknown> & { state: string }
  window: { minutes: number; from: number; to: number }
  throughput: {
    requests: number
    errors: number
    perMinute: number
    series: { minute: number; requests: number; errors: number }[]
  }
  routes: HealthRoute[]
  slowRoutes: { method: string; route: string; requests: number; p99Ms: number | null }[]
  exceptions: { families: ExceptionFamily[]; scanned: number; truncated: boolean }
  storage: { entries: Record<string, number>; rollups: number | null }
}

/** One extension as `GET /extensions` lists it */
export interface ConsoleExtensionInfo {
  name: string
  entryTypes: { type: string; url: string }[]
  providers: string[]
  pages: { title: string; provider: string; url: string }[]
}

/** An exception's AI diagnosis, as stored on its `content.aiDiagnosis` */
export interface Diagnosis {
  text: string
  model: string
  createdAt: number
  inputTokens: number | null
  outputTokens: number | null
  /** True when the stored answer came back without a model call */
  cached?: boolean
}

/** A queue of a queue manager with its jobs per state (`GET /queues`) */
export interface QueueManagerSummary {
  driver: string
  queues: { name: string; counts: Record<string, number> }[]
  error: string | null
}

/** A job as `GET /queues/:driver/:queue/jobs` answers it, payload redacted */
export interface QueueJob {
  id: string
  name: string
  state: string
  attempts: number | null
  createdAt: number | null
  finishedAt: number | null
  error: string | null
  payload: unknown
}

/** A schedule manager's tasks (`GET /schedules`) */
export interface ScheduleManagerSummary {
  driver: string
  tasks: {
    name: string
    expression: string
    nextRunAt: number | null
    lastRunAt: number | null
    lastStatus: string | null
  }[]
  error: string | null
}

export interface SessionUser {
  id: string
  name?: string
  roles?: string[]
}

/** Who is signed in, or which ways of signing in the console offers */
export type AuthState = { user: SessionUser } | { modes: string[] } | { open: true }

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message)
  }
}

export const API_BASE =
  document.querySelector<HTMLMetaElement>('meta[name="atrium-console-api"]')?.content ??
  '/console/api'

/** Where the raw `.cpuprofile` of a CPU profile entry downloads (a plain link: the cookie goes along) */
export function profileDownloadUrl(id: string) {
  return `${API_BASE}/profiles/${encodeURIComponent(id)}/download`
}

let onUnauthenticated = () => {}

/** Called whenever a gated call answers 401: the session is gone */
export function whenUnauthenticated(handler: () => void) {
  onUnauthenticated = handler
}

async function errorOf(response: Response) {
  const body = await response.json().catch(() => null)
  const message = body?.errors?.[0]?.message ?? body?.message ?? `HTTP ${response.status}`
  return new ApiError(String(message), response.status)
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${API_BASE}${path}`, {
    credentials: 'same-origin',
    headers: { accept: 'application/json', ...init.headers },
    ...init,
  })
  if (response.status === 401 && !path.startsWith('/auth/')) onUnauthenticated()
  if (!response.ok) throw await errorOf(response)
  return response.status === 204 ? (undefined as T) : ((await response.json()) as T)
}

/** Query string of the defined, non-empty values */
function qs(params: Record<string, string | undefined>) {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value)
  const text = search.toString()
  return text ? `?${text}` : ''
}

function queuePath(driver: string, queue: string) {
  return `/queues/${encodeURIComponent(driver)}/${encodeURIComponent(queue)}`
}

export const api = {
  /**
   * `/auth/me`: the user, or the modes to offer. Without `dashboardAuth` the
   * route does not exist (404), and the other gates decide: the app opens.
   */
  async me(): Promise<AuthState> {
    const response = await fetch(`${API_BASE}/auth/me`, { credentials: 'same-origin' })
    if (response.ok) return (await response.json()) as { user: SessionUser }
    if (response.status === 401) {
      const body = await response.json().catch(() => null)
      return { modes: Array.isArray(body?.auth?.modes) ? body.auth.modes : [] }
    }
    if (response.status === 404) return { open: true }
    throw await errorOf(response)
  },
  login: (username: string, password: string) =>
    call<void>('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    }),
  session: () => call<void>('/auth/session', { method: 'POST' }),
  logout: () => call<void>('/auth/logout', { method: 'POST' }),
  list: (path: string, params: Record<string, string | undefined>) =>
    call<EntryPage>(`/${path}${qs(params)}`),
  search: (params: Record<string, string | undefined>) => call<EntryPage>(`/search${qs(params)}`),
  entry: (id: string) => call<{ data: Entry }>(`/entries/${encodeURIComponent(id)}`),
  batch: (id: string) =>
    call<{ data: { id: string; entries: Entry[] } }>(`/batches/${encodeURIComponent(id)}`),
  health: (minutes: number) => call<{ data: Health }>(`/health${qs({ minutes: String(minutes) })}`),
  curl: (id: string) =>
    call<{ data: { command: string; notes: string[] } }>(`/entries/${encodeURIComponent(id)}/curl`),
  replay: (id: string) =>
    call<{ data: { status: number; batchId: string | null; notes: string[] } }>(
      `/entries/${encodeURIComponent(id)}/replay`,
      { method: 'POST' }
    ),
  explain: (id: string) =>
    call<{ data: { plan: unknown } }>(`/entries/${encodeURIComponent(id)}/explain`, {
      method: 'POST',
    }),
  extensions: () => call<{ data: ConsoleExtensionInfo[] }>('/extensions'),
  extensionData: (name: string, provider: string) =>
    call<{ data: unknown }>(
      `/extensions/${encodeURIComponent(name)}/${encodeURIComponent(provider)}`
    ),
  /** Whether exception diagnosis is configured (`ai` in config/console.ts), and its model */
  aiStatus: () => call<{ data: { diagnosis: boolean; model: string | null } }>('/ai'),
  diagnose: (id: string) =>
    call<{ data: Diagnosis }>(`/entries/${encodeURIComponent(id)}/diagnose`, { method: 'POST' }),
  queues: () => call<{ data: QueueManagerSummary[] }>('/queues'),
  jobs: (driver: string, queue: string, params: Record<string, string | undefined>) =>
    call<{ data: QueueJob[]; nextCursor: string | null }>(
      `${queuePath(driver, queue)}/jobs${qs(params)}`
    ),
  retryJob: (driver: string, queue: string, id: string) =>
    call<unknown>(`${queuePath(driver, queue)}/jobs/${encodeURIComponent(id)}/retry`, {
      method: 'POST',
    }),
  removeJob: (driver: string, queue: string, id: string) =>
    call<unknown>(`${queuePath(driver, queue)}/jobs/${encodeURIComponent(id)}`, {
      method: 'DELETE',
    }),
  schedules: () => call<{ data: ScheduleManagerSummary[] }>('/schedules'),
  /** Runs a prune now (`authorizeAction`, name `prune`): rows deleted per type */
  prune: () => call<{ data: { deleted: Record<string, number> } }>('/prune', { method: 'POST' }),
  /** Whether the server pushes new entries (404 without `@adonisjs/transmit` or with `ui.liveTail` off) */
  async liveTail(): Promise<boolean> {
    const response = await fetch(`${API_BASE}/live`, { credentials: 'same-origin' })
    return response.ok
  },
}
