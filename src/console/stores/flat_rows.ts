/**
 * A flush's rows as the SQLite writer thread receives them: one flat array
 * per chunk, `ROW_WIDTH` values a row in the order of bulk_insert.ts's
 * columns. One array per chunk rather than one per row: fewer objects for the
 * app's thread to build, to clone to the thread, and to collect.
 */

/** Values per row: id, batch id, type, summary, status, method, duration, slow, tags, time, content */
export const ROW_WIDTH = 11

/** A flat chunk as an array of rows (the JSON the unpacking statement reads) */
export function rowsOfFlat(values: unknown[]): unknown[][] {
  const rows: unknown[][] = []
  for (let at = 0; at < values.length; at += ROW_WIDTH) rows.push(values.slice(at, at + ROW_WIDTH))
  return rows
}
