/**
 * A real crash, on SQLite and on Postgres: a process runs a journaled agent (test/fixtures/durable-run.ts) and is
 * SIGKILLed mid-step, while a `safe`, a `keyed` and an `unknown` call and a `bash` command with a background child
 * run, beside a call that finished. Then two processes resume the run at once: one wins the run's lease, the other
 * fails with the journal's `Conflict`; the winner asks the model only for the step it never answered, does not run
 * the finished call again, runs the safe one again and the keyed one with its first key, ends the unknown one (and
 * the bash one) `ToolOutcomeUnknown`, asks for no permission it had, and has ended the dead process's bash group.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer, Option, Queue } from "effect"
import type { Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Readline from "node:readline"
import { Journal } from "../src/index.js"
import * as ProcessTree from "../src/internal/processTree.js"
import { fixture } from "./fixtures/compiled.js"
import { freshSchema, PG, skipPg, temporaryDirectory } from "./fixtures/journal.js"

interface Host {
  readonly lines: Queue.Queue<string>
  readonly said: Array<string>
  readonly kill: () => Effect.Effect<void>
  readonly exited: Effect.Effect<number | null>
}

/** A durable-run process; killed with the scope if still running. */
const spawnRun = (args: ReadonlyArray<string>): Effect.Effect<Host, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const lines = Effect.runSync(Queue.unbounded<string>())
      const said: Array<string> = []
      const exit = Deferred.unsafeMake<number | null>(undefined as never)
      const child = ChildProcess.spawn(process.execPath, [fixture("durable-run"), ...args], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      Readline.createInterface({ input: child.stdout }).on("line", (line) => {
        said.push(line)
        Queue.unsafeOffer(lines, line)
      })
      child.on("exit", (code) => Deferred.unsafeDone(exit, Effect.succeed(code)))
      return {
        lines,
        said,
        kill: () => Effect.sync(() => void child.kill("SIGKILL")),
        exited: Deferred.await(exit),
        child
      }
    }),
    (host) => Effect.sync(() => host.child.exitCode === null && host.child.kill("SIGKILL"))
  )

/** Waits until the host has said a line that `matches`. */
const until = (host: Host, matches: (line: string) => boolean) =>
  Effect.gen(function*() {
    while (!host.said.some(matches)) yield* Queue.take(host.lines)
  }).pipe(Effect.timeout("30 seconds"), Effect.orDie)

/** A process that exists and is not a zombie (a dead process nobody reaped: PID 1 of a container may not). */
const alive = (pid: number): boolean => {
  const found = ProcessTree.info(pid)
  return found !== undefined && found.state !== "Z"
}

const linesOf = (dir: string, what: string): Array<string> => {
  const file = path.join(dir, `${what}.log`)
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []
}

const UNKNOWN = "Error: the call was running when its process stopped, so whether it took effect is unknown: check " +
  "its effect before calling it again"

