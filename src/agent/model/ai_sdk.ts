import type { LanguageModel, LanguageModelUsage, ModelMessage as SdkMessage, ToolSet } from 'ai'
import { importOptional } from '../../shared/optional_import.ts'
import {
  UNKNOWN_USAGE,
  type ModelAttachment,
  type ModelMessage,
  type ModelPort,
  type ModelStepEvent,
  type ModelStepRequest,
  type TokenUsage,
} from './port.ts'

type AiModule = typeof import('ai')

let aiModule: Promise<AiModule> | undefined

/** Loads the optional `ai` peer once, naming the install command when it is missing */
export function loadAiSdk(): Promise<AiModule> {
  aiModule ??= importOptional<AiModule>('ai', 'The agent gateway (config/agent.ts)')
  aiModule.catch(() => (aiModule = undefined))
  return aiModule
}

/**
 * Turns the AI SDK's usage into disjoint buckets. Providers differ on
 * whether cached input is inside the input count (OpenAI) or beside it
 * (Anthropic); the SDK's `inputTokenDetails` already says which part is
 * which, so only missing details fall back to subtraction.
 */
export function usageFromAiSdk(usage: LanguageModelUsage | undefined): TokenUsage {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined)) {
    return UNKNOWN_USAGE
  }
  const cacheReadTokens = usage.inputTokenDetails?.cacheReadTokens ?? 0
  const cacheWriteTokens = usage.inputTokenDetails?.cacheWriteTokens ?? 0
  const uncachedInputTokens =
    usage.inputTokenDetails?.noCacheTokens ??
    Math.max(0, (usage.inputTokens ?? 0) - cacheReadTokens - cacheWriteTokens)
  const reasoningTokens = usage.outputTokenDetails?.reasoningTokens ?? 0
  const outputTokens =
    usage.outputTokenDetails?.textTokens ?? Math.max(0, (usage.outputTokens ?? 0) - reasoningTokens)
  return {
    known: true,
    uncachedInputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    outputTokens,
    reasoningTokens,
  }
}

/**
 * A user turn with attachments: the text, then a text part per text file
 * (providers differ on which text types they take as files: Anthropic
 * refuses text/csv) and a file part per other file (images, PDFs).
 */
function userContent(text: string, attachments: ModelAttachment[] | undefined) {
  if (!attachments?.length) return text
  return [
    { type: 'text' as const, text },
    ...attachments.map((attachment) => {
      if (!attachment.data) {
        return {
          type: 'text' as const,
          text: `[The attachment "${attachment.name}" (${attachment.contentType}) is no longer available]`,
        }
      }
      if (attachment.contentType.startsWith('text/')) {
        const content = new TextDecoder().decode(attachment.data)
        return {
          type: 'text' as const,
          text: `<attachment name="${attachment.name.replace(/["<>]/g, '_')}" type="${attachment.contentType}">\n${content}\n</attachment>`,
        }
      }
      // Images too: the SDK's "image" part is deprecated in favour of a file part
      return {
        type: 'file' as const,
        data: attachment.data,
        mediaType: attachment.contentType,
        filename: attachment.name,
      }
    }),
  ]
}

function toSdkMessages(messages: ModelMessage[]): SdkMessage[] {
  return messages.map((message): SdkMessage => {
    switch (message.role) {
      case 'user':
        return { role: 'user', content: userContent(message.text, message.attachments) }
      case 'assistant':
        return {
          role: 'assistant',
          content: [
            ...(message.text ? [{ type: 'text' as const, text: message.text }] : []),
            ...message.toolCalls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              input: call.input,
            })),
          ],
        }
      case 'tool':
        return {
          role: 'tool',
          content: message.results.map((result) => ({
            type: 'tool-result' as const,
            toolCallId: result.toolCallId,
            toolName: result.toolName,
            output: { type: 'json' as const, value: (result.output ?? null) as any },
          })),
        }
    }
  })
}

/**
 * A model port over one AI SDK language model. Each step is one
 * `streamText` call with tools declared WITHOUT `execute`, so every tool
 * call comes back to the gateway (role gate, timeout, persistence) instead
 * of running inside the SDK.
 */
export class AiSdkModel implements ModelPort {
  readonly label: string
  #model: LanguageModel

  constructor(model: LanguageModel, options: { maxRetries?: number } = {}) {
    this.#model = model
    this.#maxRetries = options.maxRetries ?? 2
    this.label =
      typeof model === 'string' ? model : `${model.provider ?? 'model'}:${model.modelId ?? ''}`
  }

  #maxRetries: number

  async *streamStep(request: ModelStepRequest): AsyncIterable<ModelStepEvent> {
    const ai = await loadAiSdk()
    const tools: ToolSet = {}
    for (const declaration of request.tools) {
      tools[declaration.name] = ai.tool({
        description: declaration.description,
        inputSchema: ai.jsonSchema(declaration.inputSchema as any),
      })
    }
    const result = ai.streamText({
      model: this.#model,
      instructions: request.system || undefined,
      messages: toSdkMessages(request.messages),
      tools,
      maxOutputTokens: request.maxOutputTokens,
      abortSignal: request.signal,
      maxRetries: this.#maxRetries,
      // Errors surface through the stream below; the default handler would log them
      onError: () => {},
    })
    let finished = false
    for await (const part of result.stream) {
      switch (part.type) {
        case 'text-delta':
          if (part.text) yield { type: 'text-delta', text: part.text }
          break
        case 'tool-call':
          // An undeclared tool or an input that fails the schema still comes
          // back to the gateway, which answers the model with a refusal
          yield {
            type: 'tool-call',
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
          }
          break
        case 'error':
          throw part.error instanceof Error ? part.error : new Error(String(part.error))
        case 'abort':
          throw request.signal.reason ?? new Error('Model step aborted')
        case 'finish-step':
          finished = true
          yield {
            type: 'finish',
            finishReason: part.finishReason,
            usage: usageFromAiSdk(part.usage),
          }
          break
      }
    }
    if (!finished) {
      throw new Error('The model stream ended without finishing its step')
    }
  }
}
