import app from '@adonisjs/core/services/app'
import type { PaymentsManager } from '../src/payments/manager.ts'

let payments: PaymentsManager

/**
 * The booted payments manager (`atrium.payments`) for app code: processors,
 * the ledger store, `replay()` and `findPaymentByExternalReference()`.
 */
await app.booted(async () => {
  payments = await app.container.make('atrium.payments')
})

export { payments as default }
