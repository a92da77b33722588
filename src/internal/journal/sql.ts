/**
 * The journal in SQL, one store for SQLite and Postgres: the tables and their migration, the statements of each
 * write, the fencing and lease statements, and the mapping of a driver's errors to `JournalError`.
 *
 * Transactions are run here, not with `SqlClient.withTransaction`: a failed COMMIT (a full disk, a connection
 * killed mid-commit) must fail the waiting writes with a typed error, and `withTransaction` turns a failed COMMIT
 * into a defect. SQLite transactions begin `IMMEDIATE`, so a transaction that reads first (the fencing check)
 * cannot find another process's write in its way at COMMIT.
 *
 * Loaded only by the SQL layers: this module imports `@effect/sql`.
 *
 * @internal
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Journal from "../../Journal.js"
import { JournalError } from "../../Journal.js"
import type { Refusal, Store, Write } from "./service.js"
import * as Service from "./service.js"

export type Dialect = "sqlite" | "pg"

/** The journal's tables, qualified with their Postgres schema when there is one. */
export interface Tables {
  readonly runs: string
  readonly steps: string
  readonly calls: string
  readonly records: string
  readonly decisions: string
  readonly migrations: string
}

export const tables = (schema?: string | undefined): Tables => {
  const name = (table: string) => schema === undefined ? `agent_journal_${table}` : `${schema}.agent_journal_${table}`
  return {
    runs: name("runs"),
    steps: name("steps"),
    calls: name("calls"),
    records: name("records"),
    decisions: name("decisions"),
    migrations: name("migrations")
  }
}

// -------------------------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------------------------

const reasonOf = (code: string | undefined): Journal.JournalErrorReason => {
  if (code === undefined) return "Unavailable"
  // SQLite's result codes, and Postgres's SQLSTATE classes 53 (insufficient resources) and XX (internal)
  if (code.startsWith("SQLITE_FULL") || code === "53100") return "Full"
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT") || code === "XX001" || code === "XX002") {
    return "Corrupt"
  }
  return "Unavailable"
}

/** The driver's error inside an `SqlError` (or a defect thrown by a driver's constructor). */
const driverError = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError" && "cause" in error
    ? error.cause
    : error

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : String(error)

/** A driver's failure as a journal error: `doing` says what the journal was doing, the rest is the driver's. */
export const toJournalError = (doing: string, error: unknown): JournalError => {
  if (error instanceof JournalError) return error
  const driver = driverError(error)
  const code = codeOf(driver)
  return new JournalError({
    reason: reasonOf(code),
    message: `${doing}: ${code === undefined ? "" : `${code}: `}${messageOf(driver)}`,
    cause: driver
  })
}

/**
 * Every way an effect on a driver can end badly, as a journal error: failures, and the defects that drivers and
 * `@effect/sql` raise for what is an environment's fault (a constructor that throws on a file that is not a
 * database, a migration that fails). Interruption stays interruption.
 */
export const journalErrors = (doing: string) =>
<A, R>(
  effect: Effect.Effect<A, unknown, R>
): Effect.Effect<A, JournalError, R> =>
  Effect.catchAllCause(effect, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) return Effect.fail(toJournalError(doing, failure.value))
    const defect = Cause.dieOption(cause)
    return Effect.fail(
      toJournalError(doing, Option.isSome(defect) ? migrationCause(defect.value) : Cause.squash(cause))
    )
  })

/** A migration that fails dies with a `MigrationError` whose `cause` is the driver's error. */
const migrationCause = (defect: unknown): unknown =>
  typeof defect === "object" && defect !== null && "_tag" in defect && defect._tag === "MigrationError" &&
    "cause" in defect && defect.cause !== undefined
    ? defect.cause
    : defect

// -------------------------------------------------------------------------------------------------------------------
// migrations
// -------------------------------------------------------------------------------------------------------------------

