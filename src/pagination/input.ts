import { InvalidPaginationQueryException } from './errors.ts'
import { parseSort } from './keyset.ts'
import type {
  FieldType,
  FilterCondition,
  FilterInput,
  FilterOperator,
  KeysetColumn,
  NormalizedInput,
} from './types.ts'

export const OPERATORS: readonly FilterOperator[] = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'notIn',
  'between',
  'contains',
  'startsWith',
  'isNull',
  'notNull',
]

/**
 * A field after the definition and the model are read together.
 */
export interface ResolvedField {
  field: string
  /** Qualified column (`orders.created_at`) */
  column: string
  /** Undefined for an undeclared primary key: values pass as strings or numbers */
  type?: FieldType
  nullable: boolean
  few?: boolean
}

/**
 * What the parser checks a request against.
 */
export interface ParseRules {
  field(name: string): ResolvedField
  filterable: Map<string, Set<FilterOperator>>
  searchable: string[]
  sortable: Set<string>
  includable: Set<string>
  defaultSort: KeysetColumn[]
  defaultPageSize: number
  maxPageSize: number
}

function fail(message: string, parameter: string): never {
  throw new InvalidPaginationQueryException(message, parameter)
}

function describe(value: unknown) {
  return typeof value === 'string' ? `"${value}"` : (JSON.stringify(value) ?? String(value))
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
}

/**
 * Coerces one request value to a field's type or fails with a 400 naming the field.
 */
export function coerce(value: unknown, field: ResolvedField, parameter: string): unknown {
  const bad = (expected: string): never =>
    fail(
      `Invalid value for ${parameter}: expected ${expected}, received ${describe(value)}`,
      parameter
    )
  switch (field.type) {
    case undefined:
      if (typeof value === 'string' || typeof value === 'number') return value
      return bad('a string or a number')
    case 'string':
      if (typeof value === 'string') return value
      if (typeof value === 'number' || typeof value === 'boolean') return String(value)
      return bad('a string')
    case 'number':
    case 'integer': {
      const number =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && value.trim() !== ''
            ? Number(value)
            : Number.NaN
      if (!Number.isFinite(number)) return bad(field.type === 'integer' ? 'an integer' : 'a number')
      if (field.type === 'integer' && !Number.isInteger(number)) return bad('an integer')
      return number
    }
    case 'boolean':
      if (value === true || value === 'true' || value === '1' || value === 1) return true
      if (value === false || value === 'false' || value === '0' || value === 0) return false
      return bad('a boolean')
    case 'date':
    case 'datetime': {
      if (value instanceof Date && !Number.isNaN(value.getTime())) return value
      if (value && typeof value === 'object' && typeof (value as any).toJSDate === 'function') {
        return (value as any).toJSDate()
      }
      if (typeof value === 'string' && /^\d{4}-\d\d-\d\d/.test(value)) {
        const date = new Date(/^\d{4}-\d\d-\d\d \d/.test(value) ? value.replace(' ', 'T') : value)
        if (!Number.isNaN(date.getTime())) return date
      }
      return bad('an ISO 8601 date')
    }
  }
}

function list(value: unknown, parameter: string): unknown[] {
  const items = Array.isArray(value)
    ? value
    : typeof value === 'string'
      ? value.split(',')
      : value === undefined || value === null
        ? []
        : [value]
  const cleaned = items.map((item) => (typeof item === 'string' ? item.trim() : item))
  if (cleaned.length === 0 || cleaned.some((item) => item === '')) {
    fail(`Invalid value for ${parameter}: expected a comma separated list`, parameter)
  }
  return cleaned
}

function parseFilters(filter: unknown, rules: ParseRules): FilterCondition[] {
  if (filter === undefined || filter === null || filter === '') return []
  if (!isPlainObject(filter)) {
    fail('Invalid "filter": expected filter[<field>]=<value> parameters', 'filter')
  }
  const conditions: FilterCondition[] = []
  for (const [name, raw] of Object.entries(filter)) {
    const allowed = rules.filterable.get(name)
    if (!allowed) fail(`Filtering by "${name}" is not allowed`, `filter[${name}]`)
    const field = rules.field(name)
    const entries: [string, unknown][] = isPlainObject(raw)
      ? Object.entries(raw)
      : [[Array.isArray(raw) ? 'in' : 'eq', raw]]
    for (const [operator, value] of entries) {
      const parameter = isPlainObject(raw) ? `filter[${name}][${operator}]` : `filter[${name}]`
      if (!OPERATORS.includes(operator as FilterOperator)) {
        fail(`Unknown filter operator "${operator}" on "${name}"`, parameter)
      }
      if (!allowed.has(operator as FilterOperator)) {
        fail(`Operator "${operator}" is not allowed on filter "${name}"`, parameter)
      }
      conditions.push({
        field: name,
        operator: operator as FilterOperator,
        value: coerceOperand(operator as FilterOperator, value, field, parameter),
      })
    }
  }
  return conditions
}

