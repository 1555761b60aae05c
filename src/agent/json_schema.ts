import type { JsonSchema } from './model/port.ts'

/**
 * Checks a value against the JSON Schema keywords tools use for their input
 * (type, properties, required, additionalProperties, items, enum, const,
 * min/max length and value). Returns the first problem as a sentence, or
 * null. Keywords it does not know are ignored, never treated as failures.
 */
export function checkJsonSchema(schema: JsonSchema, value: unknown, path = 'input'): string | null {
  const types = schema.type === undefined ? [] : ([] as unknown[]).concat(schema.type)
  if (types.length && !types.some((type) => matchesType(type as string, value))) {
    return `${path} must be ${types.join(' or ')}`
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((item) => deepEqual(item, value))) {
    return `${path} must be one of ${JSON.stringify(schema.enum)}`
  }
  if ('const' in schema && !deepEqual(schema.const, value)) {
    return `${path} must be ${JSON.stringify(schema.const)}`
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) {
      return `${path} must have at least ${schema.minLength} characters`
    }
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) {
      return `${path} must have at most ${schema.maxLength} characters`
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) {
      return `${path} must be >= ${schema.minimum}`
    }
    if (typeof schema.maximum === 'number' && value > schema.maximum) {
      return `${path} must be <= ${schema.maximum}`
    }
  }
  if (Array.isArray(value) && schema.items && typeof schema.items === 'object') {
    for (const [index, item] of value.entries()) {
      const problem = checkJsonSchema(schema.items as JsonSchema, item, `${path}[${index}]`)
      if (problem) return problem
    }
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (!(key in value)) return `${path}.${key} is required`
    }
    for (const [key, item] of Object.entries(value)) {
      if (key in properties) {
        const problem = checkJsonSchema(properties[key], item, `${path}.${key}`)
        if (problem) return problem
      } else if (schema.additionalProperties === false) {
        return `${path}.${key} is not allowed`
      }
    }
  }
  return null
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function matchesType(type: string, value: unknown) {
  switch (type) {
    case 'object':
      return isObject(value)
    case 'array':
      return Array.isArray(value)
    case 'integer':
      return Number.isInteger(value)
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'null':
      return value === null
    case 'string':
      return typeof value === 'string'
    case 'boolean':
      return typeof value === 'boolean'
    default:
      // An unknown type name is not a constraint this checker understands
      return true
  }
}

function deepEqual(a: unknown, b: unknown) {
  return JSON.stringify(a) === JSON.stringify(b)
}
