/**
 * The WHERE side of a request: filter conditions, search and includes.
 */
import { bindValue, dialectOf } from './adapters/lucid.ts'
import type { QueryBuilderLike } from './adapters/query_builder.ts'
import type { ResolvedField } from './input.ts'
import type { FilterCondition, NormalizedInput } from './types.ts'

function escapeLike(value: string) {
  return value.replace(/[!%_]/g, (char) => `!${char}`)
}

function applyCondition(query: QueryBuilderLike, condition: FilterCondition, field: ResolvedField) {
  const column = field.column
  const bind = (value: unknown) => bindValue(query, value, field.type)
  const value = condition.value
  const values = () => (value as unknown[]).map(bind)
  switch (condition.operator) {
    case 'eq':
      return query.where(column, bind(value))
    case 'ne':
      return query.whereNot(column, bind(value))
    case 'gt':
      return query.where(column, '>', bind(value))
    case 'gte':
      return query.where(column, '>=', bind(value))
    case 'lt':
      return query.where(column, '<', bind(value))
    case 'lte':
      return query.where(column, '<=', bind(value))
    case 'in':
      return query.whereIn(column, values())
    case 'notIn':
      return query.whereNotIn(column, values())
    case 'between': {
      const [from, to] = values()
      return query.whereBetween(column, [from, to])
    }
    case 'contains':
      return contains(query, column, value as string, 'whereRaw')
    case 'startsWith':
      return query.whereRaw(`?? LIKE ? ESCAPE '!'`, [column, `${escapeLike(value as string)}%`])
    case 'isNull':
      return value ? query.whereNull(column) : query.whereNotNull(column)
    case 'notNull':
      return value ? query.whereNotNull(column) : query.whereNull(column)
  }
}

/**
 * Case-insensitive substring match on every dialect: ILIKE on PostgreSQL,
 * LOWER() LIKE elsewhere.
 */
function contains(
  query: QueryBuilderLike,
  column: string,
  value: string,
  method: 'whereRaw' | 'orWhereRaw'
) {
  const pattern = `%${escapeLike(value.toLowerCase())}%`
  if (dialectOf(query) === 'postgres') {
    return query[method](`CAST(?? AS text) ILIKE ? ESCAPE '!'`, [column, pattern])
  }
  return query[method](`LOWER(??) LIKE ? ESCAPE '!'`, [column, pattern])
}

/**
 * Applies a request's filters, search and includes to a query, each value
 * bound as its field's type on the query's dialect.
 */
export function applyConditions(
  query: QueryBuilderLike,
  input: NormalizedInput,
  field: (name: string) => ResolvedField,
  searchable: readonly string[]
) {
  for (const condition of input.filters) {
    applyCondition(query, condition, field(condition.field))
  }
  const search = input.search
  if (search) {
    query.where((group) => {
      for (const name of searchable) {
        contains(group, field(name).column, search, 'orWhereRaw')
      }
    })
  }
  if (input.include.length) {
    const preload = (query as { preload?: unknown }).preload
    if (typeof preload !== 'function') {
      throw new TypeError('"include" needs a Lucid model query; this query cannot preload')
    }
    for (const relation of input.include) preload.call(query, relation)
  }
  return query
}