function coerceOperand(
  operator: FilterOperator,
  value: unknown,
  field: ResolvedField,
  parameter: string
): unknown {
  switch (operator) {
    case 'in':
    case 'notIn':
      return list(value, parameter).map((item) => coerce(item, field, parameter))
    case 'between': {
      const bounds = list(value, parameter)
      if (bounds.length !== 2) {
        fail(`Invalid value for ${parameter}: expected two values "from,to"`, parameter)
      }
      return bounds.map((item) => coerce(item, field, parameter))
    }
    case 'isNull':
    case 'notNull':
      if (value === '' || value === undefined || value === null) return true
      return coerce(value, { ...field, type: 'boolean' }, parameter)
    case 'contains':
    case 'startsWith':
      if (typeof value !== 'string' && typeof value !== 'number') {
        fail(
          `Invalid value for ${parameter}: expected a string, received ${describe(value)}`,
          parameter
        )
      }
      return String(value)
    default:
      if (Array.isArray(value) || isPlainObject(value)) {
        fail(`Invalid value for ${parameter}: expected a single value`, parameter)
      }
      return coerce(value, field, parameter)
  }
}

function positive(value: unknown, parameter: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined
  const number =
    typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN
  if (!Number.isInteger(number) || number < 1) {
    fail(
      `Invalid value for ${parameter}: expected a positive integer, received ${describe(value)}`,
      parameter
    )
  }
  return number
}

function optionalString(value: unknown, parameter: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string')
    fail(`Invalid value for ${parameter}: expected a string`, parameter)
  return value
}

/**
 * Validates structured input or its query-string form (`ctx.request.qs()`):
 * everything not declared is a 400 naming it.
 */
export function parseInput(
  input: FilterInput | Record<string, unknown> = {},
  rules: ParseRules,
  trustedPageSize = false
): NormalizedInput {
  const raw = (input ?? {}) as Record<string, unknown>
  const clamp = (size: number | undefined) =>
    size === undefined ? undefined : trustedPageSize ? size : Math.min(size, rules.maxPageSize)

  const search = optionalString(raw.search, 'search')?.trim()
  if (search && rules.searchable.length === 0) fail('Search is not allowed here', 'search')

  const include =
    raw.include === undefined || raw.include === '' ? [] : list(raw.include, 'include')
  for (const relation of include) {
    if (typeof relation !== 'string' || !rules.includable.has(relation)) {
      fail(`Including "${String(relation)}" is not allowed`, 'include')
    }
  }

  if (raw.sort !== undefined && typeof raw.sort !== 'string' && !Array.isArray(raw.sort)) {
    fail('Invalid value for sort: expected comma separated fields', 'sort')
  }
  let sort = parseSort(raw.sort as string | string[] | undefined)
  for (const { field } of sort) {
    if (!rules.sortable.has(field)) fail(`Sorting by "${field}" is not allowed`, 'sort')
  }
  if (sort.length === 0) sort = rules.defaultSort

  const paginate = raw.paginate ?? {}
  if (!isPlainObject(paginate)) {
    fail('Invalid "paginate": expected paginate[first], paginate[after], ...', 'paginate')
  }

  return {
    filters: parseFilters(raw.filter, rules),
    search: search || undefined,
    include: include as string[],
    sort,
    page: positive(raw.page, 'page') ?? 1,
    perPage: clamp(positive(raw.perPage, 'perPage')) ?? rules.defaultPageSize,
    paginate: {
      first: clamp(positive(paginate.first, 'paginate[first]')),
      last: clamp(positive(paginate.last, 'paginate[last]')),
      after: optionalString(paginate.after, 'paginate[after]'),
      before: optionalString(paginate.before, 'paginate[before]'),
    },
  }
}
