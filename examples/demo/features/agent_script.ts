/**
 * What the demo's scripted model answers, decided from the conversation it
 * receives (OpenAI chat-completions messages). It reads no meaning: a
 * message that mentions a refund gets the refund tool, a tool result gets
 * a sentence about it, anything else an echo that says where it comes from.
 */

/** One scripted answer: text, then at most one tool call */
export interface ScriptedReply {
  text: string
  toolCall?: { name: string; input: Record<string, unknown> }
}

/** The parts of a chat-completions request the script reads */
export interface ScriptedRequest {
  messages?: Array<{ role?: string; content?: unknown }>
  tools?: Array<{ function?: { name?: string } }>
}

/** The name of the refund tool (features/agent_tools.ts) the script calls */
export const REFUND_TOOL = 'refund_order'

/** A user turn's text: string content or text parts, without the page context the gateway appends */
function textOf(content: unknown): string {
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('')
        : ''
  return text.replace(/<page_context>[\s\S]*<\/page_context>/, '').trim()
}

/** What a tool message says about the refund, from its JSON content */
function afterTool(content: unknown): string {
  let output: any
  try {
    output = JSON.parse(textOf(content))
  } catch {
    output = null
  }
  if (output?.error === 'rejected') {
    return `The refund was rejected${output.reason ? ` (“${output.reason}”)` : ''}, so nothing was refunded. Anything else I can do?`
  }
  if (output?.status === 'refunded') {
    return `Done: refund ${output.refundId} of ${output.amount} ${output.currency} for order #${output.orderId} was approved and issued.`
  }
  return 'The refund tool did not finish, so nothing was refunded.'
}

/** Order number and amount named in a message, with demo defaults */
function refundInput(text: string) {
  const order = /#?(\d{3,})/.exec(text)
  const amount = /(\d+(?:\.\d{1,2})?)\s*(?:usd|\$|dollars?)|\$\s*(\d+(?:\.\d{1,2})?)/i.exec(text)
  return {
    orderId: order ? Number(order[1]) : 1042,
    amount: amount ? Number(amount[1] ?? amount[2]) : 25,
    reason: text.slice(0, 200),
  }
}

/** The scripted answer to a conversation */
export function scriptReply(request: ScriptedRequest): ScriptedReply {
  const messages = Array.isArray(request.messages) ? request.messages : []
  const last = messages.at(-1)
  if (last?.role === 'tool') return { text: afterTool(last.content) }
  const question = textOf(last?.content)
  const canRefund = (request.tools ?? []).some((tool) => tool?.function?.name === REFUND_TOOL)
  if (/refund/i.test(question) && canRefund) {
    const input = refundInput(question)
    return {
      text: `I will refund ${input.amount} USD on order #${input.orderId}; a person has to approve it first. `,
      toolCall: { name: REFUND_TOOL, input },
    }
  }
  if (/\b(long|story)\b/i.test(question)) {
    return {
      text: Array.from(
        { length: 60 },
        (_, index) => `Sentence ${index + 1} of a long scripted answer you can cancel.`
      ).join(' '),
    }
  }
  const quoted = question.length > 120 ? `${question.slice(0, 120)}…` : question
  return {
    text: `Scripted answer to “${quoted}”. This reply comes from the demo's local scripted model, not from an LLM. Ask for a refund (“refund order 1042”) to see a tool wait for your approval, or for a long story to try Cancel.`,
  }
}
