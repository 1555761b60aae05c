import app from '@adonisjs/core/services/app'
import type { PaymentRow } from './store.ts'

/**
 * Looks a payment up by the reference your app gave the gateway; null when
 * none matches (rows written before the column existed stay null).
 */
export async function findPaymentByExternalReference(
  reference: string
): Promise<PaymentRow | null> {
  const manager = await app.container.make('atrium.payments')
  return manager.findPaymentByExternalReference(reference)
}