const migration1 = (sql: SqlClient.SqlClient, dialect: Dialect, t: Tables) => {
  const big = dialect === "pg" ? "BIGINT" : "INTEGER"
  const id = dialect === "pg" ? "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" : "INTEGER PRIMARY KEY"
  const index = (table: string, name: string) => sql(`${table.split(".").at(-1)}_${name}`)
  return Effect.all([
    sql`CREATE TABLE ${sql(t.runs)} (
      run_id TEXT PRIMARY KEY NOT NULL,
      definitions_hash TEXT NOT NULL,
      tools TEXT NOT NULL,
      options TEXT NOT NULL,
      status TEXT NOT NULL,
      created_at ${sql.literal(big)} NOT NULL,
      updated_at ${sql.literal(big)} NOT NULL,
      lease_owner TEXT,
      lease_expires_at ${sql.literal(big)}
    )`,
    sql`CREATE INDEX ${index(t.runs, "by_lease")} ON ${sql(t.runs)} (status, lease_expires_at)`,
    sql`CREATE INDEX ${index(t.runs, "by_update")} ON ${sql(t.runs)} (updated_at)`,
    sql`CREATE TABLE ${sql(t.steps)} (
      run_id TEXT NOT NULL,
      step INTEGER NOT NULL,
      response TEXT NOT NULL,
      created_at ${sql.literal(big)} NOT NULL,
      PRIMARY KEY (run_id, step)
    )`,
    sql`CREATE TABLE ${sql(t.calls)} (
      run_id TEXT NOT NULL,
      step INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      call_index INTEGER NOT NULL,
      tool TEXT NOT NULL,
      arguments TEXT NOT NULL,
      idempotency_key TEXT,
      replay TEXT,
      attempts INTEGER NOT NULL,
      dispatched_at ${sql.literal(big)},
      outcome TEXT,
      finished_at ${sql.literal(big)},
      PRIMARY KEY (run_id, step, call_id)
    )`,
    sql`CREATE TABLE ${sql(t.records)} (
      id ${sql.literal(id)},
      run_id TEXT NOT NULL,
      step INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      phase TEXT NOT NULL,
      namespace TEXT NOT NULL,
      data TEXT NOT NULL,
      created_at ${sql.literal(big)} NOT NULL
    )`,
    sql`CREATE INDEX ${index(t.records, "by_call")} ON ${sql(t.records)} (run_id, call_id)`,
    sql`CREATE TABLE ${sql(t.decisions)} (
      id ${sql.literal(id)},
      run_id TEXT NOT NULL,
      step INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      action TEXT NOT NULL,
      description TEXT NOT NULL,
      decision TEXT NOT NULL,
      reason TEXT,
      created_at ${sql.literal(big)} NOT NULL
    )`,
    sql`CREATE INDEX ${index(t.decisions, "by_call")} ON ${sql(t.decisions)} (run_id, call_id)`
  ], { discard: true })
}

/** The highest migration the store has run; 0 for a store without the journal's tables. */
const schemaVersion = (sql: SqlClient.SqlClient, dialect: Dialect, t: Tables): Effect.Effect<number, SqlError> =>
  Effect.flatMap(
    dialect === "pg"
      ? sql<{ readonly present: string | null }>`SELECT to_regclass(${t.migrations})::text AS present`
      : sql<{ readonly present: string | null }>`SELECT name AS present FROM sqlite_master
          WHERE type = 'table' AND name = ${t.migrations}`,
    (rows) =>
      rows.length === 0 || rows[0].present === null
        ? Effect.succeed(0)
        : Effect.map(
          sql<{ readonly version: number | string | null }>`SELECT MAX(migration_id) AS version
            FROM ${sql(t.migrations)}`,
          (rows) => Number(rows[0]?.version ?? 0)
        )
  )

const newerSchema = (version: number): JournalError =>
  new JournalError({
    reason: "NewerSchema",
    message: `the journal's tables are at version ${version}, and this version of effect-agent-tools knows up to ` +
      `version ${Journal.SCHEMA_VERSION}: upgrade effect-agent-tools to use this journal (nothing was changed)`
  })

/**
 * Brings the tables to {@link Journal.SCHEMA_VERSION} with `@effect/sql`'s migrator (which on Postgres takes a
 * table lock, so hosts starting together migrate once), refusing a store a newer version migrated: checked before
 * (so nothing is written to it) and after (a newer host that migrated meanwhile).
 */
export const migrate = (
  sql: SqlClient.SqlClient,
  dialect: Dialect,
  t: Tables
): Effect.Effect<void, JournalError> =>
  Effect.gen(function*() {
    const check = Effect.flatMap(
      schemaVersion(sql, dialect, t),
      (version) => version > Journal.SCHEMA_VERSION ? Effect.fail(newerSchema(version)) : Effect.void
    )
    yield* check
    yield* Migrator.make({})({
      loader: Migrator.fromRecord({ "1_journal": migration1(sql, dialect, t) }),
      table: t.migrations
    })
    yield* check
  }).pipe(Effect.provideService(SqlClient.SqlClient, sql), journalErrors("the journal's tables could not be migrated"))

