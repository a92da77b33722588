/**
 * The examples of docs/durable-runs.md, run. Each `// #region name` below is the code of the block marked
 * `<!-- example: name -->` in the page, imports aside; the first test checks that they are the same text, the
 * others run the examples (on SQLite in a temporary folder, or the memory journal) and check what the page says.
 * The keyed tool calls a real HTTP server (node:http, on a free port) that takes an `Idempotency-Key` header.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Agent, Executor, Journal, Recorder, Tool, Toolkit, ToolResult } from "../src/index.js"
import { checkExamples } from "./examples.js"

const folder = fs.mkdtempSync(path.join(os.tmpdir(), "durable-runs-doc-"))
const filename = path.join(folder, "agent-journal.db")

/** An invoices API that takes an `Idempotency-Key`: a second POST with a key it has seen gives the first answer. */
const invoices = { created: 0, requests: 0, byKey: new Map<string, string>() }
const server = http.createServer((request, response) => {
  invoices.requests++
  const key = request.headers["idempotency-key"]
  if (request.method !== "POST" || typeof key !== "string") {
    response.writeHead(400).end()
    return
  }
  let answer = invoices.byKey.get(key)
  if (answer === undefined) {
    answer = JSON.stringify({ id: `INV-${++invoices.created}` })
    invoices.byKey.set(key, answer)
  }
  request.resume()
  response.writeHead(201, { "content-type": "application/json" }).end(answer)
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const invoicesUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/invoices`

// #region journaled-run
// given: filename: string

const Define = Tool.make("define", {
  description: "Define a word",
  parameters: { word: Schema.String },
  replay: "safe", // a read: safe to run again
  handler: ({ word }) => Effect.succeed(`${word}: a small brown bird`)
})

const wren = Agent.run({
  toolkit: Toolkit.make(Define),
  prompt: "What is a wren?",
  runId: "wren-1", // with a Journal provided: journaled under this id, and resumed by it
  model: (transcript) =>
    Effect.succeed(
      transcript.length === 1
        ? { calls: [{ id: "call_1", name: "define", arguments: "{\"word\":\"wren\"}" }] }
        : { text: "A small brown bird." }
    )
}).pipe(Effect.provide(Journal.layerSqlite({ filename })))
// => { reason: "NoCalls", text: "A small brown bird.", ... }; run again after a crash, the same program resumes
//    wren-1: the steps the journal has are not asked for again
// #endregion

// #region keyed-tool
// given: invoicesUrl: string

class BillingError extends Schema.TaggedError<BillingError>()("BillingError", { message: Schema.String }) {}

const CreateInvoice = Tool.make("create_invoice", {
  description: "Create an invoice for a customer",
  parameters: { customer: Schema.String, amount: Schema.Number },
  failure: BillingError,
  // the key goes to the API, which creates one invoice per key: running the call again is safe with it
  replay: "keyed",
  handler: ({ amount, customer }) =>
    Effect.gen(function*() {
      const call = Option.getOrThrow(yield* Tool.currentCall)
      const response = yield* Effect.tryPromise({
        try: () =>
          fetch(invoicesUrl, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": call.idempotencyKey },
            body: JSON.stringify({ customer, amount })
          }).then((r) => r.json() as Promise<{ readonly id: string }>),
        catch: (error) => new BillingError({ message: `the billing API failed: ${String(error)}` })
      })
      return `invoice ${response.id} created`
    })
})
// #endregion

// #region batch
// continues the example "keyed-tool"

const bill = Executor.run(Toolkit.make(CreateInvoice), [
  { id: "call_1", name: "create_invoice", arguments: { customer: "ACME", amount: 120 } }
], { runId: "billing-7" })

// in the process that takes the run over after the first one died mid-call
const resumed = Executor.resume(Toolkit.make(CreateInvoice), "billing-7")
// => [Right("invoice INV-1 created")]: the call ran again with its first key, and the API created nothing more
// #endregion

// #region cleanup
const Scratch = Schema.Struct({ path: Schema.String })

// a tool writes Recorder.makeRecord("scratch/folder", Scratch, { path }) right after making its folder
const ScratchCleanup = Journal.layerCleanup({
  "scratch/folder": (leftovers) =>
    Effect.sync(() => {
      for (const { finished, record } of leftovers) {
        const decoded = Recorder.decode(record.record, Scratch)
        // a finished call's folder may be what its result points to: keep it
        if (!finished && Either.isRight(decoded)) fs.rmSync(decoded.right.path, { recursive: true, force: true })
      }
    })
})
// #endregion

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
  afterAll(() => {
    server.close()
    fs.rmSync(folder, { recursive: true, force: true })
  })

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

  it.effect("a journaled run: journaled in the file; the same program again gives it back without asking", () =>
    Effect.gen(function*() {
      const first = yield* wren
      expect(first.reason).toBe("NoCalls")
      expect(first.text).toBe("A small brown bird.")
      const again = yield* wren
      expect(again.transcript).toEqual(first.transcript)
      const steps = yield* Effect.provide(Journal.steps("wren-1"), Journal.layerSqlite({ filename }))
      expect(steps).toHaveLength(2)
    }))

  it.effect("a keyed tool, a batch that died mid-call, resumed: the call runs again with its key, one invoice", () =>
    Effect.gen(function*() {
      const journal = yield* build(InMemory)
      // the process dies between the API's answer and the outcome's write: the journal has the dispatch only
      const dying: Journal.Journal.Service = {
        ...journal,
        outcome: () => Effect.fail(new Journal.JournalError({ reason: "Unavailable", message: "the process died" }))
      }
      const died = yield* Effect.flip(Effect.provideService(bill, Journal.Journal, dying))
      expect(died.message).toBe("the process died")
      expect(invoices).toMatchObject({ created: 1, requests: 1 })
      const outcomes = yield* Effect.provideService(resumed, Journal.Journal, journal)
      expect(outcomes.map((o) => Either.map(o, ToolResult.toText))).toEqual([Either.right("invoice INV-1 created")])
      expect(invoices).toMatchObject({ created: 1, requests: 2 })
      const [call] = yield* journal.calls("billing-7")
      expect(Option.map(call.dispatch, (d) => d.attempts)).toEqual(Option.some(2))
    }).pipe(Effect.scoped))

  it.effect("cleanup: the handler removes the folder of a call that never finished, keeps a finished one's", () =>
    Effect.gen(function*() {
      const journal = yield* build(InMemory)
      const unfinished = fs.mkdtempSync(path.join(folder, "scratch-"))
      const finished = fs.mkdtempSync(path.join(folder, "scratch-"))
      yield* journal.begin({ runId: "s", definitionsHash: "h" })
      for (const [callId, dir] of [["a", unfinished], ["b", finished]]) {
        yield* journal.record({
          runId: "s",
          step: 0,
          callId,
          tool: "scratch",
          phase: "during",
          record: Recorder.makeRecord("scratch/folder", Scratch, { path: dir })
        })
      }
      yield* journal.outcome({
        runId: "s",
        step: 0,
        callId: "b",
        index: 1,
        tool: "scratch",
        arguments: "{}",
        outcome: Either.right(ToolResult.text("ok"))
      })
      const handled = yield* Journal.cleanUp("s").pipe(
        Effect.provideService(Journal.Journal, journal),
        Effect.provide(ScratchCleanup)
      )
      expect(handled).toBe(2)
      expect(fs.existsSync(unfinished)).toBe(false)
      expect(fs.existsSync(finished)).toBe(true)
    }).pipe(Effect.scoped))
})
