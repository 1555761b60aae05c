import { InvalidPaginationQueryException } from './errors.ts'
import { parseSort } from './keyset.ts'
import { coerceValue, MAX_LIST_ITEMS, textProblem } from './values.ts'
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

/** A name from the request, quoted and shortened for a message */
function describeName(value: unknown) {
  const text = typeof value === 'string' ? value : String(JSON.stringify(value))
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
}

/**
 * Coerces one request value to a field's type or fails with a 400 naming the field.
 */
export function coerce(value: unknown, field: ResolvedField, parameter: string): unknown {
  return coerceValue(value, field.type, parameter)
}

/**
 * An absent filter value: nothing, or an empty string (a blank form field).
 * It is ignored, whatever the operator: never `= ''`, never `IS NULL`.
 */
function isEmpty(value: unknown) {
  return value === undefined || value === null || value === ''
}

function list(value: unknown, parameter: string): unknown[] {
  const items = Array.isArray(value)
    ? value
    : typeof value === 'string'
      ? value.split(',')
      : value === undefined || value === null
        ? []
        : [value]
  if (items.length > MAX_LIST_ITEMS) {
    fail(`Invalid value for ${parameter}: expected at most ${MAX_LIST_ITEMS} values`, parameter)
  }
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
    if (!allowed) {
      const parameter = name.length > 64 ? 'filter' : `filter[${name}]`
      fail(`Filtering by ${describeName(name)} is not allowed`, parameter)
    }
    // A blank `filter[status]=` is no filter, whichever operator it would imply
    if (isEmpty(raw)) continue
    const field = rules.field(name)
    const entries: [string, unknown][] = isPlainObject(raw)
      ? Object.entries(raw)
      : [[Array.isArray(raw) ? 'in' : 'eq', raw]]
    for (const [operator, value] of entries) {
      const parameter = isPlainObject(raw) ? `filter[${name}][${operator}]` : `filter[${name}]`
      if (!OPERATORS.includes(operator as FilterOperator)) {
        fail(`Unknown filter operator ${describeName(operator)} on "${name}"`, parameter)
      }
      if (!allowed.has(operator as FilterOperator)) {
        fail(`Operator "${operator}" is not allowed on filter "${name}"`, parameter)
      }
      if (isEmpty(value)) continue
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
      return coerceValue(value, 'boolean', parameter)
    case 'contains':
    case 'startsWith':
      if (typeof value !== 'string' && typeof value !== 'number') {
        fail(
          `Invalid value for ${parameter}: expected a string, received ${describe(value)}`,
          parameter
        )
      }
      return coerceValue(String(value), 'string', parameter)
    default:
      if (Array.isArray(value) || isPlainObject(value)) {
        fail(`Invalid value for ${parameter}: expected a single value`, parameter)
      }
      return coerce(value, field, parameter)
  }
}

function positive(value: unknown, parameter: string): number | undefined {
  if (isEmpty(value)) return undefined
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d{1,16}\s*$/.test(value)
        ? Number(value)
        : Number.NaN
  if (!Number.isSafeInteger(number) || number < 1) {
    fail(
      `Invalid value for ${parameter}: expected a positive integer, received ${describe(value)}`,
      parameter
    )
  }
  return number
}

function optionalString(value: unknown, parameter: string, text = true): string | undefined {
  if (isEmpty(value)) return undefined
  if (typeof value !== 'string') {
    fail(`Invalid value for ${parameter}: expected a string`, parameter)
  }
  // A cursor is checked when it is read (an oversized one is ignored, as the spec says)
  if (!text) return value
  const problem = textProblem(value)
  if (problem) fail(`Invalid value for ${parameter}: expected a string of ${problem}`, parameter)
  return value
}

function sortInput(value: unknown): string | string[] | undefined {
  if (isEmpty(value)) return undefined
  const parts = Array.isArray(value) ? value : [value]
  if (parts.length > MAX_LIST_ITEMS || !parts.every((part) => typeof part === 'string')) {
    fail('Invalid value for sort: expected comma separated fields', 'sort')
  }
  for (const part of parts) optionalString(part, 'sort')
  return parts as string[]
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

  const include = isEmpty(raw.include) ? [] : list(raw.include, 'include')
  for (const relation of include) {
    if (typeof relation !== 'string' || !rules.includable.has(relation)) {
      fail(`Including ${describeName(relation)} is not allowed`, 'include')
    }
  }

  let sort = parseSort(sortInput(raw.sort))
  for (const { field } of sort) {
    if (!rules.sortable.has(field)) fail(`Sorting by ${describeName(field)} is not allowed`, 'sort')
  }
  if (sort.length === 0) sort = rules.defaultSort

  const paginate = raw.paginate ?? {}
  if (!isPlainObject(paginate)) {
    fail('Invalid "paginate": expected paginate[first], paginate[after], ...', 'paginate')
  }

  const page = positive(raw.page, 'page') ?? 1
  const perPage = clamp(positive(raw.perPage, 'perPage')) ?? rules.defaultPageSize
  // The offset (page - 1) * perPage is bound as an integer: keep it one
  if (!Number.isSafeInteger((page - 1) * perPage)) {
    fail(`Invalid value for page: ${page} is past the last page any table has`, 'page')
  }
  return {
    filters: parseFilters(raw.filter, rules),
    search: search || undefined,
    include: include as string[],
    sort,
    page,
    perPage,
    paginate: {
      first: clamp(positive(paginate.first, 'paginate[first]')),
      last: clamp(positive(paginate.last, 'paginate[last]')),
      after: optionalString(paginate.after, 'paginate[after]', false),
      before: optionalString(paginate.before, 'paginate[before]', false),
    },
  }
}
