import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'
import { ConsoleSearchUnavailableException } from '../errors.ts'

/**
 * Words MariaDB/MySQL's FULLTEXT index leaves out by default: InnoDB's
 * stopwords, and words under `innodb_ft_min_token_size` (3). A required
 * term the index lacks matches nothing, so these are checked with LIKE.
 */
const INNODB_STOPWORDS = new Set(
  'a about an are as at be by com de en for from how i in is it la of on or that the this to was what when where who will with und www'.split(
    ' '
  )
)
const INNODB_MIN_TOKEN = 3

type Builder = ModelQueryBuilderContract<any, any>

/**
 * Restricts `builder` (over `console_entries`) to entries whose summary has
 * every word. `inIdOrder` asks SQLite to walk the entries by id and check
 * each against the matches, instead of reading every match first: for a
 * search bounded to the newest entries.
 */
export function whereSummaryHas(
  builder: Builder,
  dialect: string,
  words: string[],
  { inIdOrder = false }: { inIdOrder?: boolean } = {}
) {
  if (dialect === 'postgres') {
    // the migration's generated tsvector column, behind its GIN index
    builder.whereRaw(`summary_search @@ plainto_tsquery('simple', ?)`, [words.join(' ')])
  } else if (dialect === 'mysql') {
    const indexed = words.filter(
      (word) => word.length >= INNODB_MIN_TOKEN && !INNODB_STOPWORDS.has(word)
    )
    // `*`: a word also matches the start of an indexed word (MariaDB keeps `console_entries` whole)
    if (indexed.length) {
      builder.whereRaw('MATCH (summary) AGAINST (? IN BOOLEAN MODE)', [
        indexed.map((word) => `+${word}*`).join(' '),
      ])
    }
    for (const word of words.filter((each) => !indexed.includes(each))) {
      builder.whereRaw(`summary LIKE ? ESCAPE '!'`, [`%${word.replace(/[!%_]/g, '!$&')}%`])
    }
  } else {
    // each word a quoted FTS5 string: no operator, column filter or prefix syntax
    const match = words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' ')
    // the unary + keeps SQLite from driving the read from the list of matches
    builder.whereRaw(
      `${inIdOrder ? '+' : ''}console_entries.rowid IN (SELECT rowid FROM console_entries_search WHERE console_entries_search MATCH ?)`,
      [match]
    )
  }
}

/**
 * A search against a database whose search migration has not run is a 503
 * naming the migration; other errors pass unchanged.
 */
export function searchUnavailable(error: any): never {
  const message = String(error?.message ?? '')
  if (
    /console_entries_search|summary_search/.test(message) ||
    error?.errno === 1191 ||
    error?.code === 'ER_FT_MATCHING_KEY_NOT_FOUND'
  ) {
    throw new ConsoleSearchUnavailableException(
      'Search needs the console_entries_search migration: run "node ace configure adonis-atrium" to publish it, then "node ace migration:run"'
    )
  }
  throw error
}

/** Whether the console_entries_search migration has run on this connection */
export async function hasSearchIndex(client: QueryClientContract) {
  const dialect = client.dialect.name
  if (dialect === 'postgres') return client.schema.hasColumn('console_entries', 'summary_search')
  if (dialect === 'mysql') {
    const row = await client
      .from('information_schema.statistics')
      .whereRaw('table_schema = database()')
      .where('table_name', 'console_entries')
      .where('index_name', 'console_entries_summary_search')
      .count('* as total')
      .first()
    return Number(row?.total ?? 0) > 0
  }
  return client.schema.hasTable('console_entries_search')
}
