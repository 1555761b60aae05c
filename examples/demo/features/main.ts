import type { Router } from '@adonisjs/core/http'
import { pagination } from './pagination.ts'
import { payments } from './payments.ts'
import { collaboration } from './collaboration.ts'

/**
 * One entry per feature page; the home page lists them in this order.
 */
export interface DemoFeature {
  title: string
  description: string
  path: string
  routes(router: Router): void
}

export const features: DemoFeature[] = [collaboration, payments, pagination]
