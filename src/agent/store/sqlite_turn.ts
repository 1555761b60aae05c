import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { withSqliteStatements, type SqliteStatement } from '../../shared/sqlite_statements.ts'
import { AGENT_TABLES } from './lucid_rows.ts'

const INSERT_THREAD = `insert into ${AGENT_TABLES.threads}
  (id, actor_ref, title, default_agent, created_at, updated_at) values (?, ?, ?, ?, ?, ?)`

const FIND_THREAD = `select * from ${AGENT_TABLES.threads}
  where id = ? and deleted_at is null limit 1`

const INSERT_RUN = `insert into ${AGENT_TABLES.runs}
  (id, thread_id, actor_ref, agent_name, status, steps, created_at) values (?, ?, ?, ?, ?, ?, ?)`

const INSERT_MESSAGE = `insert into ${AGENT_TABLES.messages}
  (thread_id, run_id, role, content, tool_calls, tool_results, attachments, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?)`

const TOUCH_THREAD = `update ${AGENT_TABLES.threads} set updated_at = ? where id = ?`

const LIST_MESSAGES = `select * from ${AGENT_TABLES.messages} where thread_id = ? order by id asc`

/** The connection's cached prepared statement for a SQL text */
type Statement = (sql: string) => SqliteStatement

/** A value as knex binds it for better-sqlite3: dates as epoch ms, booleans as 0/1 */
export function bind(value: unknown) {
  if (value instanceof Date) return value.valueOf()
  if (typeof value === 'boolean') return Number(value)
  return value ?? null
}

export interface ThreadInsert {
  id: string
  actor_ref: string
  title: string | null
  default_agent: string | null
  created_at: Date
  updated_at: Date
}

export interface RunInsert {
  id: string
  thread_id: string
  actor_ref: string
  agent_name: string
  status: string
  steps: number
  created_at: Date
}

export interface MessageInsert {
  thread_id: string
  run_id: string | null
  role: string
  content: string
  tool_calls: string | null
  tool_results: string | null
  attachments: string | null
  created_at: Date
}

/**
 * The statements of a turn's start (thread, run, question, history) as
 * cached better-sqlite3 prepared statements: knex prepares each statement
 * again on every call, which was half the store's time in a turn. They write the values knex would bind, so the rows are
 * the ones the Lucid path writes. Each call takes the connection from the
 * pool like any query, so inside a transaction (a global one in tests
 * included) it runs on that transaction's connection.
 */
export class SqliteTurnStatements {
  #client: () => QueryClientContract

  constructor(client: () => QueryClientContract) {
    this.#client = client
  }

  /** Statements for a better-sqlite3 connection; undefined for any other driver */
  static forClient(client: () => QueryClientContract) {
    return client().dialect.name === 'better-sqlite3' ? new SqliteTurnStatements(client) : undefined
  }

  insertThread(row: ThreadInsert) {
    return this.#use((statement) => this.#insertThread(statement, row))
  }

  findThread(id: string) {
    return this.#use((statement) => statement(FIND_THREAD).get(id) ?? null)
  }

  insertRun(row: RunInsert) {
    return this.#use((statement) => this.#insertRun(statement, row))
  }

  /** Inserts the message and touches its thread in one transaction; the message's id */
  appendMessage(row: MessageInsert) {
    return this.#use((statement, transaction) =>
      transaction(() => this.#insertMessage(statement, row))
    )
  }

  listMessages(threadId: string) {
    return this.#use((statement) => statement(LIST_MESSAGES).all(threadId))
  }

  /**
   * The rows a turn writes when it starts (the thread when new, the run, the
   * question and its thread's `updated_at`) in one transaction: one
   * connection and one commit instead of three round trips through the pool
   * and three commits.
   */
  startTurn(rows: { thread?: ThreadInsert; run: RunInsert; question: MessageInsert }) {
    return this.#use((statement, transaction) =>
      transaction(() => {
        if (rows.thread) this.#insertThread(statement, rows.thread)
        this.#insertRun(statement, rows.run)
        this.#insertMessage(statement, rows.question)
      })
    )
  }

  #insertThread(statement: Statement, row: ThreadInsert) {
    statement(INSERT_THREAD).run(
      row.id,
      row.actor_ref,
      row.title,
      row.default_agent,
      bind(row.created_at),
      bind(row.updated_at)
    )
  }

  #insertRun(statement: Statement, row: RunInsert) {
    statement(INSERT_RUN).run(
      row.id,
      row.thread_id,
      row.actor_ref,
      row.agent_name,
      row.status,
      row.steps,
      bind(row.created_at)
    )
  }

  /** The message's id; its thread's `updated_at` follows it (inside the caller's transaction) */
  #insertMessage(statement: Statement, row: MessageInsert) {
    const inserted = statement(INSERT_MESSAGE).run(
      row.thread_id,
      bind(row.run_id),
      row.role,
      row.content,
      bind(row.tool_calls),
      bind(row.tool_results),
      bind(row.attachments),
      bind(row.created_at)
    )
    statement(TOUCH_THREAD).run(bind(row.created_at), row.thread_id)
    return Number(inserted.lastInsertRowid)
  }

  /** Synchronous better-sqlite3 work with the connection's cached statements */
  #use<T>(work: (statement: Statement, transaction: <R>(body: () => R) => R) => T): Promise<T> {
    return withSqliteStatements(this.#client(), ({ statement, transaction }) =>
      work(statement, transaction)
    )
  }
}
