import type { LanguageModel } from 'ai'
import { fail, FILE, positiveInteger } from '../config_checks.ts'

/** `ai` as config/console.ts writes it */
export interface AiDiagnosisOptions {
  /**
   * Any AI SDK language model: `openai.chat('gpt-4.1-mini')`,
   * `anthropic('claude-sonnet-4-5')`, `createOpenAICompatible({...}).chatModel('llama3')`
   */
  model: LanguageModel
  /** Longest answer, in tokens: 1024 by default */
  maxOutputTokens?: number
  /** Replaces the console's instructions to the model */
  systemPrompt?: string
  /**
   * Sends a compact summary of the exception's batch (request line, status,
   * SQL without bindings, log lines, other exceptions): true by default
   */
  includeBatch?: boolean
}

/** `ai` with its defaults applied */
export interface ResolvedAiDiagnosis {
  model: LanguageModel
  /** `provider:modelId`, stored beside each answer and shown by the page */
  label: string
  maxOutputTokens: number
  systemPrompt: string
  includeBatch: boolean
}

/** The instructions the model gets unless `ai.systemPrompt` replaces them */
export const DEFAULT_SYSTEM_PROMPT = [
  'You are a senior engineer helping diagnose an exception recorded in a production AdonisJS (Node.js, TypeScript) application.',
  'You receive the exception (class, message, stack) and, when available, a summary of what the same request or job did before it failed.',
  'Values shown as [redacted] were hidden on purpose; never ask for them.',
  'Answer in Markdown with three short sections: "Likely cause", "Where to look" (files and lines from the stack), and "Suggested fix".',
  'Say so plainly when the evidence is not enough to be sure.',
].join(' ')

const MODEL_HINT =
  "pass an AI SDK language model such as openai.chat('gpt-4.1-mini') from @ai-sdk/openai or anthropic('claude-sonnet-4-5') from @ai-sdk/anthropic"

/** A model the AI SDK can call: a provider's model object, or a gateway model id */
function isLanguageModel(value: unknown): value is LanguageModel {
  if (typeof value === 'string') return value.length > 0
  return (
    typeof value === 'object' &&
    value !== null &&
    (typeof (value as { doStream?: unknown }).doStream === 'function' ||
      typeof (value as { doGenerate?: unknown }).doGenerate === 'function')
  )
}

/** `provider:modelId` of a model, for the stored answer and the page */
export function modelLabel(model: LanguageModel): string {
  if (typeof model === 'string') return model
  const { provider, modelId } = model as { provider?: string; modelId?: string }
  return `${provider ?? 'model'}:${modelId ?? ''}`
}

/**
 * `ai` with its defaults applied; omitted or false turns the diagnosis off
 * (the route answers 501 and the page shows no button).
 */
export function resolveAiDiagnosis(value: AiDiagnosisOptions | false | undefined) {
  if (value === undefined || value === false) return false
  if (value === null || typeof value !== 'object') {
    fail(`Invalid "ai" in ${FILE}: use { model } with an AI SDK language model, or false`)
  }
  if (!isLanguageModel(value.model)) {
    fail(
      `${value.model === undefined ? 'Missing' : 'Invalid'} "ai.model" in ${FILE}: ${MODEL_HINT}`
    )
  }
  const maxOutputTokens = positiveInteger(value.maxOutputTokens, 'ai.maxOutputTokens', 1024)
  if (maxOutputTokens < 1) {
    fail(`Invalid "ai.maxOutputTokens" in ${FILE}: use a whole number of 1 or more`)
  }
  if (value.systemPrompt !== undefined && typeof value.systemPrompt !== 'string') {
    fail(`Invalid "ai.systemPrompt" in ${FILE}: use a string`)
  }
  if (value.includeBatch !== undefined && typeof value.includeBatch !== 'boolean') {
    fail(`Invalid "ai.includeBatch" in ${FILE}: use true or false`)
  }
  const resolved: ResolvedAiDiagnosis = {
    model: value.model,
    label: modelLabel(value.model),
    maxOutputTokens,
    systemPrompt: value.systemPrompt?.trim() || DEFAULT_SYSTEM_PROMPT,
    includeBatch: value.includeBatch ?? true,
  }
  return resolved
}
