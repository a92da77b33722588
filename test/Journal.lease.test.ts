/**
 * Leases: one host owns a run at a time. In-process hosts on one database for the rules (acquire, renewal,
 * release, expiry, takeover, fencing), on every store; real second processes for what only processes show (two
 * processes racing for one run; a host SIGKILLed while it holds a lease), on SQLite and Postgres.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Either, Fiber, Layer, Option, Queue } from "effect"
import type { Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as path from "node:path"
import * as Readline from "node:readline"
import { fileURLToPath } from "node:url"
import { Journal } from "../src/index.js"
import { fixture } from "./fixtures/compiled.js"
import { begin, dispatch, freshSchema, PG, skipPg, stores, temporaryDirectory } from "./fixtures/journal.js"

for (const store of stores) {
  describe.skipIf(store.skip)(`Journal leases on ${store.name}`, () => {
    const test = store.live ? it.scopedLive : it.scoped
    // real time on Postgres: short; Effect's test clock elsewhere: any
    const TTL_MILLIS = store.live ? 1200 : 3000
    const TTL = `${TTL_MILLIS} millis` as const

    test("acquire takes the lease; another host gets Conflict naming the holder until the scope closes", () =>
      Effect.gen(function*() {
        const db = yield* store.database
        const a = yield* db.host({ leaseTtl: TTL })
        const b = yield* db.host({ leaseTtl: TTL })
        yield* begin(a, "run-1")
        yield* Effect.scoped(Effect.gen(function*() {
          const lease = yield* a.acquire("run-1")
          expect(lease.owner).toBe(a.owner)
          expect(Option.getOrThrow(lease.run.lease).owner).toBe(a.owner)
          const refused = yield* Effect.flip(Effect.scoped(b.acquire("run-1")))
          expect(refused.reason).toBe("Conflict")
          expect(refused.message).toContain(`the run "run-1" is leased by ${a.owner} until `)
          expect(refused.message).toContain(`not by this host (${b.owner})`)
          expect(yield* b.expired()).toEqual([])
        }))
        // released: the other host takes it at once, without waiting for the lease's time
        const lease = yield* b.acquire("run-1")
        expect(lease.owner).toBe(b.owner)
      }))

    test("a second fiber of the same host gets Conflict; acquiring a run never begun fails UnknownRun", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host({ leaseTtl: TTL })
        yield* begin(journal, "run-1")
        yield* journal.acquire("run-1")
        const twice = yield* Effect.flip(Effect.scoped(journal.acquire("run-1")))
        expect(twice).toMatchObject({
          reason: "Conflict",
          message: "the run \"run-1\" is already leased by another fiber of this host"
        })
        const missing = yield* Effect.flip(Effect.scoped(journal.acquire("run-2")))
        expect(missing).toMatchObject({ reason: "UnknownRun", message: "no run \"run-2\" was begun" })
        // the failed attempt did not reserve the run: once begun, it can be acquired
        yield* begin(journal, "run-2")
        yield* journal.acquire("run-2")
      }))

    test(
      "a held lease is renewed: after several of its times another host still cannot take it",
      () =>
        Effect.gen(function*() {
          const db = yield* store.database
          const a = yield* db.host({ leaseTtl: TTL })
          const b = yield* db.host({ leaseTtl: TTL })
          yield* begin(a, "run-1")
          const lease = yield* a.acquire("run-1")
          yield* db.elapse(TTL_MILLIS * 2.5)
          expect((yield* Effect.flip(Effect.scoped(b.acquire("run-1")))).reason).toBe("Conflict")
          expect(yield* b.expired()).toEqual([])
          expect(Option.isNone(yield* Effect.scoped(b.takeOver()))).toBe(true)
          // and the holder did not lose it
          const lost = yield* Effect.fork(lease.lost)
          yield* Effect.yieldNow()
          expect(Option.isNone(yield* Fiber.poll(lost))).toBe(true)
        }),
      store.live ? 30_000 : undefined
    )

    test("a lease its host left behind is listed by expired() only after its time, then taken over", () =>
      Effect.gen(function*() {
        const db = yield* store.database
        const journal = yield* db.host({ leaseTtl: TTL })
        yield* begin(journal, "run-1")
        yield* db.plant("run-1", "dead-host", 1000)
        expect(yield* journal.expired()).toEqual([])
        expect((yield* Effect.flip(Effect.scoped(journal.acquire("run-1")))).message).toContain("leased by dead-host")
        yield* db.elapse("1500 millis")
        expect((yield* journal.expired()).map((r) => r.runId)).toEqual(["run-1"])
        const lease = Option.getOrThrow(yield* journal.takeOver())
        expect(lease.run.runId).toBe("run-1")
        expect(Option.getOrThrow(lease.run.lease).owner).toBe(journal.owner)
        expect(yield* journal.expired()).toEqual([])
        // the host that took it over writes to it
        yield* journal.dispatch(dispatch("run-1", "a"))
      }))

    test("expired() lists running runs no live lease holds; ended runs are never taken over", () =>
      Effect.gen(function*() {
        const db = yield* store.database
        const journal = yield* db.host({ leaseTtl: TTL })
        expect(Option.isNone(yield* journal.takeOver())).toBe(true)
        yield* begin(journal, "never-leased")
        yield* begin(journal, "done")
        yield* journal.end("done", "completed")
        yield* begin(journal, "released")
        yield* Effect.scoped(journal.acquire("released"))
        yield* db.elapse("10 millis")
        expect((yield* journal.expired()).map((r) => r.runId).sort()).toEqual(["never-leased", "released"])
        const taken = [
          Option.getOrThrow(yield* journal.takeOver()).run.runId,
          Option.getOrThrow(yield* journal.takeOver()).run.runId
        ].sort()
        expect(taken).toEqual(["never-leased", "released"])
        expect(Option.isNone(yield* journal.takeOver())).toBe(true)
      }))

    test("after another host took the run over, this host's writes fail Conflict and its lease is lost", () =>
      Effect.gen(function*() {
        const db = yield* store.database
        const journal = yield* db.host({ leaseTtl: TTL })
        yield* begin(journal, "run-1")
        yield* Effect.scoped(Effect.gen(function*() {
          const lease = yield* journal.acquire("run-1")
          yield* journal.dispatch(dispatch("run-1", "before"))
          // this host stalled past its lease, and another took the run over
          yield* db.plant("run-1", "other-host", 60_000)
          const refused = yield* Effect.flip(journal.dispatch(dispatch("run-1", "after")))
          expect(refused.reason).toBe("Conflict")
          expect(refused.message).toContain("the run \"run-1\" is leased by other-host")
          expect((yield* journal.calls("run-1")).map((c) => c.callId)).toEqual(["before"])
          const lost = yield* Effect.fork(lease.lost)
          yield* db.elapse(TTL_MILLIS / 2)
          expect(yield* Effect.flip(Fiber.join(lost))).toMatchObject({
            reason: "Conflict",
            message: "the lease of run \"run-1\" was taken over by another host"
          })
        }))
        // releasing a lease this host no longer holds leaves the new owner's alone
        const run = Option.getOrThrow(yield* journal.run("run-1"))
        expect(Option.getOrThrow(run.lease).owner).toBe("other-host")
        expect(yield* journal.expired()).toEqual([])
      }))

    test("two hosts taking over at once never get the same run", () =>
      Effect.gen(function*() {
        const db = yield* store.database
        const a = yield* db.host({ leaseTtl: TTL })
        const b = yield* db.host({ leaseTtl: TTL })
        const runIds = Array.from({ length: 10 }, (_, i) => `run-${i}`)
        yield* Effect.forEach(runIds, (runId) => begin(a, runId))
        const takeAll = (journal: Journal.Journal.Service) =>
          Effect.gen(function*() {
            const mine: Array<string> = []
            while (true) {
              const lease = yield* journal.takeOver()
              if (Option.isNone(lease)) return mine
              mine.push(lease.value.run.runId)
            }
          })
        const [ofA, ofB] = yield* Effect.all([takeAll(a), takeAll(b)], { concurrency: "unbounded" })
        expect([...ofA, ...ofB].sort()).toEqual([...runIds].sort())
        expect(ofA.filter((runId) => ofB.includes(runId))).toEqual([])
      }))
  })
}

// -------------------------------------------------------------------------------------------------------------------
// real processes
// -------------------------------------------------------------------------------------------------------------------

const HOST = fixture("journal-host")
const ROOT = fileURLToPath(new URL("..", import.meta.url))

interface Host {
  readonly lines: Queue.Queue<string>
  readonly send: (line: string) => Effect.Effect<void>
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  readonly exited: Effect.Effect<number | null>
}

/** A journal-host process; killed with the scope if still running. */
const spawnHost = (args: ReadonlyArray<string>): Effect.Effect<Host, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const lines = yield* Queue.unbounded<string>()
      const exit = yield* Deferred.make<number | null>()
      const child = ChildProcess.spawn(process.execPath, [HOST, ...args], {
        cwd: ROOT,
        stdio: ["pipe", "pipe", "inherit"]
      })
      Readline.createInterface({ input: child.stdout }).on("line", (line) => Queue.unsafeOffer(lines, line))
      child.on("exit", (code) => Deferred.unsafeDone(exit, Effect.succeed(code)))
      return {
        lines,
        send: (line: string) => Effect.sync(() => child.stdin.write(line + "\n")),
        kill: (signal: NodeJS.Signals) => Effect.sync(() => child.kill(signal)),
        exited: Deferred.await(exit),
        child
      }
    }),
    (host) => Effect.sync(() => host.child.exitCode === null && host.child.kill("SIGKILL"))
  )

