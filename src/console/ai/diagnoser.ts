import type { Logger } from '@adonisjs/core/logger'
import { importOptional } from '../../shared/optional_import.ts'
import debug from '../debug.ts'
import { ConsoleDiagnosisFailedException } from '../errors.ts'
import type { ConsoleStore } from '../stores/contract.ts'
import type { ConsoleEntry, ResolvedConsoleConfig } from '../types.ts'
import type { ResolvedAiDiagnosis } from './config.ts'
import { diagnosisPrompt } from './prompt.ts'

type AiModule = typeof import('ai')

/** Where a diagnosis is kept: a key of the exception entry's content */
export const DIAGNOSIS_KEY = 'aiDiagnosis'

/** Characters of an answer kept at most, whatever the model sends */
export const MAX_ANSWER_CHARS = 32_000

/** Longest a model call may take before the diagnosis gives up (502) */
export const MODEL_TIMEOUT_MS = 120_000

/** A stored answer, on `content.aiDiagnosis` of the exception entry */
export interface StoredDiagnosis {
  /** The model's answer, Markdown */
  text: string
  /** `provider:modelId` of the model that answered */
  model: string
  /** Unix ms */
  createdAt: number
  inputTokens: number | null
  outputTokens: number | null
}

let loading: Promise<AiModule> | undefined

/**
 * Imports the optional `ai` peer once; a missing package is one line naming
 * `npm install ai`. A failed import is not kept, so a later call retries.
 */
export function loadAiForConsole(): Promise<AiModule> {
  loading ??= importOptional<AiModule>('ai', '"ai" in config/console.ts')
  loading.catch(() => (loading = undefined))
  return loading
}

/** Boot check of `ai`: the AI SDK must be installed when it is configured */
export async function prepareAiDiagnosis(ai: ResolvedAiDiagnosis | false) {
  if (ai) await loadAiForConsole()
}

/** The stored diagnosis of an entry, if its content carries a well-formed one */
export function storedDiagnosis(entry: ConsoleEntry): StoredDiagnosis | null {
  const value = (entry.content as Record<string, unknown>)[DIAGNOSIS_KEY] as
    StoredDiagnosis | undefined
  return value && typeof value === 'object' && typeof value.text === 'string' ? value : null
}

/**
 * Asks the configured model about one exception entry and stores the answer
 * on it, so a second click reads it back without a model call. Two clicks at
 * once share one call.
 */
export class ExceptionDiagnoser {
  #ai: ResolvedAiDiagnosis
  #config: ResolvedConsoleConfig
  #store: ConsoleStore
  #logger?: Logger
  #pending = new Map<string, Promise<StoredDiagnosis>>()

  constructor(
    ai: ResolvedAiDiagnosis,
    config: ResolvedConsoleConfig,
    store: ConsoleStore,
    logger?: Logger
  ) {
    this.#ai = ai
    this.#config = config
    this.#store = store
    this.#logger = logger
  }

  /** The stored answer, or a new one; `cached` says which */
  async diagnose(entry: ConsoleEntry): Promise<{ diagnosis: StoredDiagnosis; cached: boolean }> {
    const stored = storedDiagnosis(entry)
    if (stored) return { diagnosis: stored, cached: true }
    let pending = this.#pending.get(entry.id)
    if (!pending) {
      pending = this.#run(entry).finally(() => this.#pending.delete(entry.id))
      this.#pending.set(entry.id, pending)
    }
    return { diagnosis: await pending, cached: false }
  }

  async #run(entry: ConsoleEntry): Promise<StoredDiagnosis> {
    const batch =
      this.#ai.includeBatch && entry.batchId !== entry.id
        ? await this.#store.batch(entry.batchId)
        : []
    const prompt = diagnosisPrompt(entry, batch, this.#config.redact)
    const diagnosis = await this.#ask(prompt)
    // the content read now, not the one the click started with: nothing else is lost
    const current = await this.#store.find(entry.id)
    if (current) {
      await this.#store.updateContent(entry.id, {
        ...current.content,
        [DIAGNOSIS_KEY]: diagnosis,
      })
    }
    debug('diagnosed exception %s with %s', entry.id, diagnosis.model)
    return diagnosis
  }

  async #ask(prompt: string): Promise<StoredDiagnosis> {
    const ai = await loadAiForConsole()
    let text = ''
    let usage: { inputTokens?: number; outputTokens?: number } | undefined
    try {
      // streamed from the provider (every one supports it), answered whole
      const result = ai.streamText({
        model: this.#ai.model,
        instructions: this.#ai.systemPrompt,
        prompt,
        maxOutputTokens: this.#ai.maxOutputTokens,
        // a retry is a second bill: the person clicks again instead
        maxRetries: 0,
        abortSignal: AbortSignal.timeout(MODEL_TIMEOUT_MS),
        // errors surface through the stream below; the default handler would log them
        onError: () => {},
      })
      for await (const part of result.stream) {
        if (part.type === 'text-delta') {
          if (text.length < MAX_ANSWER_CHARS) text += part.text
        } else if (part.type === 'error') {
          throw part.error
        } else if (part.type === 'finish-step') {
          usage = part.usage
        }
      }
    } catch (error) {
      throw this.#failure(error)
    }
    text = text.slice(0, MAX_ANSWER_CHARS).trim()
    if (!text) throw new ConsoleDiagnosisFailedException('The model sent an empty answer', null)
    return {
      text,
      model: this.#ai.label,
      createdAt: Date.now(),
      inputTokens: usage?.inputTokens ?? null,
      outputTokens: usage?.outputTokens ?? null,
    }
  }

  /**
   * A 502 saying what failed without the provider's message, which may echo
   * the request (and so the key's headers or the prompt) back
   */
  #failure(error: unknown) {
    const status = (error as { statusCode?: unknown })?.statusCode
    const upstreamStatus = typeof status === 'number' ? status : null
    const kind = (error as Error)?.name || 'Error'
    this.#logger?.warn(
      `console AI diagnosis failed: ${kind}${upstreamStatus ? ` (provider answered ${upstreamStatus})` : ''}`
    )
    return new ConsoleDiagnosisFailedException(
      upstreamStatus
        ? `The model provider answered ${upstreamStatus}`
        : `The model call failed (${kind})`,
      upstreamStatus
    )
  }
}
