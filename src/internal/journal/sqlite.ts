/**
 * The SQLite journal: `@effect/sql-sqlite-node` on one file, WAL with `synchronous = FULL` (a committed write
 * survives a power cut, and one fsync of the WAL covers a whole group commit).
 *
 * @internal
 */
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as Journal from "../../Journal.js"
import { JournalError } from "../../Journal.js"
import * as Sql from "./sql.js"

/** The first 16 bytes of every SQLite database file. */
const HEADER = "SQLite format 3\u0000"

/**
 * Refuses a file that exists and is not SQLite before the driver opens it (it would fail later, on the first
 * statement, with a less useful message). A missing or empty file becomes a new journal.
 */
const checkHeader = (filename: string): Effect.Effect<void, JournalError> =>
  Effect.suspend(() => {
    if (filename === ":memory:" || filename === "") return Effect.void
    let header: string
    try {
      const fd = fs.openSync(filename, "r")
      try {
        const buffer = Buffer.alloc(HEADER.length)
        header = buffer.subarray(0, fs.readSync(fd, buffer, 0, HEADER.length, 0)).toString("latin1")
      } finally {
        fs.closeSync(fd)
      }
    } catch (error) {
      if (typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT") {
        return Effect.void
      }
      return Effect.fail(Sql.toJournalError(`the journal ${filename} could not be opened`, error))
    }
    return header.length === 0 || header === HEADER ? Effect.void : Effect.fail(
      new JournalError({
        reason: "Corrupt",
        message: `the journal ${filename} is not a SQLite database (its first bytes are ${
          JSON.stringify(header.slice(0, 16))
        })`
      })
    )
  })

/** Sets the connection up for durability and brings the tables to this version. */
export const prepare = (sql: SqlClient.SqlClient, options: Journal.SqliteOptions): Effect.Effect<void, JournalError> =>
  Effect.zipRight(
    Effect.all([
      sql.unsafe("PRAGMA synchronous = FULL"),
      sql.unsafe(
        `PRAGMA busy_timeout = ${Math.round(Duration.toMillis(Duration.decode(options.busyTimeout ?? "5 seconds")))}`
      )
    ], { discard: true }).pipe(Sql.journalErrors(`the journal ${options.filename} could not be opened`)),
    Sql.migrate(sql, "sqlite", Sql.tables())
  )

/** The journal over an open SQLite client (the tests open one themselves, to reach its connection). */
export const make = (
  sql: SqlClient.SqlClient,
  options: Journal.SqliteOptions
): Effect.Effect<Journal.Journal.Service, JournalError, Scope.Scope> =>
  Effect.zipRight(prepare(sql, options), Sql.journal(sql, "sqlite", Sql.tables(), options))

/** The SQLite client of a journal file, with the file checked first. */
export const client = (filename: string): Effect.Effect<SqlClient.SqlClient, JournalError, Scope.Scope> =>
  Effect.zipRight(
    checkHeader(filename),
    Layer.build(SqliteClient.layer({ filename })).pipe(
      Effect.map(Context.get(SqlClient.SqlClient)),
      Sql.journalErrors(`the journal ${filename} could not be opened`)
    )
  )

export const layer = (options: Journal.SqliteOptions): Layer.Layer<Journal.Journal, JournalError> =>
  Layer.scoped(Journal.Journal, Effect.flatMap(client(options.filename), (sql) => make(sql, options)))
