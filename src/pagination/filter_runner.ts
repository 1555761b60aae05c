import type { LucidModel, ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'
import { LucidAdapter, orderByColumn } from './adapters/lucid.ts'
import type { QueryBuilderLike } from './adapters/query_builder.ts'
import { applyConditions } from './conditions.ts'
import { bootedPaginationConfig } from './current.ts'
import { encodeCursor, keysetFingerprint } from './cursor.ts'
import debug from './debug.ts'
import { resolvePaginationConfig } from './define_config.ts'
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
import {
  assertDeclaredNulls,
  checkCursor,
  countRows,
  leavesSegment,
  probeUndeclaredNulls,
  readRows,
} from './keyset_page.ts'
import type {
  CursorPage,
  FieldDefinition,
  FilterDefinition,
  FilterInput,
  KeysetAdapter,
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

  #applyFilters(query: QueryBuilderLike, input: NormalizedInput) {
    return applyConditions(
      query,
      input,
      (name) => this.field(name),
      this.#definition.searchable ?? []
    )
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
    const decoded = given ? checkCursor(given, parameter, keyset, cursorOptions) : null
    const values = decoded?.values ?? null
    if (given && !values) {
      debug('ignoring an unreadable cursor; returning the first page')
      backward = false
    }
    await adapter.prepareKeysetPage?.(base)
    const direction = backward ? 'before' : 'after'
    const size = (backward ? last : first) ?? first ?? this.#parseRules().defaultPageSize

    const effective = backward ? reverseKeyset(keyset) : keyset
    let rows = await readRows(adapter, base, effective, planSegments(effective, values), size + 1, {
      segmentEnd: values !== null && decoded?.segmentEnd === direction,
      onQuery: options.onQuery,
    })

    const more = rows.length > size
    // A cursor's predicates never match NULL in a column not declared nullable: at the end
    // of such a walk, look once for the rows it could not reach
    if (!more && values !== null) await probeUndeclaredNulls(adapter, base, keyset)
    const segmentEnd = more && leavesSegment(rows, size, effective)
    rows = rows.slice(0, size)
    const cursors = rows.map((row, index) => {
      const rowValues = extractCursorValues(row, effective)
      assertDeclaredNulls(rowValues, effective)
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
      ...(options.withTotal ? { total: await countRows(base) } : {}),
    }
  }
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
