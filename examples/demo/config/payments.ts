import env from '../start/env.ts'
import { defineConfig, gateways, WEBHOOK_EVENT_TYPES } from 'adonis-atrium/payments'
import {
  EFI_DEMO_HMAC,
  INFINITEPAY_DEMO_HANDLE,
  remember,
  wooviKeys,
} from '../features/payments_state.ts'

/**
 * Every gateway Atrium ships, with development credentials from start/env.ts;
 * every canonical type has a handler that records what it saw for the page.
 * InfinitePay's payment check goes to the demo's own stand-in route (this
 * machine has no route to InfinitePay).
 */
export default defineConfig({
  providers: {
    stripe: gateways.stripe({ webhookSecret: env.get('STRIPE_WEBHOOK_SECRET') }),
    abacatepay: gateways.abacatepay({
      webhookSecret: env.get('ABACATEPAY_WEBHOOK_SECRET'),
      publicKey: env.get('ABACATEPAY_PUBLIC_KEY'),
    }),
    asaas: gateways.asaas({ webhookToken: env.get('ASAAS_WEBHOOK_TOKEN') }),
    woovi: gateways.woovi({ webhookPublicKey: wooviKeys.publicKey }),
    pagbank: gateways.pagbank({ webhookToken: env.get('PAGBANK_WEBHOOK_TOKEN') }),
    adyen: gateways.adyen({ hmacKey: env.get('ADYEN_HMAC_KEY') }),
    efi: gateways.efi({ webhookHmac: EFI_DEMO_HMAC }),
    infinitepay: gateways.infinitepay({
      handle: INFINITEPAY_DEMO_HANDLE,
      apiBaseUrl: `http://127.0.0.1:${env.get('PORT')}/payments/demo/infinitepay`,
    }),
    fake: gateways.fake({ secret: 'demo-fake-secret' }),
  },
  allowUnverifiedWebhooks: [],
  billing: {
    handlers: Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, remember])),
    passthroughEvents: [],
  },
})