/** The next line a host prints, within the time a start takes on a loaded machine. */
const next = (host: Host) => Queue.take(host.lines).pipe(Effect.timeout("60 seconds"), Effect.orDie)

const processStores = [
  {
    name: "sqlite",
    skip: false,
    target: Effect.map(temporaryDirectory, (dir) => path.join(dir, "journal.db")),
    layer: (target: string) => Journal.layerSqlite({ filename: target, leaseTtl: "1500 millis" })
  },
  {
    name: "pg",
    skip: skipPg,
    target: Effect.acquireRelease(
      Effect.sync(freshSchema),
      (schema) =>
        Effect.scoped(
          Effect.gen(function*() {
            const sql = yield* (yield* Effect.promise(() => import("../src/internal/journal/pg.js"))).client(PG)
            yield* Effect.ignore(sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`)
          })
        ).pipe(Effect.ignore)
    ),
    layer: (target: string) => Journal.layerPg({ ...PG, schema: target, leaseTtl: "1500 millis" })
  }
] as const

// the two stores' races wait on their processes and on the lease's time side by side
describe.concurrent("Journal leases between processes", () => {
  for (const store of processStores) {
    it.scopedLive.skipIf(store.skip)(
      `on ${store.name}: two processes racing for one run's lease: one wins; killed, it holds the run until its ` +
        "lease's time",
      () =>
        Effect.gen(function*() {
          const target = yield* store.target
          const journal = yield* Effect.map(Layer.build(store.layer(target)), Context.get(Journal.Journal))
          yield* begin(journal, "run-1")
          const hosts = yield* Effect.all([
            spawnHost([store.name, target, "run-1", "1500"]),
            spawnHost([store.name, target, "run-1", "1500"])
          ])
          for (const host of hosts) expect(yield* next(host)).toBe("ready")
          yield* Effect.forEach(hosts, (host) => host.send("go"))
          const said = yield* Effect.forEach(hosts, next)
          const winners = hosts.filter((_, i) => said[i].startsWith("acquired "))
          expect(winners.length).toBe(1)
          expect(said.filter((line) => line.startsWith("refused Conflict: the run \"run-1\" is leased by ")).length)
            .toBe(1)

          yield* winners[0].kill("SIGKILL")
          expect(yield* winners[0].exited).toBe(null)
          // the dead host's lease is still live: not listed, not taken
          expect((yield* Effect.flip(Effect.scoped(journal.acquire("run-1")))).reason).toBe("Conflict")
          expect(yield* journal.expired()).toEqual([])
          yield* Effect.sleep("2 seconds")
          expect((yield* journal.expired()).map((r) => r.runId)).toEqual(["run-1"])
          const lease = Option.getOrThrow(yield* journal.takeOver())
          expect(Option.getOrThrow(lease.run.lease).owner).toBe(journal.owner)
          expect(Either.isRight(yield* Effect.either(journal.dispatch(dispatch("run-1", "a"))))).toBe(true)
        }),
      120_000
    )
  }
})
