import { AgentConfigException } from './errors.ts'

/** Where an app writes the gateway's options, as boot errors name it */
export const CONFIG_FILE = 'config/agent.ts'

interface IntegerRules {
  /** Whose option it is, after the name: `agent "clerk"` */
  of?: string
  /** The largest value taken */
  max?: number
}

/**
 * A whole-number option of config/agent.ts: `fallback` when it is absent,
 * otherwise a positive integer (at most `max`), or a boot error naming the
 * option and what it takes
 */
export function positiveInteger(
  option: string,
  value: unknown,
  fallback: number,
  rules?: IntegerRules
): number
export function positiveInteger(
  option: string,
  value: unknown,
  fallback?: number,
  rules?: IntegerRules
): number | undefined
export function positiveInteger(
  option: string,
  value: unknown,
  fallback?: number,
  rules: IntegerRules = {}
) {
  if (value === undefined) return fallback
  const { of, max } = rules
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value <= 0 ||
    (max !== undefined && value > max)
  ) {
    const expected = max === undefined ? 'a positive integer' : `an integer from 1 to ${max}`
    throw new AgentConfigException(
      `Invalid "${option}"${of ? ` of ${of}` : ''} in ${CONFIG_FILE}: expected ${expected}, received ${JSON.stringify(value)}`
    )
  }
  return value
}
