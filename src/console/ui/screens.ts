import type { EntryType } from './api.ts'

export type Filter = 'status' | 'method' | 'slow' | 'tag' | 'type'

/** One list screen per entry type: its API path and the filters worth offering */
export interface ListScreen {
  path: string
  label: string
  type: EntryType
  filters: Filter[]
  /** Where the screen lives when not at `#/<path>` (an extension's entry type) */
  segments?: string[]
}

export const LIST_SCREENS: ListScreen[] = [
  {
    path: 'requests',
    label: 'Requests',
    type: 'request',
    filters: ['status', 'method', 'slow', 'tag'],
  },
  { path: 'exceptions', label: 'Exceptions', type: 'exception', filters: ['status', 'tag'] },
  { path: 'queries', label: 'Queries', type: 'query', filters: ['slow', 'tag'] },
  { path: 'logs', label: 'Logs', type: 'log', filters: ['tag'] },
  {
    path: 'http',
    label: 'Outgoing HTTP',
    type: 'http',
    filters: ['status', 'method', 'slow', 'tag'],
  },
  { path: 'features', label: 'Webhooks, collaboration, agent', type: 'feature', filters: ['tag'] },
  { path: 'mail', label: 'Mail', type: 'mail', filters: ['tag'] },
  { path: 'cache', label: 'Cache', type: 'cache', filters: ['slow', 'tag'] },
  { path: 'redis', label: 'Redis', type: 'redis', filters: ['slow', 'tag'] },
  { path: 'jobs', label: 'Jobs', type: 'job', filters: ['slow', 'tag'] },
  { path: 'schedule-runs', label: 'Scheduled runs', type: 'schedule', filters: ['slow', 'tag'] },
  { path: 'events', label: 'Events', type: 'event', filters: ['tag'] },
  { path: 'client-errors', label: 'Client errors', type: 'client_error', filters: ['tag'] },
  { path: 'cpu-profiles', label: 'CPU profiles', type: 'cpu_profile', filters: ['tag'] },
]

export function screenOf(path: string | undefined) {
  return LIST_SCREENS.find((screen) => screen.path === path)
}
