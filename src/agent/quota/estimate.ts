import type { ModelStepRequest } from '../model/port.ts'

/**
 * What one image costs as input: the most a provider bills for one
 * (Anthropic's images are at most about 1,600 tokens; OpenAI's high detail
 * tiles land near it)
 */
const IMAGE_TOKENS = 1600

/** Characters per token of ordinary text, the usual rough rule */
const CHARACTERS_PER_TOKEN = 4

/**
 * The input tokens of a model call, estimated from its text: the system
 * prompt, the messages, the tool results and the tools' declarations at
 * four characters a token, an image at its ceiling, any other file at its
 * byte length. Only the quota hold is sized with it; the call is charged
 * what the provider reports.
 */
export function estimateInputTokens(request: Omit<ModelStepRequest, 'signal'>) {
  let characters = request.system.length
  let fixed = 0
  for (const message of request.messages) {
    if (message.role === 'tool') {
      characters += JSON.stringify(message.results).length
      continue
    }
    characters += message.text.length
    if (message.role === 'assistant') {
      if (message.toolCalls.length) characters += JSON.stringify(message.toolCalls).length
      continue
    }
    for (const attachment of message.attachments ?? []) {
      if (attachment.contentType.startsWith('image/')) fixed += IMAGE_TOKENS
      else characters += attachment.data?.byteLength ?? 0
    }
  }
  if (request.tools.length) characters += JSON.stringify(request.tools).length
  return Math.ceil(characters / CHARACTERS_PER_TOKEN) + fixed
}

/**
 * The hold of one model call: its estimated input plus its output cap, or
 * undefined (the configured `quotaReserveTokens`) when the call has no cap,
 * since nothing then bounds what it may write
 */
export function holdSize(request: Omit<ModelStepRequest, 'signal'>) {
  return request.maxOutputTokens === undefined
    ? undefined
    : estimateInputTokens(request) + request.maxOutputTokens
}
