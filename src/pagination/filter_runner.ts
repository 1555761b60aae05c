import type { LucidModel, ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'
import { LucidAdapter, bindValue, dialectOf, orderByColumn } from './adapters/lucid.ts'
import type { QueryBuilderLike } from './adapters/query_builder.ts'
import { bootedPaginationConfig } from './current.ts'
import {
  encodeCursor,
  inspectCursor,
  keysetFingerprint,
  KeysetDate,
  type DecodedCursor,
} from './cursor.ts'
import debug from './debug.ts'
import { resolvePaginationConfig } from './define_config.ts'
import {
  InvalidPaginationQueryException,
  KeysetAdapterException,
  PaginationConfigException,
} from './errors.ts'
import { parseInput, type ParseRules, type ResolvedField } from './input.ts'
import {
  buildKeyset,
  extractCursorValues,
  parseSort,
  planSegments,
  reverseKeyset,
  stripPreciseColumns,
} from './keyset.ts'
import { cursorValue, expectation } from './values.ts'
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

/**
 * Whether an adapter (possibly handed over untyped) has the four keyset methods.
 */
function isKeysetAdapter(adapter: unknown): adapter is KeysetAdapter {
  if (!adapter || typeof adapter !== 'object') return false
  const methods = adapter as Record<(typeof REQUIRED_ADAPTER_METHODS)[number], unknown>
  return REQUIRED_ADAPTER_METHODS.every((method) => typeof methods[method] === 'function')
}

/** What the request's input may be: structured, or `ctx.request.qs()` */
type Input = FilterInput | Record<string, unknown>

/** The rows a query resolves to */
type RowOf<Query> = Query extends PromiseLike<(infer Row)[]> ? Row : never

/** What `findPage` and `findAndCount` page: a model class or a query */
type Entity = LucidModel | QueryBuilderLike

function escapeLike(value: string) {
  return value.replace(/[!%_]/g, (char) => `!${char}`)
}

/**
 * Applies what a request asks for (filters, search, includes, sort, pages)
 * to Lucid queries, within what a definition declares. Create one with
 * `defineFilters(Model, {...})`.
 */
export class FilterRunner<Row = unknown> {
  #source: Source
  #definition: FilterDefinition
  #config?: Readonly<PaginationConfig>
  #adapter: KeysetAdapter | undefined
  #fields = new Map<string, ResolvedField>()
  /** Parse rules of the last config they were built for (the booted one, normally) */
  #rules?: { config: Readonly<PaginationConfig>; rules: ParseRules }

  constructor(
    source: Source,
    definition: FilterDefinition,
    options: { config?: Partial<PaginationConfig>; adapter?: KeysetAdapter } = {}
  ) {
    this.#source = source
    this.#definition = definition
    this.#config = options.config ? resolvePaginationConfig(options.config) : undefined
    this.#adapter = options.adapter
  }

  /** The definition this runner enforces */
  get definition(): FilterDefinition {
    return this.#definition
  }

  /** The keyset adapter: the one given, else a Lucid adapter made on first use */
  get #keysetAdapter(): KeysetAdapter {
    this.#adapter ??= new LucidAdapter({
      primaryKey: isModel(this.#source) ? undefined : this.#primaryKeyField(),
    })
    return this.#adapter
  }

  /**
   * A copy of this runner with other options (validated like config/pagination.ts),
   * another adapter or a (merged) definition.
   */
  with(options: {
    config?: Partial<PaginationConfig>
    adapter?: KeysetAdapter
    definition?: Partial<FilterDefinition>
  }): FilterRunner<Row> {
    return new FilterRunner<Row>(
      this.#source,
      { ...this.#definition, ...options.definition },
      { config: options.config ?? this.#config, adapter: options.adapter ?? this.#adapter }
    )
  }

  /** The explicit config, else the one the provider resolved at boot */
  #appConfig(): Readonly<PaginationConfig> {
    return this.#config ?? bootedPaginationConfig()
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
      type: type ?? (name === this.#primaryKeyField() ? this.#primaryKeyType() : 'string'),
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

  /**
   * An undeclared primary key is an auto-increment INTEGER (Lucid's
   * `increments()`), or a string for a model that assigns its own keys.
   */
  #primaryKeyType() {
    return isModel(this.#source) && this.#source.selfAssignPrimaryKey ? 'string' : 'integer'
  }

  #parseRules(): ParseRules {
    const config = this.#appConfig()
    if (this.#rules?.config === config) return this.#rules.rules
    const maxPageSize = this.#definition.maxPageSize ?? config.maxPageSize
    const filterable = new Map(
      Object.entries(this.#definition.filterable ?? {}).map(([field, operators]) => [
        field,
        new Set(operators ?? []),
      ])
    )
    const rules: ParseRules = {
      field: (name) => this.field(name),
      filterable,
      searchable: [...(this.#definition.searchable ?? [])],
      sortable: new Set(this.#definition.sortable ?? []),
      includable: new Set(this.#definition.includable ?? []),
      defaultSort: parseSort(this.#definition.defaultSort),
      defaultPageSize: Math.min(config.defaultPageSize, maxPageSize),
      maxPageSize,
    }
    this.#rules = { config, rules }
    return rules
  }

  /**
   * Validates structured input or `ctx.request.qs()`; throws a 400 naming
   * anything undeclared or uncoercible.
   */
  parse(input: Input = {}, options: PageOptions = {}) {
    return parseInput(input, this.#parseRules(), options.trustedPageSize)
  }

  #query(entity: Entity | undefined): QueryBuilderLike {
    if (typeof entity === 'function') return entity.query()
    if (entity !== undefined) return entity
    if (isModel(this.#source)) return this.#source.query()
    throw new TypeError(
      'findPage and findAndCount of a plain table need a query: pass db.from(table) as the entity'
    )
  }

  #applyCondition(query: QueryBuilderLike, condition: FilterCondition) {
    const field = this.field(condition.field)
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
        return this.#contains(query, column, value as string, 'whereRaw')
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
  #contains(
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

  #applyFilters(query: QueryBuilderLike, input: NormalizedInput) {
    for (const condition of input.filters) this.#applyCondition(query, condition)
    const search = input.search
    if (search) {
      const searchable = this.#definition.searchable ?? []
      query.where((group) => {
        for (const name of searchable) {
          this.#contains(group, this.field(name).column, search, 'orWhereRaw')
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

  #applySort(query: QueryBuilderLike, input: NormalizedInput) {
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
  apply<Query extends QueryBuilderLike>(query: Query, input: Input = {}): Query {
    const normalized = this.parse(input)
    this.#applyFilters(query, normalized)
    this.#applySort(query, normalized)
    return query
  }

  /**
   * `apply` under a definition given at call time (merged over this one), for
   * rules that depend on the request, e.g. fields only an admin may filter.
   */
  applyDynamic<Query extends QueryBuilderLike>(
    query: Query,
    input: Input = {},
    definition: Partial<FilterDefinition> = {}
  ): Query {
    return this.with({ definition }).apply(query, input)
  }

  /**
   * An offset page with the total count, through Lucid's `paginate`.
   */
  findAndCount<Model extends LucidModel>(
    entity: Model | ModelQueryBuilderContract<Model>,
    input?: Input,
    options?: PageOptions
  ): Promise<OffsetPage<InstanceType<Model>>>
  findAndCount<Query extends QueryBuilderLike>(
    entity: Query,
    input?: Input,
    options?: PageOptions
  ): Promise<OffsetPage<RowOf<Query>>>
  async findAndCount(
    entity: Entity,
    input: Input = {},
    options: PageOptions = {}
  ): Promise<OffsetPage<unknown>> {
    const normalized = this.parse(input, options)
    const query = this.#query(entity)
    this.#applyFilters(query, normalized)
    this.#applySort(query, normalized)
    options.onQuery?.(query)
    const paginate = (query as { paginate?: unknown }).paginate
    if (typeof paginate !== 'function') {
      throw new TypeError('findAndCount needs a Lucid query builder (one with paginate())')
    }
    const paginator = (await paginate.call(query, normalized.page, normalized.perPage)) as {
      all(): unknown[]
      total: number | string
    }
    const total = Number(paginator.total)
    return {
      items: paginator.all(),
      total,
      page: normalized.page,
      perPage: normalized.perPage,
      lastPage: Math.max(1, Math.ceil(total / normalized.perPage)),
    }
  }

  /**
   * A cursor's values checked against the keyset: null for a cursor to
   * ignore (unreadable or the wrong length: the first page), a 400 naming
   * the parameter for one made under another sort or holding a value that
   * does not fit its column (a forged cursor would otherwise reach SQL).
   */
  #cursorValues(
    given: string,
    parameter: string,
    keyset: ResolvedKeysetColumn[],
    options: { fingerprint: string; secret?: string }
  ): (DecodedCursor & { values: CursorValues }) | null {
    const read = inspectCursor(given, options)
    if (read.kind === 'foreign') {
      throw new InvalidPaginationQueryException(
        `Invalid value for ${parameter}: the cursor was made under another sort. Send the sort of the walk, or start again without a cursor`,
        parameter
      )
    }
    if (read.kind === 'unreadable' || read.cursor.values.length !== keyset.length) return null
    const values = keyset.map((column, index) => {
      const value = read.cursor.values[index]
      if (value === null && column.nullable) return null
      const checked = value === null ? undefined : cursorValue(value, column.type)
      if (checked === undefined) {
        throw new InvalidPaginationQueryException(
          `Invalid value for ${parameter}: its "${column.field}" is not ${value === null ? 'nullable' : expectation(column.type)}`,
          parameter
        )
      }
      return checked
    })
    return { ...read.cursor, values }
  }

  /**
   * A keyset (cursor) page: stable under inserts, as fast at depth 500,000 as
   * on page 1. `after` wins over `before`; an unreadable cursor gives page 1,
   * one made under another sort or holding values that do not fit is a 400.
   */
  findPage<Model extends LucidModel>(
    entity: Model | ModelQueryBuilderContract<Model>,
    input?: Input,
    options?: PageOptions
  ): Promise<CursorPage<InstanceType<Model>>>
  findPage<Query extends QueryBuilderLike>(
    entity: Query,
    input?: Input,
    options?: PageOptions
  ): Promise<CursorPage<RowOf<Query>>>
  async findPage(
    entity: Entity,
    input: Input = {},
    options: PageOptions = {}
  ): Promise<CursorPage<unknown>> {
    const adapter: unknown = this.#keysetAdapter
    if (!isKeysetAdapter(adapter)) throw new KeysetAdapterException()
    const config = this.#appConfig()
    const normalized = this.parse(input, options)
    const base = this.#query(entity)
    this.#applyFilters(base, normalized)

    const keyset = this.#keyset(normalized, adapter.getPrimaryKey(base))
    const fingerprint = keysetFingerprint(keyset)
    const cursorOptions = { fingerprint, secret: config.cursorSecret }
    const { first, last, after, before } = normalized.paginate

    let backward = !after && (before !== undefined || last !== undefined)
    const given = after ?? (backward ? before : undefined)
    const parameter = after ? 'paginate[after]' : 'paginate[before]'
    const decoded = given ? this.#cursorValues(given, parameter, keyset, cursorOptions) : null
    const values = decoded?.values ?? null
    if (given && !values) {
      debug('ignoring an unreadable cursor; returning the first page')
      backward = false
    }
    await adapter.prepareKeysetPage?.(base)
    const direction = backward ? 'before' : 'after'
    const size = (backward ? last : first) ?? first ?? this.#parseRules().defaultPageSize

    const effective = backward ? reverseKeyset(keyset) : keyset
    let rows = await this.#readRows(
      adapter,
      base,
      effective,
      planSegments(effective, values),
      size + 1,
      {
        segmentEnd: values !== null && decoded?.segmentEnd === direction,
        onQuery: options.onQuery,
      }
    )

    const more = rows.length > size
    // A cursor's predicates never match NULL in a column not declared nullable: at the end
    // of such a walk, look once for the rows it could not reach
    if (!more && values !== null) await this.#probeUndeclaredNulls(adapter, base, keyset)
    const segmentEnd = more && leavesSegment(rows, size, effective)
    rows = rows.slice(0, size)
    const cursors = rows.map((row, index) => {
      const rowValues = extractCursorValues(row, effective)
      this.#assertDeclaredNulls(rowValues, effective)
      const cursor = encodeCursor(rowValues, {
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
   * A NULL in a sort column not declared nullable: its rows are ordered where
   * the keyset predicates do not look for them, so a walk would skip them.
   * Said at once, naming the field and the fix.
   */
  #assertDeclaredNulls(values: CursorValues, keyset: ResolvedKeysetColumn[]) {
    keyset.forEach((column, index) => {
      if (values[index] === null && !column.nullable) {
        throw new PaginationConfigException(
          `The sort column "${column.field}" holds NULL but is not declared nullable, so a cursor walk would skip its NULL rows. Declare it in defineFilters: fields: { ${column.field}: { nullable: true } }`
        )
      }
    })
  }

  /**
   * Fails naming the field when a sort column not declared nullable holds
   * NULL among the filtered rows (one query, run where a walk ends).
   */
  async #probeUndeclaredNulls(
    adapter: KeysetAdapter,
    base: QueryBuilderLike,
    keyset: ResolvedKeysetColumn[]
  ) {
    const primaryKey = adapter.getPrimaryKey(base)
    const undeclared = keyset.filter((column) => !column.nullable && column.field !== primaryKey)
    if (undeclared.length === 0) return
    const probe = base.clone().clearOrder().limit(1)
    probe.where((group) => {
      for (const column of undeclared) group.orWhereRaw('?? IS NULL', [column.column])
    })
    const [row] = await adapter.getResult(probe)
    if (row !== undefined) this.#assertDeclaredNulls(extractCursorValues(row, keyset), keyset)
  }

  /**
   * Up to `limit` rows of a page's segments in keyset order: in one statement
   * when the adapter combines them (a tie and what lies beyond it, a NULL
   * block), otherwise one after the other, each only while the page is short.
   */
  async #readRows(
    adapter: KeysetAdapter,
    base: QueryBuilderLike,
    keyset: ResolvedKeysetColumn[],
    segments: (KeysetSegment | null)[],
    limit: number,
    { segmentEnd, onQuery }: { segmentEnd: boolean; onQuery?: PageOptions['onQuery'] }
  ): Promise<unknown[]> {
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
    let rows: unknown[] = []
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

  async #count(query: QueryBuilderLike): Promise<number> {
    const count = query.clone().clearOrder().clearLimit().clearOffset().clearSelect()
    const counted = (count as unknown as { count(column: string): QueryBuilderLike }).count(
      '* as total'
    )
    const pojo = (counted as { pojo?: () => PromiseLike<unknown[]> }).pojo
    const rows = (await (typeof pojo === 'function' ? pojo.call(counted) : counted)) as {
      total?: number | string
    }[]
    return Number(rows[0]?.total ?? 0)
  }
}

/**
 * Whether the row fetched after a page's last row lies in another segment than
 * that row: past a few-valued leading column's tie, or across a nullable
 * leading column's NULL block. Dates compare with full precision.
 */
function leavesSegment(rows: unknown[], size: number, keyset: ResolvedKeysetColumn[]) {
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
 * sortable fields, the default sort and the page cap. The runner reads the
 * config `atrium.pagination` resolved at boot, or the one `with({ config })` gives.
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
