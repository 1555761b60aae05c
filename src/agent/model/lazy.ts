import type { LanguageModel } from 'ai'
import { importOptional } from '../../shared/optional_import.ts'
import { AgentConfigException } from '../errors.ts'

const LAZY_MODEL = Symbol.for('atrium.agent.lazyModel')

/**
 * A model whose AI SDK provider package is imported when the app boots, not
 * when config/agent.ts is read: a missing provider is a one-line boot error
 * naming `npm install <package>`, never a raw module-not-found error.
 */
export interface LazyModel {
  readonly [LAZY_MODEL]: true
  /** The npm package the model comes from */
  readonly packageName: string
  /** Imports the package and builds the model */
  resolve(): Promise<LanguageModel>
}

/** Settings every AI SDK provider factory takes; the rest pass through unchecked */
export interface ProviderSettings {
  apiKey?: string
  baseURL?: string
  headers?: Record<string, string>
  [setting: string]: unknown
}

export function isLazyModel(value: unknown): value is LazyModel {
  return typeof value === 'object' && value !== null && LAZY_MODEL in value
}

/**
 * Model helpers for `model` in config/agent.ts. Each one names its provider
 * package instead of importing it, so the config file loads without it.
 */
export const models = {
  /**
   * Any AI SDK provider package: `build` receives the imported module.
   * `models.fromPackage('@ai-sdk/openai', ({ createOpenAI }) => createOpenAI({ apiKey })('gpt-4.1'))`
   */
  fromPackage<Module = any>(
    packageName: string,
    build: (module: Module) => LanguageModel | Promise<LanguageModel>
  ): LazyModel {
    if (typeof packageName !== 'string' || !packageName || typeof build !== 'function') {
      throw new AgentConfigException(
        'models.fromPackage(packageName, build) in config/agent.ts needs a package name and a function'
      )
    }
    return {
      [LAZY_MODEL]: true,
      packageName,
      async resolve() {
        const module = await importOptional<Module>(
          packageName,
          `"model" in config/agent.ts`,
          packageName
        )
        return build(module)
      },
    }
  },

  /** An Anthropic Messages model from `@ai-sdk/anthropic` (`createAnthropic(settings)(modelId)`) */
  anthropic(modelId: string, settings: ProviderSettings = {}): LazyModel {
    return models.fromPackage<any>('@ai-sdk/anthropic', (module) =>
      module.createAnthropic(settings)(modelId)
    )
  },

  /**
   * A chat model of any OpenAI-compatible server (Ollama, vLLM, LM Studio)
   * from `@ai-sdk/openai-compatible`; `name` and `baseURL` are required.
   */
  openaiCompatible(
    modelId: string,
    settings: ProviderSettings & { name: string; baseURL: string; includeUsage?: boolean }
  ): LazyModel {
    return models.fromPackage<any>('@ai-sdk/openai-compatible', (module) =>
      module.createOpenAICompatible(settings).chatModel(modelId)
    )
  },
}
