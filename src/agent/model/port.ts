/**
 * The gateway's own view of a language model: one streamed step at a time,
 * tools declared but never executed by the model layer. Only
 * `model/ai_sdk.ts` knows the AI SDK; a new SDK major touches that file.
 */

/** A JSON Schema object, as sent to the model for a tool's input */
export type JsonSchema = Record<string, unknown>

/** One tool as the model sees it: no handler, no roles */
export interface ModelToolDeclaration {
  name: string
  description: string
  inputSchema: JsonSchema
}

/** A tool call the model asked for in an assistant turn */
export interface ModelToolCall {
  toolCallId: string
  toolName: string
  input: unknown
}

/**
 * A file the user attached to a message, with its bytes. An attachment
 * whose bytes are gone has `data` null: the model is told it was there.
 */
export interface ModelAttachment {
  name: string
  contentType: string
  data: Uint8Array | null
}

/** A message of the conversation in the gateway's neutral shape */
export type ModelMessage =
  | { role: 'user'; text: string; attachments?: ModelAttachment[] }
  | { role: 'assistant'; text: string; toolCalls: ModelToolCall[] }
  | {
      role: 'tool'
      results: Array<{ toolCallId: string; toolName: string; output: unknown }>
    }

/**
 * Token counts of one model call in disjoint buckets: their sum is every
 * token billed, whichever way the provider reports cached input.
 */
export interface TokenUsage {
  /** false when the provider reported no usage; every count is then 0 */
  known: boolean
  uncachedInputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  /** output tokens that are not reasoning tokens */
  outputTokens: number
  reasoningTokens: number
  /**
   * What the provider billed for the call, in micro-units of the currency,
   * when it says so; the usage row then keeps it instead of an estimate
   */
  reportedCost?: number
}

/** What one model step streams back */
export type ModelStepEvent =
  | { type: 'text-delta'; text: string }
  | ({ type: 'tool-call' } & ModelToolCall)
  | { type: 'finish'; finishReason: string; usage: TokenUsage }

export interface ModelStepRequest {
  system: string
  messages: ModelMessage[]
  tools: ModelToolDeclaration[]
  /** The most tokens the call may write; the provider's own limit when absent */
  maxOutputTokens?: number
  signal: AbortSignal
}

/**
 * A model the gateway can drive. `streamStep` yields text deltas and tool
 * calls as they arrive and ends with exactly one `finish` event; it throws
 * when the call fails or the signal aborts.
 */
export interface ModelPort {
  /** Provider and model id, for logs and usage rows */
  readonly label: string
  streamStep(request: ModelStepRequest): AsyncIterable<ModelStepEvent>
}

/** A usage record for a call the provider reported nothing about */
export const UNKNOWN_USAGE: TokenUsage = {
  known: false,
  uncachedInputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
}

/** True for a value that already speaks the port (a custom model) */
export function isModelPort(value: unknown): value is ModelPort {
  return typeof (value as ModelPort | undefined)?.streamStep === 'function'
}
