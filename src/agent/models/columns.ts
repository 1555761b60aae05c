import { toDate } from '../store/lucid.ts'

/** Reads a stored date the same way on every dialect (SQLite keeps epoch ms) */
export const consumeDate = toDate

/** JSON kept in a text column */
export const jsonColumn = {
  prepare: (value: unknown) =>
    value === null || value === undefined ? null : JSON.stringify(value),
  consume: (value: unknown) =>
    value === null || value === undefined ? null : JSON.parse(String(value)),
}

/** SQLite and MariaDB answer 0/1 for booleans */
export const consumeBoolean = (value: unknown) => Boolean(Number(value))

/** bigint and integer columns come back as strings on some drivers */
export const consumeNumber = (value: unknown) =>
  value === null || value === undefined ? null : Number(value)
