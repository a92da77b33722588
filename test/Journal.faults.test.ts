/**
 * Bad input and faults, each with the real thing where the machine allows it: a file that is not SQLite, tables
 * from a newer version, a database that is down at start, one that goes away mid-run (Postgres: its backend
 * terminated from a second connection; SQLite: another process holding the file's write lock), a full disk (a
 * SQLite size limit everywhere, and a real full filesystem where a tiny tmpfs can be mounted). In each, the
 * waiting writes fail with a typed `JournalError`, and nothing is reported durable that is not.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Cause, Context, Deferred, Effect, Either, Exit, Fiber, Layer, Option, Schedule } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as Net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Journal, Recorder } from "../src/index.js"
import * as Service from "../src/internal/journal/service.js"
import * as Sql from "../src/internal/journal/sql.js"
import * as Sqlite from "../src/internal/journal/sqlite.js"
import { begin, call, dispatch, freshSchema, PG, skipPg, temporaryDirectory } from "./fixtures/journal.js"

const record = (runId: string, callId: string, bytes: number) => ({
  ...call(runId, callId),
  tool: "echo",
  phase: "during" as const,
  record: new Recorder.Record({ namespace: "blob", data: "x".repeat(bytes) })
})

const build = <E>(layer: Layer.Layer<Journal.Journal, E>) =>
  Effect.map(Layer.build(layer), Context.get(Journal.Journal))

/** The ids of the calls a journal file holds, read by a connection of its own. */
const callsInFile = (filename: string): ReadonlyArray<string> => {
  const db = new Database(filename, { readonly: true })
  try {
    return db.prepare("SELECT call_id FROM agent_journal_calls ORDER BY call_id").all().map((row) =>
      (row as { call_id: string }).call_id
    )
  } finally {
    db.close()
  }
}

describe("Journal faults on SQLite", () => {
  it.scoped("a file that is not SQLite fails the layer with Corrupt, and is left as it was", () =>
    Effect.gen(function*() {
      const filename = path.join(yield* temporaryDirectory, "notes.txt")
      fs.writeFileSync(filename, "these are my notes, not a database\n")
      const error = yield* Effect.flip(build(Journal.layerSqlite({ filename })))
      expect(error).toMatchObject({
        reason: "Corrupt",
        message: `the journal ${filename} is not a SQLite database (its first bytes are "these are my not")`
      })
      expect(fs.readFileSync(filename, "utf8")).toBe("these are my notes, not a database\n")
    }))

  it.scoped("a file that cannot be opened fails the layer with Unavailable", () =>
    Effect.gen(function*() {
      const filename = path.join(yield* temporaryDirectory, "no-such-folder", "journal.db")
      const error = yield* Effect.flip(build(Journal.layerSqlite({ filename })))
      expect(error.reason).toBe("Unavailable")
      expect(error.message).toBe(
        `the journal ${filename} could not be opened: Cannot open database because the directory does not exist`
      )
    }))

  it.scoped("tables from a newer version fail the layer with NewerSchema, and nothing is changed", () =>
    Effect.gen(function*() {
      const filename = path.join(yield* temporaryDirectory, "journal.db")
      yield* Effect.scoped(build(Journal.layerSqlite({ filename })))
      const db = new Database(filename)
      db.prepare("INSERT INTO agent_journal_migrations (migration_id, name) VALUES (7, 'from_the_future')").run()
      db.close()
      const error = yield* Effect.flip(build(Journal.layerSqlite({ filename })))
      expect(error).toMatchObject({
        reason: "NewerSchema",
        message: "the journal's tables are at version 7, and this version of effect-agent-tools knows up to " +
          "version 1: upgrade effect-agent-tools to use this journal (nothing was changed)"
      })
      const after = new Database(filename, { readonly: true })
      expect(after.prepare("SELECT migration_id FROM agent_journal_migrations ORDER BY 1").all()).toEqual([
        { migration_id: 1 },
        { migration_id: 7 }
      ])
      after.close()
    }))

  it.scoped("another process holding the write lock past busyTimeout fails the waiting writes Unavailable", () =>
    Effect.gen(function*() {
      const filename = path.join(yield* temporaryDirectory, "journal.db")
      const journal = yield* build(Journal.layerSqlite({ filename, busyTimeout: "200 millis" }))
      yield* begin(journal, "run-1")
      yield* journal.dispatch(dispatch("run-1", "before"))
      // a real second process takes the file's write lock and holds it
      const holder = ChildProcess.spawn(process.execPath, [
        "-e",
        `const db = new (require("better-sqlite3"))(${JSON.stringify(filename)}); db.exec("BEGIN IMMEDIATE");
         process.stdout.write("locked\\n"); process.stdin.on("end", () => { db.exec("ROLLBACK"); process.exit(0) });
         process.stdin.resume()`
      ], { stdio: ["pipe", "pipe", "inherit"] })
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
      yield* Effect.async<void>((resume) => {
        holder.stdout.once("data", () => resume(Effect.void))
      })
      const error = yield* Effect.flip(journal.dispatch(dispatch("run-1", "while-locked")))
      expect(error.reason).toBe("Unavailable")
      expect(error.message).toBe("the journal could not commit: SQLITE_BUSY: database is locked")
      holder.stdin.end()
      yield* Effect.async<void>((resume) => {
        holder.once("exit", () => resume(Effect.void))
      })
      yield* journal.dispatch(dispatch("run-1", "after"))
      expect(callsInFile(filename)).toEqual(["after", "before"])
    }))

  it.scoped("a full database fails the waiting writes with Full; what was durable stays, what failed is absent", () =>
    Effect.gen(function*() {
      const filename = path.join(yield* temporaryDirectory, "journal.db")
      const sql = yield* Sqlite.client(filename)
      yield* Sqlite.prepare(sql, { filename })
      // SQLite's own size limit gives the error a full disk gives (SQLITE_FULL) at a size a test can reach
      const [{ page_count }] = yield* sql<{ page_count: number }>`PRAGMA page_count`
      yield* sql.unsafe(`PRAGMA max_page_count = ${page_count + 4}`)
      const journal = yield* Service.make(Sql.store(sql, "sqlite", Sql.tables()), Service.settings({}))
      yield* begin(journal, "run-1")
      yield* journal.dispatch(dispatch("run-1", "small"))
      const outcomes = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => Effect.either(journal.record(record("run-1", `big-${i}`, 3000))),
        { concurrency: 1 }
      )
      const failed = outcomes.flatMap((o) => Either.isLeft(o) ? [o.left] : [])
      expect(failed.length).toBeGreaterThan(0)
      expect(failed[0]).toMatchObject({
        reason: "Full",
        message: "the journal could not commit: SQLITE_FULL: database or disk is full"
      })
      const durable = outcomes.flatMap((o, i) => Either.isRight(o) ? [`big-${i}`] : [])
      expect((yield* journal.records("run-1")).map((r) => r.callId)).toEqual(durable)
      expect((yield* journal.calls("run-1")).map((c) => c.callId)).toEqual(["small"])
    }))
})

