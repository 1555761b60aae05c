import { models } from 'adonis-atrium/agent'
import type { LazyModel } from 'adonis-atrium/agent'
import { SCRIPTED_MODEL_ID, scriptedModel } from './agent_scripted_model.ts'

/** The model of the /agent page and the words the page shows for it */
export interface DemoModel {
  model: LazyModel
  label: string
  scripted: boolean
}

/**
 * Picks the demo's model from AGENT_MODEL: unset (or `scripted`) is the
 * local scripted server, `openai:<model>` OpenAI's API with OPENAI_API_KEY
 * (through `@ai-sdk/openai-compatible`, which this repository has; the
 * `@ai-sdk/openai` package is not a dependency), `anthropic:<model>`
 * Anthropic's with ANTHROPIC_API_KEY.
 */
export function demoModel(env: {
  AGENT_MODEL?: string
  OPENAI_API_KEY?: string
  ANTHROPIC_API_KEY?: string
}): DemoModel {
  const spec = env.AGENT_MODEL?.trim() || 'scripted'
  const [provider, ...rest] = spec.split(':')
  const modelId = rest.join(':')
  if (spec === 'scripted') {
    return {
      label: 'Local scripted model (no API key; answers from a script, not an LLM)',
      scripted: true,
      // the server starts when the app boots with this model, never for a real one
      model: models.fromPackage<any>('@ai-sdk/openai-compatible', async (module) =>
        module
          .createOpenAICompatible({
            name: 'demo',
            baseURL: await scriptedModel.start(),
            includeUsage: true,
          })
          .chatModel(SCRIPTED_MODEL_ID)
      ),
    }
  }
  if (provider === 'openai' && modelId) {
    if (!env.OPENAI_API_KEY) {
      throw new Error(`AGENT_MODEL=${spec} needs OPENAI_API_KEY`)
    }
    return {
      label: spec,
      scripted: false,
      model: models.openaiCompatible(modelId, {
        name: 'openai',
        baseURL: 'https://api.openai.com/v1',
        apiKey: env.OPENAI_API_KEY,
        includeUsage: true,
      }),
    }
  }
  if (provider === 'anthropic' && modelId) {
    if (!env.ANTHROPIC_API_KEY) {
      throw new Error(`AGENT_MODEL=${spec} needs ANTHROPIC_API_KEY`)
    }
    return {
      label: spec,
      scripted: false,
      model: models.anthropic(modelId, { apiKey: env.ANTHROPIC_API_KEY }),
    }
  }
  throw new Error(
    `Invalid AGENT_MODEL "${spec}": use "scripted" (the default), "openai:<model>" or "anthropic:<model>"`
  )
}
