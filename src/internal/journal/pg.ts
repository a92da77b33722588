/**
 * The Postgres journal: `@effect/sql-pg` (node-postgres), the tables in a schema of their own if asked, leases on
 * the database's clock.
 *
 * @internal
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Journal from "../../Journal.js"
import { JournalError } from "../../Journal.js"
import * as Sql from "./sql.js"

/** A plain identifier: no quoting games in a name that is spliced into every statement. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

const redacted = (value: string | Redacted.Redacted | undefined): Redacted.Redacted | undefined =>
  value === undefined ? undefined : Redacted.isRedacted(value) ? value : Redacted.make(value)

/** The Postgres client of a journal, connected (or failed `Unavailable`) within `connectTimeout`. */
export const client = (options: Journal.PgOptions): Effect.Effect<SqlClient.SqlClient, JournalError, Scope.Scope> =>
  Layer.build(PgClient.layer({
    url: redacted(options.url),
    host: options.host,
    port: options.port,
    database: options.database,
    username: options.username,
    password: redacted(options.password),
    ssl: options.ssl,
    connectTimeout: options.connectTimeout ?? "5 seconds",
    maxConnections: options.maxConnections ?? 10,
    applicationName: options.applicationName ?? "effect-agent-tools/journal"
  })).pipe(
    Effect.map(Context.get(SqlClient.SqlClient)),
    Sql.journalErrors("the journal's database could not be reached")
  )

/** Creates the schema if asked and brings the tables to this version. */
export const prepare = (sql: SqlClient.SqlClient, options: Journal.PgOptions): Effect.Effect<void, JournalError> =>
  Effect.gen(function*() {
    const schema = options.schema
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
      return yield* new JournalError({
        reason: "Invalid",
        message: `the journal's schema name ${
          JSON.stringify(schema)
        } is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)`
      })
    }
    if (schema !== undefined) {
      yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`.pipe(
        Sql.journalErrors(`the journal's schema ${schema} could not be created`)
      )
    }
    yield* Sql.migrate(sql, "pg", Sql.tables(schema))
  })

/** The journal over a connected client. */
export const make = (
  sql: SqlClient.SqlClient,
  options: Journal.PgOptions
): Effect.Effect<Journal.Journal.Service, JournalError, Scope.Scope> =>
  Effect.zipRight(prepare(sql, options), Sql.journal(sql, "pg", Sql.tables(options.schema), options))

export const layer = (options: Journal.PgOptions): Layer.Layer<Journal.Journal, JournalError> =>
  Layer.scoped(Journal.Journal, Effect.flatMap(client(options), (sql) => make(sql, options)))
