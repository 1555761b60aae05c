import app from '@adonisjs/core/services/app'
import type { LucidModel } from '@adonisjs/lucid/types/model'
import {
  LucidAdapter,
  bindValue,
  dialectOf,
  orderByColumn,
  type LucidQuery,
} from './adapters/lucid.ts'
import { encodeCursor, keysetFingerprint, KeysetDate, readCursor } from './cursor.ts'
import debug from './debug.ts'
import { defineConfig } from './define_config.ts'
import { KeysetAdapterException } from './errors.ts'
import { parseInput, type ParseRules, type ResolvedField } from './input.ts'
import {
  buildKeyset,
  extractCursorValues,
  parseSort,
  planSegments,
  reverseKeyset,
  stripPreciseColumns,
} from './keyset.ts'
import type {
  CursorPage,
  CursorValues,
  FieldDefinition,
  FilterCondition,
  FilterDefinition,
  FilterInput,
  KeysetAdapter,
  KeysetSegment,
  NormalizedInput,
  OffsetPage,
  PageOptions,
  PaginationConfig,
  ResolvedKeysetColumn,
} from './types.ts'

/**
 * A plain table a definition can describe instead of a model.
 */
export interface TableSource {
  table: string
  primaryKey?: string
}

type Source = LucidModel | TableSource

function isModel(source: Source): source is LucidModel {
  return typeof source === 'function'
}

const REQUIRED_ADAPTER_METHODS = [
  'getResult',
  'getPrimaryKey',
  'applyKeysetPagination',
  'applyKeysetOrderAndLimit',
] as const

function escapeLike(value: string) {
  return value.replace(/[!%_]/g, (char) => `!${char}`)
}

/**
 * Applies what a request asks for (filters, search, includes, sort, pages)
 * to Lucid queries, within what a definition declares. Create one with
 * `defineFilters(Model, {...})`.
 */
export class FilterRunner<Row = any> {
  #source: Source
  #definition: FilterDefinition
  #config?: PaginationConfig
  #adapter: KeysetAdapter
  #fields = new Map<string, ResolvedField>()

  constructor(
    source: Source,
    definition: FilterDefinition,
    options: { config?: PaginationConfig; adapter?: KeysetAdapter } = {}
  ) {
    this.#source = source
    this.#definition = definition
    this.#config = options.config
    this.#adapter =
      options.adapter ??
      new LucidAdapter({ primaryKey: isModel(source) ? undefined : source.primaryKey })
  }

  /** The definition this runner enforces */
  get definition(): FilterDefinition {
    return this.#definition
  }

