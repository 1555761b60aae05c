import type { Router } from '@adonisjs/core/http'
import { pagination } from './pagination.ts'
import { payments } from './payments.ts'
import { collaboration } from './collaboration.ts'
import { agent } from './agent.ts'

/** The console's page and API are the provider's own routes: this entry only links to them */
const operationsConsole: DemoFeature = {
  title: 'Operations console',
  description:
    'Everything the other pages did: requests, queries, logs, webhook deliveries and collaboration events, live. Sign in as demo / demo.',
  path: '/console',
  routes() {},
}

/**
 * One entry per feature page; the home page lists them in this order.
 */
export interface DemoFeature {
  title: string
  description: string
  path: string
  routes(router: Router): void
}

export const features: DemoFeature[] = [
  collaboration,
  payments,
  pagination,
  agent,
  operationsConsole,
]