// -------------------------------------------------------------------------------------------------------------------
// the store
// -------------------------------------------------------------------------------------------------------------------

/** Postgres's clock in epoch milliseconds: leases compare against one clock, whatever the hosts' clocks say. */
const PG_NOW = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"

export const store = (sql: SqlClient.SqlClient, dialect: Dialect, t: Tables): Store => {
  const now = (host: number): Fragment => dialect === "pg" ? sql.literal(PG_NOW) : sql`${host}`
  const skipLocked = sql.literal(dialect === "pg" ? "FOR UPDATE SKIP LOCKED" : "")

  /** A statement's text for this dialect; its parameters are given when it runs. */
  const compiled = (statement: { readonly compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
    statement.compile()[0]
  /** A placeholder's value when a statement is compiled for its text only. */
  const _ = null

  /** Runs `body` in one transaction on one connection; any failure, COMMIT's included, rolls back. */
  const transaction = <A>(
    doing: string,
    body: (connection: Connection) => Effect.Effect<A, SqlError>
  ): Effect.Effect<A, JournalError> =>
    Effect.scoped(Effect.gen(function*() {
      const connection = yield* sql.reserve
      // prepared once and kept in the driver's statement cache, like every other statement of a batch
      const run = (statement: string) => connection.execute(statement, [], undefined)
      yield* run(dialect === "sqlite" ? "BEGIN IMMEDIATE" : "BEGIN")
      const exit = yield* Effect.exit(
        Effect.zipLeft(
          Effect.provideService(body(connection), SqlClient.TransactionConnection, [connection, 0] as const),
          run("COMMIT")
        )
      )
      if (Exit.isFailure(exit)) yield* Effect.ignore(run("ROLLBACK"))
      return yield* exit
    })).pipe(journalErrors(doing))

  /**
   * Each write's statement, compiled once for the dialect: a batch runs it on its connection with the write's
   * parameters, without building and compiling a statement per row (on SQLite, that is most of a write's cost).
   * An insert's text and its parameters both come from one list of columns, so they cannot disagree.
   */
  const insert = <W extends Write>(
    table: string,
    columns: ReadonlyArray<Exclude<keyof W, "_tag">>,
    onConflict: string
  ) => ({
    text: compiled(
      sql`INSERT INTO ${sql(table)} AS c ${sql.insert(Object.fromEntries(columns.map((c) => [c, _])))} ${
        sql.literal(onConflict)
      }`
    ),
    parameters: (write: W): ReadonlyArray<unknown> => columns.map((c) => write[c])
  })
  type Of<K extends Write["_tag"]> = Extract<Write, { readonly _tag: K }>
  const inserts = {
    Step: insert<Of<"Step">>(
      t.steps,
      ["run_id", "step", "response", "created_at"],
      "ON CONFLICT (run_id, step) DO NOTHING"
    ),
    Dispatch: insert<Of<"Dispatch">>(
      t.calls,
      [
        "run_id",
        "step",
        "call_id",
        "call_index",
        "tool",
        "arguments",
        "idempotency_key",
        "replay",
        "attempts",
        "dispatched_at"
      ],
      `ON CONFLICT (run_id, step, call_id) DO UPDATE SET attempts = c.attempts + 1,
        dispatched_at = excluded.dispatched_at, idempotency_key = excluded.idempotency_key,
        replay = excluded.replay, tool = excluded.tool, arguments = excluded.arguments`
    ),
    Outcome: insert<Of<"Outcome">>(
      t.calls,
      ["run_id", "step", "call_id", "call_index", "tool", "arguments", "attempts", "outcome", "finished_at"],
      `ON CONFLICT (run_id, step, call_id) DO UPDATE SET outcome = excluded.outcome,
        finished_at = excluded.finished_at WHERE c.outcome IS NULL`
    ),
    Record: insert<Of<"Record">>(
      t.records,
      ["run_id", "step", "call_id", "tool", "phase", "namespace", "data", "created_at"],
      ""
    ),
    Decision: insert<Of<"Decision">>(
      t.decisions,
      ["run_id", "step", "call_id", "tool", "action", "description", "decision", "reason", "created_at"],
      ""
    )
  }
  const setStatus = compiled(sql`UPDATE ${sql(t.runs)} SET status = ${_}, updated_at = ${_} WHERE run_id = ${_}`)
  const touchRun = compiled(sql`UPDATE ${sql(t.runs)} SET updated_at = ${_} WHERE run_id = ${_}`)

  /** A write's statement and its parameters. */
  const statement = (write: Write, touched: number): readonly [string, ReadonlyArray<unknown>] => {
    switch (write._tag) {
      case "Step":
        return [inserts.Step.text, inserts.Step.parameters(write)]
      case "Dispatch":
        return [inserts.Dispatch.text, inserts.Dispatch.parameters(write)]
      case "Outcome":
        return [inserts.Outcome.text, inserts.Outcome.parameters(write)]
      case "Record":
        return [inserts.Record.text, inserts.Record.parameters(write)]
      case "Decision":
        return [inserts.Decision.text, inserts.Decision.parameters(write)]
      case "Status":
        return [setStatus, [write.status, touched, write.run_id]]
    }
  }

  const fenceTexts = new Map<number, string>()
  /** The fencing query for `n` runs (a batch's runs: usually one), compiled once per `n` (at most `maxBatch`). */
  const fenceText = (n: number): string => {
    let text = fenceTexts.get(n)
    if (text === undefined) {
      text = compiled(
        sql`SELECT run_id, lease_owner, lease_expires_at FROM ${sql(t.runs)} WHERE run_id IN ${
          sql.in(Array.from({ length: n }, () => _))
        } ${sql.literal(dialect === "pg" ? "FOR SHARE" : "")}`
      )
      fenceTexts.set(n, text)
    }
    return text
  }

  const fence = (connection: Connection, runIds: ReadonlyArray<string>, owner: string) =>
    Effect.map(
      connection.execute(fenceText(runIds.length), runIds, undefined) as Effect.Effect<
        ReadonlyArray<{
          readonly run_id: string
          readonly lease_owner: string | null
          readonly lease_expires_at: number | string | null
        }>,
        SqlError
      >,
      (rows) => {
        const verdicts = new Map<string, Refusal | undefined>(runIds.map((id) => [id, { _tag: "Missing" }]))
        for (const row of rows) {
          verdicts.set(
            row.run_id,
            row.lease_owner === null || row.lease_owner === owner ? undefined : {
              _tag: "Held",
              owner: row.lease_owner,
              expiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at)
            }
          )
        }
        return verdicts
      }
    )

  const heldBy = (runId: string) =>
    Effect.map(
      sql<{ readonly lease_owner: string | null; readonly lease_expires_at: number | string | null }>`SELECT
        lease_owner, lease_expires_at FROM ${sql(t.runs)} WHERE run_id = ${runId}`,
      (rows): Refusal =>
        rows.length === 0
          ? { _tag: "Missing" }
          : {
            _tag: "Held",
            owner: rows[0].lease_owner ?? "",
            expiresAt: rows[0].lease_expires_at === null ? null : Number(rows[0].lease_expires_at)
          }
    )

  const orphan = (host: number) => sql`status = 'running' AND (lease_owner IS NULL OR lease_expires_at <= ${now(host)})`

  const reading = <A>(doing: string, effect: Effect.Effect<A, SqlError>) =>
    journalErrors(`the journal could not read ${doing}`)(effect)

  return {
    begin: (row) =>
      reading(
        "the run",
        Effect.gen(function*() {
          const inserted = yield* sql`INSERT INTO ${sql(t.runs)} ${sql.insert({ ...row })}
            ON CONFLICT (run_id) DO NOTHING RETURNING run_id`
          const rows = yield* sql`SELECT * FROM ${sql(t.runs)} WHERE run_id = ${row.run_id}`
          return { row: rows[0], created: inserted.length > 0 }
        })
      ),
    commit: (writes, owner, touched) =>
      transaction("the journal could not commit", (connection) =>
        Effect.gen(function*() {
          const verdicts = yield* fence(connection, [...new Set(writes.map((w) => w.run_id))], owner)
          const refusals: Array<Refusal | undefined> = []
          for (const write of writes) {
            const verdict = verdicts.get(write.run_id)
            if (verdict === undefined) {
              const [text, parameters] = statement(write, touched)
              yield* connection.execute(text, parameters, undefined)
              // a run's `updated_at` follows its steps (and its status and lease), not each of its writes
              if (write._tag === "Step") yield* connection.execute(touchRun, [touched, write.run_id], undefined)
            }
            refusals.push(verdict)
          }
          return refusals
        })),
    acquire: (runId, owner, ttlMillis, host) =>
      reading(
        "the run's lease",
        Effect.flatMap(
          sql`UPDATE ${sql(t.runs)} SET lease_owner = ${owner}, lease_expires_at = ${now(host)} + ${ttlMillis},
              updated_at = ${host}
            WHERE run_id = ${runId}
              AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at <= ${now(host)})
            RETURNING *`,
          (rows): Effect.Effect<Either.Either<unknown, Refusal>, SqlError> =>
            rows.length > 0
              ? Effect.succeed(Either.right(rows[0]))
              : Effect.map(heldBy(runId), Either.left)
        )
      ),
    renew: (runId, owner, ttlMillis, host) =>
      reading(
        "the run's lease",
        Effect.map(
          sql`UPDATE ${sql(t.runs)} SET lease_expires_at = ${now(host)} + ${ttlMillis}
            WHERE run_id = ${runId} AND lease_owner = ${owner} RETURNING run_id`,
          (rows) => rows.length > 0
        )
      ),
    release: (runId, owner, host) =>
      reading(
        "the run's lease",
        Effect.asVoid(
          sql`UPDATE ${sql(t.runs)} SET lease_expires_at = ${now(host)}
            WHERE run_id = ${runId} AND lease_owner = ${owner}`
        )
      ),
    takeOver: (owner, ttlMillis, host, exclude) =>
      reading(
        "the runs to take over",
        Effect.map(
          sql`UPDATE ${sql(t.runs)} SET lease_owner = ${owner}, lease_expires_at = ${now(host)} + ${ttlMillis},
              updated_at = ${host}
            WHERE run_id = (
              SELECT run_id FROM ${sql(t.runs)}
              WHERE ${orphan(host)}${exclude.length === 0 ? sql`` : sql` AND run_id NOT IN ${sql.in(exclude)}`}
              ORDER BY COALESCE(lease_expires_at, 0), run_id LIMIT 1 ${skipLocked}
            )
            RETURNING *`,
          (rows) => Option.fromNullable(rows[0])
        )
      ),
    expired: (host, limit) =>
      reading(
        "the expired runs",
        sql`SELECT * FROM ${sql(t.runs)} WHERE ${orphan(host)}
          ORDER BY COALESCE(lease_expires_at, 0), run_id LIMIT ${limit}`
      ),
    runs: (status, limit) =>
      reading(
        "the runs",
        sql`SELECT * FROM ${sql(t.runs)}${status === undefined ? sql`` : sql` WHERE status = ${status}`}
          ORDER BY updated_at DESC, run_id LIMIT ${limit}`
      ),
    run: (runId) =>
      reading(
        "the run",
        Effect.map(sql`SELECT * FROM ${sql(t.runs)} WHERE run_id = ${runId}`, (rows) => Option.fromNullable(rows[0]))
      ),
    steps: (runId) =>
      reading("the run's steps", sql`SELECT * FROM ${sql(t.steps)} WHERE run_id = ${runId} ORDER BY step`),
    calls: (runId) =>
      reading(
        "the run's calls",
        sql`SELECT * FROM ${sql(t.calls)} WHERE run_id = ${runId} ORDER BY step, call_index, call_id`
      ),
    records: (runId, callId) =>
      reading(
        "the run's records",
        sql`SELECT * FROM ${sql(t.records)} WHERE run_id = ${runId}${
          callId === undefined ? sql`` : sql` AND call_id = ${callId}`
        } ORDER BY id`
      ),
    decisions: (runId, callId) =>
      reading(
        "the run's decisions",
        sql`SELECT * FROM ${sql(t.decisions)} WHERE run_id = ${runId}${
          callId === undefined ? sql`` : sql` AND call_id = ${callId}`
        } ORDER BY id`
      )
  }
}

/** The journal service over a SQL store whose tables are ready. */
export const journal = (
  sql: SqlClient.SqlClient,
  dialect: Dialect,
  t: Tables,
  options: Journal.Options
): Effect.Effect<Journal.Journal.Service, never, Scope.Scope> =>
  Service.make(store(sql, dialect, t), Service.settings(options))
