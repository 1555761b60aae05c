import { randomUUID } from 'node:crypto'
import { defineTool } from 'adonis-atrium/agent'
import { REFUND_TOOL } from './agent_script.ts'

/** What the model sends to the refund tool */
export interface RefundInput {
  orderId: number
  amount: number
  reason?: string
}

/**
 * The demo's tool that needs a person's approval: it "refunds" an order of
 * the demo shop. Nothing is charged or refunded anywhere; the result only
 * shows what a real tool would return once approved.
 */
export const refundOrder = defineTool<RefundInput>({
  spec: {
    name: REFUND_TOOL,
    description:
      'Refunds an order of the demo shop. Every refund waits for a person to approve it.',
    inputSchema: {
      type: 'object',
      properties: {
        orderId: { type: 'integer' },
        amount: { type: 'number' },
        reason: { type: 'string', maxLength: 200 },
      },
      required: ['orderId', 'amount'],
      additionalProperties: false,
    },
    roles: ['SUPPORT'],
    requiresApproval: true,
  },
  handler(input) {
    return {
      refundId: `re_demo_${randomUUID().slice(0, 8)}`,
      orderId: input.orderId,
      amount: input.amount,
      currency: 'USD',
      status: 'refunded',
    }
  },
})
