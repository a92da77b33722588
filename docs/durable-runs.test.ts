/**
 * The examples of docs/durable-runs.md, run. Each `// #region name` below is the code of the block marked
 * `<!-- example: name -->` in the page, imports aside; the first test checks that they are the same text, the
 * others run the examples (on the memory journal, and the first also on SQLite) and check what the page says.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Journal, ToolResult } from "../src/index.js"
import { checkExamples } from "./examples.js"

// #region layers
// one file on this host: the embedded default
const Embedded = Journal.layerSqlite({ filename: "agent-journal.db" })

// many hosts, one database; the tables in a schema of their own
const Shared = Journal.layerPg({ url: "postgres://agents@db.internal/agents", schema: "journal" })

// tests: the same rules, in memory
const InMemory = Journal.layerMemory
// #endregion

// #region record-a-call
const recordOneCall = Effect.gen(function*() {
  const journal = yield* Journal.Journal
  const runId = "run-42"
  yield* journal.begin({ runId, definitionsHash: "3f1c...", options: { maxSteps: 8 } })
  yield* journal.step({ runId, step: 0, response: { role: "assistant", toolCalls: ["call_1"] } })

  const call = { runId, step: 0, callId: "call_1" }
  // durable before the handler runs: from here on, the call may have had its effect
  yield* journal.dispatch({
    ...call,
    index: 0,
    tool: "create_invoice",
    arguments: "{\"amount\":120}",
    idempotencyKey: Journal.idempotencyKey(call),
    replay: "keyed"
  })
  // ... the handler runs, passing the key to the billing API ...
  yield* journal.outcome({
    ...call,
    index: 0,
    tool: "create_invoice",
    arguments: "{\"amount\":120}",
    outcome: Either.right(ToolResult.text("invoice INV-7 created"))
  })

  const [recorded] = yield* journal.calls(runId)
  return {
    attempts: Option.map(recorded.dispatch, (d) => d.attempts),
    key: Option.map(recorded.dispatch, (d) => d.idempotencyKey),
    outcome: Option.map(recorded.outcome, (o) => Either.map(o.outcome, ToolResult.toText))
  }
})
// => { attempts: Some(1), key: Some("...-8...-..."), outcome: Some(Right("invoice INV-7 created")) }
// #endregion

// #region leases
const oneOwner = Effect.gen(function*() {
  const journal = yield* Journal.Journal
  yield* journal.begin({ runId: "run-7", definitionsHash: "3f1c..." })
  const lease = yield* journal.acquire("run-7")
  // ... resume the run, racing it against lease.lost ...
  const again = yield* Effect.either(Effect.scoped(journal.acquire("run-7")))
  return { owner: lease.owner === journal.owner, again: Either.map(Either.flip(again), (e) => e.reason) }
}).pipe(Effect.scoped)
// => { owner: true, again: Right("Conflict") }

// a host that finds orphaned runs takes them over, one at a time
const takeOverOrphans = Effect.scoped(Effect.gen(function*() {
  const orphans = yield* Journal.expired()
  const lease = yield* Journal.takeOver()
  return { orphans: orphans.map((run) => run.runId), taken: Option.map(lease, (l) => l.run.runId) }
}))
// => { orphans: ["run-7"], taken: Some("run-7") }: its lease ended with oneOwner's scope (a host that dies
//    leaves its lease to run out first)
// #endregion

// #region faults
const safely = <A, R>(program: Effect.Effect<A, Journal.JournalError, R>) =>
  program.pipe(
    Effect.catchTag("JournalError", (error) => {
      switch (error.reason) {
        case "Unavailable":
        case "Full":
          // nothing of the failed write is durable: stop before the side effect it was meant to cover
          return Effect.fail(`the journal cannot take writes now: ${error.message}`)
        case "Conflict":
          return Effect.fail(`another host owns this run: ${error.message}`)
        default:
          return Effect.fail(error.message)
      }
    })
  )
// #endregion

const build = <E>(layer: Layer.Layer<Journal.Journal, E>) =>
  Effect.map(Layer.build(layer), Context.get(Journal.Journal))

describe("docs/durable-runs.md", () => {
  it("the examples are the code of this file", () =>
    checkExamples(
      new URL("./durable-runs.md", import.meta.url),
      new URL("./durable-runs.test.ts", import.meta.url)
    ))

  it.effect("layers: building none of them yet touches anything", () =>
    Effect.sync(() => {
      expect(Layer.isLayer(Embedded) && Layer.isLayer(Shared) && Layer.isLayer(InMemory)).toBe(true)
      expect(fs.existsSync("agent-journal.db")).toBe(false)
    }))

  it.effect("record a call: one dispatch, its key, its outcome (memory)", () =>
    Effect.gen(function*() {
      const result = yield* Effect.provide(recordOneCall, InMemory)
      expect(result.attempts).toEqual(Option.some(1))
      expect(Option.getOrThrow(result.key)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8/)
      expect(result.key).toEqual(Option.some(Journal.idempotencyKey({ runId: "run-42", step: 0, callId: "call_1" })))
      expect(result.outcome).toEqual(Option.some(Either.right("invoice INV-7 created")))
    }))

  it.scoped("record a call: the same on SQLite", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "durable-runs-doc-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      )
      const journal = yield* build(Journal.layerSqlite({ filename: path.join(dir, "agent-journal.db") }))
      const result = yield* Effect.provideService(recordOneCall, Journal.Journal, journal)
      expect(result.outcome).toEqual(Option.some(Either.right("invoice INV-7 created")))
    }))

  it.scoped("leases: a second acquire is a Conflict; a released lease's run is taken over at once", () =>
    Effect.gen(function*() {
      const journal = yield* build(InMemory)
      const provided = <A, E>(effect: Effect.Effect<A, E, Journal.Journal>) =>
        Effect.provideService(effect, Journal.Journal, journal)
      expect(yield* provided(oneOwner)).toEqual({ owner: true, again: Either.right("Conflict") })
      // released when oneOwner's scope closed: listed at once
      expect(yield* provided(takeOverOrphans)).toEqual({ orphans: ["run-7"], taken: Option.some("run-7") })
    }))

  it.effect("faults: a typed reason, never a defect", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        safely(
          Effect.fail(new Journal.JournalError({ reason: "Full", message: "SQLITE_FULL: database or disk is full" }))
        )
      )
      expect(error).toBe("the journal cannot take writes now: SQLITE_FULL: database or disk is full")
      const conflict = yield* Effect.flip(
        safely(Effect.flatMap(Journal.Journal, (j) =>
          j.dispatch({
            runId: "nobody",
            step: 0,
            callId: "c",
            index: 0,
            tool: "x",
            arguments: "{}",
            idempotencyKey: "k",
            replay: "unknown"
          }))).pipe(Effect.provide(InMemory))
      )
      expect(conflict).toBe("no run \"nobody\" was begun")
    }))
})