// -------------------------------------------------------------------------------------------------------------------
// a real full filesystem: a tmpfs of 256 KB, where this process may mount one (root on Linux)
// -------------------------------------------------------------------------------------------------------------------

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), "journal-full-"))
const mounted = ((): boolean => {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false
  try {
    ChildProcess.execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
if (!mounted) {
  console.warn(
    "Journal disk-full test on a real filesystem SKIPPED: it needs to mount a 256 KB tmpfs (root on Linux); " +
      "the SQLite size-limit test covers the same error path"
  )
}
afterAll(() => {
  if (mounted) ChildProcess.execFileSync("umount", [mountPoint], { stdio: "ignore" })
  fs.rmSync(mountPoint, { recursive: true, force: true })
})

describe.skipIf(!mounted)("Journal on a full filesystem", () => {
  it.scoped("writes past the disk's end fail with Full; reopened, the journal has exactly what was reported", () =>
    Effect.gen(function*() {
      const filename = path.join(mountPoint, "journal.db")
      const reported = yield* Effect.scoped(Effect.gen(function*() {
        const journal = yield* build(Journal.layerSqlite({ filename }))
        yield* begin(journal, "run-1")
        const durable: Array<string> = []
        for (let i = 0; i < 200; i++) {
          const result = yield* Effect.either(journal.record(record("run-1", `r${i}`, 4000)))
          if (Either.isLeft(result)) {
            expect(result.left.reason).toBe("Full")
            expect(result.left.message).toMatch(/^the journal could not commit: SQLITE_FULL: /)
            return durable
          }
          durable.push(`r${i}`)
        }
        return yield* Effect.die("the filesystem never filled up")
      }))
      expect(reported.length).toBeGreaterThan(0)
      // what a process reading the file after a crash finds: everything reported durable, nothing else
      const db = new Database(filename, { readonly: true })
      const rows = db.prepare("SELECT call_id FROM agent_journal_records ORDER BY id").all()
      db.close()
      expect(rows.map((row) => (row as { call_id: string }).call_id)).toEqual(reported)
    }))
})

// -------------------------------------------------------------------------------------------------------------------
// Postgres
// -------------------------------------------------------------------------------------------------------------------

/** A port nothing listens on: one the OS just gave out and was closed again. */
const closedPort = Effect.async<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as Net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A fresh Postgres schema, dropped with the scope, and a client of the test's own on the database. */
const pgSchema = Effect.gen(function*() {
  const admin = yield* (yield* Effect.promise(() => import("../src/internal/journal/pg.js"))).client(PG)
  const schema = freshSchema()
  yield* Effect.addFinalizer(() => Effect.ignore(admin`DROP SCHEMA IF EXISTS ${admin(schema)} CASCADE`))
  return { admin, schema }
})

/** A journal on a fresh schema, under an application name of its own (to find its backends), with run-1 begun. */
const pgJournal = Effect.gen(function*() {
  const { admin, schema } = yield* pgSchema
  const applicationName = `journal-fault-${process.pid}-${Date.now()}`
  const journal = yield* build(Journal.layerPg({ ...PG, schema, applicationName }))
  yield* begin(journal, "run-1")
  return { admin, schema, applicationName, journal, calls: admin(`${schema}.agent_journal_calls`) }
})

describe.skipIf(skipPg)("Journal faults on Postgres", () => {
  it.scopedLive("a database that is down at start fails the layer with Unavailable within connectTimeout", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const started = Date.now()
      const error = yield* Effect.flip(build(Journal.layerPg({ ...PG, port, connectTimeout: "2 seconds" })))
      expect(Date.now() - started).toBeLessThan(3000)
      expect(error.reason).toBe("Unavailable")
      expect(error.message).toMatch(/^the journal's database could not be reached: /)
    }))

  it.scopedLive("a schema name that is not a plain identifier fails the layer with Invalid before any statement", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(build(Journal.layerPg({ ...PG, schema: "journal\"; DROP TABLE x; --" })))
      expect(error.reason).toBe("Invalid")
      expect(error.message).toMatch(/^the journal's schema name .* is not a plain identifier/)
    }))

  it.scopedLive("tables from a newer version fail the layer with NewerSchema, and nothing is changed", () =>
    Effect.gen(function*() {
      const { admin, schema } = yield* pgSchema
      yield* Effect.scoped(build(Journal.layerPg({ ...PG, schema })))
      const migrations = admin(`${schema}.agent_journal_migrations`)
      yield* admin`INSERT INTO ${migrations} (migration_id, name) VALUES (7, 'from_the_future')`
      const error = yield* Effect.flip(build(Journal.layerPg({ ...PG, schema })))
      expect(error).toMatchObject({ reason: "NewerSchema" })
      expect(error.message).toMatch(/^the journal's tables are at version 7, and this version/)
      expect(yield* admin`SELECT migration_id FROM ${migrations} ORDER BY 1`).toEqual([
        { migration_id: 1 },
        { migration_id: 7 }
      ])
    }))

  it.scopedLive(
    "a backend terminated mid-write fails the waiting write Unavailable; the journal recovers",
    () =>
      Effect.gen(function*() {
        const { admin, applicationName, calls, journal } = yield* pgJournal
        yield* journal.dispatch(dispatch("run-1", "before"))
        // a second connection locks the calls table, so the journal's next transaction waits inside Postgres
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const locker = yield* Effect.fork(admin.withTransaction(Effect.gen(function*() {
          yield* admin`LOCK TABLE ${calls} IN ACCESS EXCLUSIVE MODE`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        })))
        yield* Deferred.await(locked)
        const waiting = yield* Effect.fork(journal.dispatch(dispatch("run-1", "during")))
        const [{ pid }] = yield* admin<{ pid: number }>`SELECT pid FROM pg_stat_activity
        WHERE application_name = ${applicationName} AND wait_event_type = 'Lock'`.pipe(
          Effect.filterOrFail((rows) => rows.length === 1),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("10 seconds")))
        )
        yield* admin`SELECT pg_terminate_backend(${pid})`
        const error = yield* Effect.flip(Fiber.join(waiting))
        expect(error.reason).toBe("Unavailable")
        expect(error.message).toMatch(/^the journal could not commit: 57P01: terminating connection/)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(locker)
        // a new connection from the pool: the run goes on
        yield* journal.dispatch(dispatch("run-1", "after"))
        const rows = yield* admin<{ call_id: string }>`SELECT call_id FROM ${calls} ORDER BY call_id`
        expect(rows.map((row) => row.call_id)).toEqual(["after", "before"])
      }),
    60_000
  )

  it.scopedLive(
    "every connection terminated at once: the waiting writes fail typed, never as a defect",
    () =>
      Effect.gen(function*() {
        const { admin, applicationName, calls, journal } = yield* pgJournal
        const writes = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          (i) => Effect.fork(Effect.exit(journal.dispatch(dispatch("run-1", `c${i}`)))),
          { concurrency: "unbounded" }
        )
        yield* admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${applicationName}`
        const exits = yield* Effect.forEach(writes, Fiber.join)
        const reported = exits.flatMap((exit, i) => Exit.isSuccess(exit) ? [`c${i}`] : [])
        for (const exit of exits) {
          if (Exit.isFailure(exit)) {
            expect(Option.isNone(Cause.dieOption(exit.cause))).toBe(true)
            expect(Option.getOrThrow(Cause.failureOption(exit.cause))).toBeInstanceOf(Journal.JournalError)
          }
        }
        const rows = yield* admin<{ call_id: string }>`SELECT call_id FROM ${calls}`
        // nothing reported durable that is not
        expect(reported.filter((id) => !rows.some((row) => row.call_id === id))).toEqual([])
      }),
    60_000
  )
})