  /**
   * A copy of this runner with another config, adapter or (merged) definition.
   */
  with(options: {
    config?: PaginationConfig
    adapter?: KeysetAdapter
    definition?: Partial<FilterDefinition>
  }): FilterRunner<Row> {
    return new FilterRunner<Row>(
      this.#source,
      { ...this.#definition, ...options.definition },
      { config: options.config ?? this.#config, adapter: options.adapter ?? this.#adapter }
    )
  }

  #appConfig(): PaginationConfig {
    if (this.#config) return this.#config
    const fromApp = app?.config?.get<Partial<PaginationConfig> | undefined>('pagination', undefined)
    return defineConfig(fromApp ?? {})
  }

  #table(): string | undefined {
    if (isModel(this.#source)) {
      this.#source.boot()
      return this.#source.table
    }
    return this.#source.table
  }

  /**
   * The column, type and nullability of a field, from the definition and the model.
   */
  field(name: string): ResolvedField {
    const known = this.#fields.get(name)
    if (known) return known
    const declared = this.#definition.fields?.[name]
    const options: FieldDefinition =
      typeof declared === 'string' ? { type: declared } : (declared ?? {})
    let column = options.column ?? name
    let type = options.type
    if (isModel(this.#source)) {
      this.#source.boot()
      const definition = this.#source.$getColumn(name)
      if (definition) {
        column = options.column ?? definition.columnName
        const metaType = definition.meta?.type
        if (!type && (metaType === 'datetime' || metaType === 'date')) type = metaType
      }
    }
    const table = this.#table()
    const resolved: ResolvedField = {
      field: name,
      column: table && !column.includes('.') ? `${table}.${column}` : column,
      // An undeclared primary key keeps its driver type (numbers, bigint strings, uuids)
      type: type ?? (name === this.#primaryKeyField() ? undefined : 'string'),
      nullable: options.nullable ?? false,
    }
    resolved.few =
      (options.distinct ??
        (resolved.type === 'string' || resolved.type === 'boolean' ? 'few' : 'many')) === 'few'
    this.#fields.set(name, resolved)
    return resolved
  }

  #primaryKeyField(): string {
    if (isModel(this.#source)) return this.#source.primaryKey
    return this.#source.primaryKey ?? this.#definition.primaryKey ?? 'id'
  }

  #rules(): ParseRules {
    const config = this.#appConfig()
    const maxPageSize = this.#definition.maxPageSize ?? config.maxPageSize
    const filterable = new Map(
      Object.entries(this.#definition.filterable ?? {}).map(([field, operators]) => [
        field,
        new Set(operators ?? []),
      ])
    )
    return {
      field: (name) => this.field(name),
      filterable,
      searchable: [...(this.#definition.searchable ?? [])],
      sortable: new Set(this.#definition.sortable ?? []),
      includable: new Set(this.#definition.includable ?? []),
      defaultSort: parseSort(this.#definition.defaultSort),
      defaultPageSize: Math.min(config.defaultPageSize, maxPageSize),
      maxPageSize,
    }
  }

  /**
   * Validates structured input or `ctx.request.qs()`; throws a 400 naming
   * anything undeclared or uncoercible.
   */
  parse(input: FilterInput | Record<string, unknown> = {}, options: PageOptions = {}) {
    return parseInput(input, this.#rules(), options.trustedPageSize)
  }

  #query(entity: unknown): LucidQuery {
    if (typeof entity === 'function' && typeof (entity as any).query === 'function') {
      return (entity as LucidModel).query()
    }
    if (entity === undefined && isModel(this.#source)) return this.#source.query()
    return entity
  }

  #applyCondition(query: LucidQuery, condition: FilterCondition) {
    const field = this.field(condition.field)
    const column = field.column
    const bind = (value: unknown) => bindValue(query, value, field.type)
    const value = condition.value
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
        return query.whereIn(column, (value as unknown[]).map(bind))
      case 'notIn':
        return query.whereNotIn(column, (value as unknown[]).map(bind))
      case 'between':
        return query.whereBetween(column, (value as unknown[]).map(bind))
      case 'contains':
        return this.#contains(query, column, value as string, 'where')
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
  #contains(query: LucidQuery, column: string, value: string, method: 'where' | 'orWhere') {
    const pattern = `%${escapeLike(value.toLowerCase())}%`
    const raw = method === 'where' ? 'whereRaw' : 'orWhereRaw'
    if (dialectOf(query) === 'postgres') {
      return query[raw](`CAST(?? AS text) ILIKE ? ESCAPE '!'`, [column, pattern])
    }
    return query[raw](`LOWER(??) LIKE ? ESCAPE '!'`, [column, pattern])
  }

  #applyFilters(query: LucidQuery, input: NormalizedInput) {
    for (const condition of input.filters) this.#applyCondition(query, condition)
    if (input.search) {
      const searchable = this.#definition.searchable ?? []
      query.where((group: LucidQuery) => {
        for (const name of searchable) {
          this.#contains(group, this.field(name).column, input.search!, 'orWhere')
        }
      })
    }
    if (input.include.length) {
      if (typeof query.preload !== 'function') {
        throw new TypeError('"include" needs a Lucid model query; this query cannot preload')
      }
      for (const relation of input.include) query.preload(relation)
    }
    return query
  }

  #keyset(input: NormalizedInput, primaryKey: string): ResolvedKeysetColumn[] {
    return buildKeyset(input.sort, primaryKey).map((column) => {
      const field = this.field(column.field)
      return {
        ...column,
        column: field.column,
        type: field.type,
        nullable: field.nullable,
        few: field.few,
      }
    })
  }

  #applySort(query: LucidQuery, input: NormalizedInput) {
    const primaryKey = this.#primaryKeyField()
    for (const column of this.#keyset(input, primaryKey)) {
      orderByColumn(query, column.column, column.direction, column.nullable)
    }
    return query
  }

  /**
   * Applies filters, search, includes and the sort (with the primary key as
   * tiebreaker) to a query; pages are the caller's.
   */
  apply<Q extends LucidQuery>(query: Q, input: FilterInput | Record<string, unknown> = {}): Q {
    const normalized = this.parse(input)
    this.#applyFilters(query, normalized)
    return this.#applySort(query, normalized)
  }

  /**
   * `apply` under a definition given at call time (merged over this one), for
   * rules that depend on the request, e.g. fields only an admin may filter.
   */
  applyDynamic<Q extends LucidQuery>(
    query: Q,
    input: FilterInput | Record<string, unknown> = {},
    definition: Partial<FilterDefinition> = {}
  ): Q {
    return this.with({ definition }).apply(query, input)
  }

  /**
   * An offset page with the total count, through Lucid's `paginate`.
   */
  async findAndCount(
    entity?: unknown,
    input: FilterInput | Record<string, unknown> = {},
    options: PageOptions = {}
  ): Promise<OffsetPage<Row>> {
    const normalized = this.parse(input, options)
    const query = this.#query(entity)
    this.#applyFilters(query, normalized)
    this.#applySort(query, normalized)
    options.onQuery?.(query)
    const paginator = await query.paginate(normalized.page, normalized.perPage)
    return {
      items: paginator.all(),
      total: Number(paginator.total),
      page: normalized.page,
      perPage: normalized.perPage,
      lastPage: Math.max(1, Math.ceil(Number(paginator.total) / normalized.perPage)),
    }
  }

  #validCursor(values: CursorValues | null, keyset: ResolvedKeysetColumn[]) {
    if (!values || values.length !== keyset.length) return null
    const fits = keyset.every((column, index) => {
      const value = values[index]
      if (value === null) return column.nullable
      switch (column.type) {
        case 'date':
        case 'datetime':
          return value instanceof KeysetDate
        case 'number':
        case 'integer':
          return (
            typeof value === 'number' ||
            (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value))
          )
        case 'boolean':
          return typeof value === 'boolean'
        case 'string':
          return typeof value === 'string'
        default:
          return typeof value === 'string' || typeof value === 'number'
      }
    })
    return fits ? values : null
  }

  /**
   * A keyset (cursor) page: stable under inserts, as fast at depth 500,000 as
   * on page 1. `after` wins over `before`; an unusable cursor gives page 1.
   */
  async findPage(
    entity?: unknown,
    input: FilterInput | Record<string, unknown> = {},
    options: PageOptions = {}
  ): Promise<CursorPage<Row>> {
    const adapter = this.#adapter as any
    if (REQUIRED_ADAPTER_METHODS.some((method) => typeof adapter?.[method] !== 'function')) {
      throw new KeysetAdapterException()
    }
    const config = this.#appConfig()
    const normalized = this.parse(input, options)
    const base = this.#query(entity)
    this.#applyFilters(base, normalized)

    const keyset = this.#keyset(normalized, this.#adapter.getPrimaryKey(base))
    await this.#adapter.prepareKeysetPage?.(base)
    const fingerprint = keysetFingerprint(keyset)
    const cursorOptions = { fingerprint, secret: config.cursorSecret }
    const { first, last, after, before } = normalized.paginate

    let backward = !after && (before !== undefined || last !== undefined)
    const given = after ?? (backward ? before : undefined)
    const decoded = given ? readCursor(given, cursorOptions) : null
    let values = decoded ? this.#validCursor(decoded.values, keyset) : null
    if (given && !values) {
      debug('ignoring an unusable cursor; returning the first page')
      backward = false
    }
    const direction = backward ? 'before' : 'after'
    const rules = this.#rules()
    const size = (backward ? last : first) ?? first ?? rules.defaultPageSize

    const effective = backward ? reverseKeyset(keyset) : keyset
    let rows = await this.#readRows(base, effective, planSegments(effective, values), size + 1, {
      segmentEnd: values !== null && decoded?.segmentEnd === direction,
      onQuery: options.onQuery,
    })

    const more = rows.length > size
    const segmentEnd = more && leavesSegment(rows, size, effective)
    rows = rows.slice(0, size)
    const cursors = rows.map((row, index) => {
      const cursor = encodeCursor(extractCursorValues(row, effective), {
        ...cursorOptions,
        segmentEnd: segmentEnd && index === size - 1 ? direction : undefined,
      })
      stripPreciseColumns(row, effective.length)
      return cursor
    })
    if (backward) {
      rows.reverse()
      cursors.reverse()
    }
    const hasNext = backward ? values !== null : more
    const hasPrev = backward ? more : values !== null
    return {
      items: rows,
      hasNext,
      hasPrev,
      nextCursor: hasNext ? (cursors.at(-1) ?? null) : null,
      prevCursor: hasPrev ? (cursors[0] ?? null) : null,
      startCursor: cursors[0] ?? null,
      endCursor: cursors.at(-1) ?? null,
      ...(options.withTotal ? { total: await this.#count(base) } : {}),
    }
  }

  /**
   * Up to `limit` rows of a page's segments in keyset order: in one statement
   * when the adapter combines them (a tie and what lies beyond it, a NULL
   * block), otherwise one after the other, each only while the page is short.
   */
  async #readRows(
    base: LucidQuery,
    keyset: ResolvedKeysetColumn[],
    segments: (KeysetSegment | null)[],
    limit: number,
    { segmentEnd, onQuery }: { segmentEnd: boolean; onQuery?: PageOptions['onQuery'] }
  ): Promise<any[]> {
    const adapter = this.#adapter
    const combined =
      segments.length > 1
        ? adapter.combineKeysetSegments?.(
            base.clone(),
            keyset,
            segments as KeysetSegment[],
            limit,
            { segmentEnd }
          )
        : null
    if (combined) {
      onQuery?.(combined)
      const rows = await adapter.getResult(combined)
      // A combined read may come back empty when it cannot answer (a guarded read whose
      // guard failed): the segments are then read one by one
      if (rows.length > 0) return rows
    }
    let rows: any[] = []
    for (const segment of segments) {
      if (rows.length >= limit) break
      const query = base.clone()
      if (segment) adapter.applyKeysetPagination(query, keyset, segment)
      adapter.applyKeysetOrderAndLimit(query, keyset, limit - rows.length, segment)
      onQuery?.(query)
      rows = rows.concat(await adapter.getResult(query))
    }
    return rows
  }

  async #count(query: LucidQuery): Promise<number> {
    const count = query.clone().clearOrder().clearLimit().clearOffset().clearSelect()
    const rows = await (typeof count.pojo === 'function'
      ? count.count('* as total').pojo()
      : count.count('* as total'))
    return Number(rows[0]?.total ?? 0)
  }
}

/**
 * Whether the row fetched after a page's last row lies in another segment than
 * that row: past a few-valued leading column's tie, or across a nullable
 * leading column's NULL block. Dates compare with full precision.
 */
function leavesSegment(rows: any[], size: number, keyset: ResolvedKeysetColumn[]) {
  const [lead] = keyset
  if (!lead.few && !lead.nullable) return false
  const [last] = extractCursorValues(rows[size - 1], [lead])
  const [next] = extractCursorValues(rows[size], [lead])
  if ((last === null) !== (next === null)) return true
  if (!lead.few || keyset.length === 1 || last === null) return false
  if (last instanceof KeysetDate && next instanceof KeysetDate) {
    return last.precise !== undefined && next.precise !== undefined
      ? last.precise !== next.precise
      : last.getTime() !== next.getTime()
  }
  return last !== next
}

/**
 * Declares what requests may do with a model (or a plain `{ table }`):
 * filterable fields and operators, searchable fields, includable relations,
 * sortable fields, the default sort and the page cap.
 */
export function defineFilters<Model extends LucidModel>(
  model: Model,
  definition: FilterDefinition<Extract<keyof InstanceType<Model>, string>>
): FilterRunner<InstanceType<Model>>
export function defineFilters<Row = Record<string, unknown>>(
  table: TableSource,
  definition: FilterDefinition
): FilterRunner<Row>
export function defineFilters(source: Source, definition: FilterDefinition): FilterRunner {
  return new FilterRunner(source, definition)
}