const stores = [
  {
    name: "sqlite",
    skip: false,
    target: (dir: string) => Effect.succeed(path.join(dir, "journal.db")),
    layer: (target: string) => Journal.layerSqlite({ filename: target })
  },
  {
    name: "pg",
    skip: skipPg,
    target: (_: string) =>
      Effect.acquireRelease(
        Effect.sync(freshSchema),
        (schema) =>
          Effect.scoped(Effect.gen(function*() {
            const sql = yield* (yield* Effect.promise(() => import("../src/internal/journal/pg.js"))).client(PG)
            yield* Effect.ignore(sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`)
          })).pipe(Effect.ignore)
      ),
    layer: (target: string) => Journal.layerPg({ ...PG, schema: target })
  }
] as const

for (const store of stores) {
  describe.skipIf(store.skip)(`a journaled run killed mid-step, on ${store.name}`, () => {
    it.scopedLive(
      "is resumed by one of two processes: nothing finished runs again, nothing of the dead one is left",
      () =>
        Effect.gen(function*() {
          const dir = yield* temporaryDirectory
          const target = yield* store.target(dir)
          const args = (mode: string) => [store.name, target, "run-1", dir, mode]

          const first = yield* spawnRun(args("first"))
          const running = ["1 1 safe_wait", "1 2 keyed_wait", "1 3 unknown_wait", "1 4 bash"]
          for (const call of running) yield* until(first, (line) => line === `started ${call}`)
          yield* until(first, (line) => line === "finished 1 0 count Right")
          const bg = path.join(dir, "bg.pid")
          while (!fs.existsSync(bg) || fs.readFileSync(bg, "utf8").trim() === "") yield* Effect.sleep("10 millis")
          const background = Number(fs.readFileSync(bg, "utf8").trim())
          expect(alive(background)).toBe(true)
          yield* first.kill()
          expect(yield* first.exited).toBe(null)

          // the dead process's lease runs out; until then the run is nobody's to take
          const journal = yield* Effect.map(Layer.build(store.layer(target)), Context.get(Journal.Journal))
          const bashGroup = Option.getOrThrow(
            Option.fromNullable((yield* journal.records("run-1", "b"))[0])
          ).record.data as { readonly pgid: number }
          while ((yield* journal.expired()).length === 0) yield* Effect.sleep("50 millis")

          const resumers = yield* Effect.all([spawnRun(args("resume")), spawnRun(args("resume"))])
          const [loser, winner] = yield* Effect.raceFirst(
            Effect.as(until(resumers[0], (line) => line.startsWith("failed")), [resumers[0], resumers[1]] as const),
            Effect.as(until(resumers[1], (line) => line.startsWith("failed")), [resumers[1], resumers[0]] as const)
          )
          expect(loser.said.at(-1)).toBe("failed JournalFailed Conflict")
          expect(yield* loser.exited).toBe(3)
          // the winner holds the run while its safe call waits to be let go
          yield* until(winner, (line) => line === "started 1 1 safe_wait")
          fs.writeFileSync(path.join(dir, "release"), "")
          yield* until(winner, (line) => line.startsWith("result "))
          expect(yield* winner.exited).toBe(0)

          const result = JSON.parse(winner.said.find((line) => line.startsWith("result "))!.slice("result ".length))
          expect(result).toEqual([
            { tag: "Right", text: "counted" },
            { tag: "Right", text: "safe ran" },
            { tag: "Right", text: "keyed ran" },
            { tag: "ToolOutcomeUnknown", text: UNKNOWN },
            { tag: "ToolOutcomeUnknown", text: UNKNOWN }
          ])
          // the finished call ran once per step, never again; the safe one twice; the keyed one twice, with one key
          expect(linesOf(dir, "count")).toHaveLength(2)
          expect(linesOf(dir, "safe")).toHaveLength(2)
          const keys = linesOf(dir, "keyed")
          expect(keys).toHaveLength(2)
          expect(keys[1]).toBe(keys[0])
          expect(keys[0]).toBe(Journal.idempotencyKey({ runId: "run-1", step: 1, callId: "k" }))
          expect(linesOf(dir, "unknown")).toHaveLength(1)
          // the model was asked once per step, the resumed run only for the step it never answered
          expect(linesOf(dir, "model")).toEqual(["0", "1", "2"])
          // permission was asked by the dead process only
          expect(linesOf(dir, "asked")).toEqual(["keyed_wait k", "bash b"])
          // the winner's events: the finished and unknown calls without running, the others run again
          expect(winner.said.filter((line) => line.startsWith("started"))).toEqual([
            "started 1 1 safe_wait",
            "started 1 2 keyed_wait"
          ])
          // nothing of the dead process's bash command is left
          expect(alive(background)).toBe(false)
          expect(alive(bashGroup.pgid)).toBe(false)
          expect(Option.getOrThrow(yield* journal.run("run-1")).status).toBe("completed")
        }),
      60_000
    )
  })
}
