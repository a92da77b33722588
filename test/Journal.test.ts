/**
 * What a run writes and reads back, the same on every store (memory, SQLite, Postgres): the run, steps, calls with
 * their dispatch and outcome, records, decisions; the idempotency rules of each write; group commit; the write
 * bound. Leases are in Journal.lease.test.ts, faults in Journal.faults.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Either, FastCheck, Option, Schema } from "effect"
import * as fs from "node:fs"
import { Journal, Recorder, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import * as Codec from "../src/internal/journal/codec.js"
import { begin, call, countCommits as counting, dispatch, stores } from "./fixtures/journal.js"

const echo = Tool.make("echo", {
  description: "Echo the text",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text)
})

const key = (runId: string, callId: string) => Journal.idempotencyKey(call(runId, callId))

const outcome = (
  runId: string,
  callId: string,
  index: number,
  value: Either.Either<ToolResult.ToolResult, ToolError.ToolError>
) => ({
  ...call(runId, callId),
  index,
  tool: "echo",
  arguments: `{"text":"${callId}"}`,
  outcome: value
})

/** Every member of the union, and results with every field set. */
const outcomes: ReadonlyArray<Either.Either<ToolResult.ToolResult, ToolError.ToolError>> = [
  Either.right(ToolResult.text("plain")),
  Either.right(
    ToolResult.make({
      content: [
        { type: "text", text: "a chart:" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "a" } }
      ],
      structured: { rows: 2 },
      details: { pid: 7 },
      terminate: true
    })
  ),
  Either.left(new ToolError.ToolNotFound({ tool: "x", available: ["echo"] })),
  Either.left(
    new ToolError.InvalidArguments({
      tool: "echo",
      problems: [new ToolError.ArgumentProblem({ path: "text", message: "expected a string, got 1" })]
    })
  ),
  Either.left(new ToolError.ToolFailure({ tool: "echo", message: "no such file", error: { code: "ENOENT" } })),
  Either.left(new ToolError.ToolDefect({ tool: "echo", reason: "boom", cause: Cause.die(new Error("boom")) })),
  Either.left(new ToolError.ToolTimeout({ tool: "echo", timeout: Duration.seconds(30) })),
  Either.left(new ToolError.PermissionDenied({ tool: "echo", description: "echo it", reason: "no" })),
  Either.left(new ToolError.ToolInterrupted({ tool: "echo", partial: "half" })),
  Either.left(new ToolError.ToolOutcomeUnknown({ tool: "echo", idempotencyKey: "k" }))
]

/** What the model would see of an outcome: the comparison that matters after a round trip. */
const seen = (value: Either.Either<ToolResult.ToolResult, ToolError.ToolError>) =>
  Either.match(value, {
    onLeft: (error) => ({ error: error._tag, text: ToolError.toModelText(error) }),
    onRight: (result) => ({
      content: result.content,
      structured: result.structured,
      details: result.details,
      terminate: result.terminate
    })
  })

for (const store of stores) {
  describe.skipIf(store.skip)(`Journal on ${store.name}`, () => {
    const test = store.live ? it.scopedLive : it.scoped

    test("begin journals a run once; beginning it again gives it back, resumed and unchanged", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        const first = yield* begin(journal, "run-1")
        expect(first.resumed).toBe(false)
        expect(first.run).toMatchObject({
          runId: "run-1",
          definitionsHash: "h",
          tools: { echo: "e" },
          options: { maxSteps: 4 },
          status: "running"
        })
        expect(Option.isNone(first.run.lease)).toBe(true)
        const again = yield* journal.begin({ runId: "run-1", definitionsHash: "other", options: { maxSteps: 9 } })
        expect(again.resumed).toBe(true)
        expect(again.run.definitionsHash).toBe("h")
        expect(again.run.options).toEqual({ maxSteps: 4 })
        expect(Option.getOrThrow(yield* journal.run("run-1")).runId).toBe("run-1")
        expect(Option.isNone(yield* journal.run("run-2"))).toBe(true)
      }))

    test("a run's steps, calls, records and decisions read back decoded and in order", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        yield* journal.step({ runId: "run-1", step: 1, response: { role: "assistant", text: "second" } })
        yield* journal.step({ runId: "run-1", step: 0, response: { role: "assistant", text: "first" } })
        yield* journal.dispatch(dispatch("run-1", "b", 1, "keyed"))
        yield* journal.dispatch(dispatch("run-1", "a", 0, "safe"))
        const pgid = new Recorder.Record({ namespace: "bash/process", data: { pgid: 4242 } })
        yield* journal.record({ ...call("run-1", "a"), tool: "echo", phase: "during", record: pgid })
        yield* journal.record({
          ...call("run-1", "b"),
          tool: "echo",
          phase: "end",
          record: new Recorder.Record({ namespace: "job", data: { id: "j-1" } })
        })
        yield* journal.decision({
          ...call("run-1", "a"),
          tool: "echo",
          action: "write",
          description: "write a.txt",
          decision: { _tag: "Allow" }
        })
        yield* journal.decision({
          ...call("run-1", "b"),
          tool: "echo",
          action: "execute",
          description: "run rm",
          decision: { _tag: "Deny", reason: "too risky" }
        })
        yield* journal.outcome(outcome("run-1", "a", 0, Either.right(ToolResult.text("a done"))))

        const steps = yield* journal.steps("run-1")
        expect(steps.map((s) => [s.step, s.response])).toEqual([
          [0, { role: "assistant", text: "first" }],
          [1, { role: "assistant", text: "second" }]
        ])
        const calls = yield* journal.calls("run-1")
        expect(calls.map((c) => [c.callId, c.index, c.arguments])).toEqual([
          ["a", 0, "{\"text\":\"a\"}"],
          ["b", 1, "{\"text\":\"b\"}"]
        ])
        const [a, b] = calls
        expect(Option.getOrThrow(a.dispatch)).toMatchObject({
          idempotencyKey: key("run-1", "a"),
          replay: "safe",
          attempts: 1
        })
        expect(Option.getOrThrow(b.dispatch)).toMatchObject({ idempotencyKey: key("run-1", "b"), replay: "keyed" })
        expect(ToolResult.toText(Either.getOrThrow(Option.getOrThrow(a.outcome).outcome))).toBe("a done")
        expect(Option.isNone(b.outcome)).toBe(true)

        const records = yield* journal.records("run-1")
        expect(records.map((r) => [r.callId, r.phase, r.record.namespace, r.record.data])).toEqual([
          ["a", "during", "bash/process", { pgid: 4242 }],
          ["b", "end", "job", { id: "j-1" }]
        ])
        expect(Either.getOrThrow(Recorder.decode(records[0].record, Schema.Struct({ pgid: Schema.Int })))).toEqual({
          pgid: 4242
        })
        expect((yield* journal.records("run-1", "b")).map((r) => r.record.namespace)).toEqual(["job"])
        const decisions = yield* journal.decisions("run-1")
        expect(decisions.map((d) => [d.callId, d.action, d.description, d.decision])).toEqual([
          ["a", "write", "write a.txt", { _tag: "Allow" }],
          ["b", "execute", "run rm", { _tag: "Deny", reason: "too risky" }]
        ])
        expect((yield* journal.decisions("run-1", "a")).length).toBe(1)
      }))

    test("arguments come back as they were given: a JSON string stays a string, a parsed value stays a value", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        yield* journal.dispatch({ ...dispatch("run-1", "raw", 0), arguments: "{\"text\":" })
        yield* journal.dispatch({ ...dispatch("run-1", "parsed", 1), arguments: { text: "hi", n: [1, 2] } })
        const calls = yield* journal.calls("run-1")
        expect(calls.map((c) => c.arguments)).toEqual(["{\"text\":", { text: "hi", n: [1, 2] }])
      }))

    test("a call that never ran has an outcome and no dispatch; one that was running has a dispatch and no outcome", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        yield* journal.outcome(
          outcome("run-1", "unknown-tool", 0, Either.left(new ToolError.ToolNotFound({ tool: "x", available: [] })))
        )
        yield* journal.dispatch(dispatch("run-1", "running", 1))
        const [never, running] = yield* journal.calls("run-1")
        expect(Option.isNone(never.dispatch)).toBe(true)
        expect(Option.getOrThrow(never.outcome).outcome).toMatchObject({ _tag: "Left" })
        expect(Option.isSome(running.dispatch)).toBe(true)
        expect(Option.isNone(running.outcome)).toBe(true)
      }))

    test("a second dispatch counts an attempt; a second outcome and a second response for a step are ignored", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        yield* journal.step({ runId: "run-1", step: 0, response: "first" })
        yield* journal.step({ runId: "run-1", step: 0, response: "second" })
        yield* journal.dispatch(dispatch("run-1", "a", 0))
        yield* journal.dispatch(dispatch("run-1", "a", 0))
        yield* journal.outcome(outcome("run-1", "a", 0, Either.right(ToolResult.text("first"))))
        yield* journal.outcome(outcome("run-1", "a", 0, Either.right(ToolResult.text("second"))))
        expect((yield* journal.steps("run-1")).map((s) => s.response)).toEqual(["first"])
        const [a] = yield* journal.calls("run-1")
        expect(Option.getOrThrow(a.dispatch).attempts).toBe(2)
        expect(ToolResult.toText(Either.getOrThrow(Option.getOrThrow(a.outcome).outcome))).toBe("first")
      }))

    test("every member of the ToolError union and a result with every field round-trip through the journal", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        yield* Effect.forEach(outcomes, (value, i) => journal.outcome(outcome("run-1", `c${i}`, i, value)))
        const back = (yield* journal.calls("run-1")).map((c) => Option.getOrThrow(c.outcome).outcome)
        expect(back.map(seen)).toEqual(outcomes.map(seen))
        const full = Either.getOrThrow(back[1])
        expect(ToolResult.isToolResult(full)).toBe(true)
        expect(full).toMatchObject({ structured: { rows: 2 }, details: { pid: 7 }, terminate: true })
        const defect = Either.flip(back[5]).pipe(Either.getOrThrow)
        expect(defect).toBeInstanceOf(ToolError.ToolDefect)
        expect(ToolError.isToolError(defect)).toBe(true)
      }))

    test("end says how the run ended; runs lists by status, the most recently updated first, up to the limit", () =>
      Effect.gen(function*() {
        const db = yield* store.database
        const journal = yield* db.host()
        for (const runId of ["run-a", "run-b", "run-c"]) {
          yield* begin(journal, runId)
          yield* db.elapse("10 millis")
        }
        yield* journal.end("run-a", "completed")
        expect(Option.getOrThrow(yield* journal.run("run-a")).status).toBe("completed")
        expect((yield* journal.runs()).map((r) => r.runId)).toEqual(["run-a", "run-c", "run-b"])
        expect((yield* journal.runs({ status: "running" })).map((r) => r.runId)).toEqual(["run-c", "run-b"])
        expect((yield* journal.runs({ limit: 1 })).map((r) => r.runId)).toEqual(["run-a"])
        // a limit is a whole number of at least 0 (SQLite alone would read -1 as no limit)
        expect(yield* journal.runs({ limit: -1 })).toEqual([])
        expect((yield* journal.runs({ limit: 1.5 })).length).toBe(1)
      }))

    test("writes for a run never begun fail UnknownRun; the other writes of their transaction are durable", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        const [missing, fine] = yield* Effect.all([
          Effect.either(journal.dispatch(dispatch("no-such-run", "a", 0))),
          Effect.either(journal.dispatch(dispatch("run-1", "a", 0)))
        ], { concurrency: "unbounded" })
        expect(Either.flip(missing).pipe(Either.getOrThrow)).toMatchObject({
          reason: "UnknownRun",
          runId: "no-such-run",
          message: "no run \"no-such-run\" was begun"
        })
        expect(Either.isRight(fine)).toBe(true)
        expect((yield* journal.calls("run-1")).length).toBe(1)
        expect((yield* journal.calls("no-such-run")).length).toBe(0)
      }))

    test("writes from calls that start together share one transaction", () =>
      Effect.gen(function*() {
        const batches: Array<number> = []
        const journal = yield* (yield* store.database).host({ wrap: counting(batches) })
        yield* begin(journal, "run-1")
        yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => i),
          (i) =>
            Effect.zipRight(
              journal.dispatch(dispatch("run-1", `c${i}`, i)),
              journal.outcome(outcome("run-1", `c${i}`, i, Either.right(ToolResult.text(`${i}`))))
            ),
          { concurrency: 8, discard: true }
        )
        expect(batches.reduce((a, b) => a + b, 0)).toBe(16)
        // eight dispatches together, then eight outcomes together: one transaction each, not sixteen
        expect(batches).toEqual([8, 8])
        expect((yield* journal.calls("run-1")).filter((c) => Option.isSome(c.outcome)).length).toBe(8)
      }))

    test("a transaction takes at most maxBatch writes", () =>
      Effect.gen(function*() {
        const batches: Array<number> = []
        const journal = yield* (yield* store.database).host({ wrap: counting(batches), maxBatch: 3 })
        yield* begin(journal, "run-1")
        yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), (i) =>
          journal.dispatch(dispatch("run-1", `c${i}`, i)), {
          concurrency: "unbounded",
          discard: true
        })
        expect(Math.max(...batches)).toBeLessThanOrEqual(3)
        expect(batches.reduce((a, b) =>
          a + b, 0)).toBe(8)
      }))

    test("a write over maxWriteBytes fails Invalid and is not written", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host({ maxWriteBytes: 1000 })
        yield* begin(journal, "run-1")
        const error = yield* Effect.flip(journal.step({ runId: "run-1", step: 0, response: "x".repeat(2000) }))
        expect(error).toMatchObject({
          reason: "Invalid",
          runId: "run-1",
          message: "a step write of 2002 bytes is over the journal's limit of 1000 bytes"
        })
        expect(yield* journal.steps("run-1")).toEqual([])
      }))

    test("an outcome whose content part is not one of MCP's shapes fails Invalid and is not written", () =>
      Effect.gen(function*() {
        const journal = yield* (yield* store.database).host()
        yield* begin(journal, "run-1")
        const bad = ToolResult.parts([{
          type: "text",
          text: "x",
          annotations: { priority: "high" as unknown as number }
        }])
        const error = yield* Effect.flip(journal.outcome(outcome("run-1", "a", 0, Either.right(bad))))
        expect(error.reason).toBe("Invalid")
        expect(error.message).toMatch(/^the outcome of call a cannot be journaled: /)
        expect(yield* journal.calls("run-1")).toEqual([])
      }))
  })
}

describe("Journal keys and fingerprints", () => {
  it("an idempotency key is a version-8 UUID, the same for the same call and different for any other", () => {
    const a = Journal.idempotencyKey({ runId: "run-1", step: 0, callId: "call_1" })
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(Journal.idempotencyKey({ runId: "run-1", step: 0, callId: "call_1" })).toBe(a)
    const others = [
      { runId: "run-2", step: 0, callId: "call_1" },
      { runId: "run-1", step: 1, callId: "call_1" },
      { runId: "run-1", step: 0, callId: "call_2" },
      // the fields are length-prefixed: moving a separator between them is another call
      { runId: "run-1\n0", step: 0, callId: "call_1" }
    ].map(Journal.idempotencyKey)
    expect(new Set([a, ...others]).size).toBe(5)
  })

  it("a fingerprint changes the hash of the changed tool only, and the whole", () => {
    const upper = Tool.make("upper", {
      description: "Uppercase",
      parameters: { text: Schema.String },
      handler: ({ text }) => Effect.succeed(text.toUpperCase())
    })
    const before = Journal.fingerprint(Toolkit.make(echo, upper))
    const echoed = Tool.make("echo", {
      description: "Echo the text back",
      parameters: { text: Schema.String },
      handler: ({ text }) => Effect.succeed(text)
    })
    const after = Journal.fingerprint(Toolkit.make(echoed, upper))
    expect(Object.keys(before.tools)).toEqual(["echo", "upper"])
    expect(after.tools.upper).toBe(before.tools.upper)
    expect(after.tools.echo).not.toBe(before.tools.echo)
    expect(after.definitionsHash).not.toBe(before.definitionsHash)
    // the order of the tools is not part of it
    expect(Journal.fingerprint(Toolkit.make(upper, echo))).toEqual(before)
  })
})

describe("Journal's module graph", () => {
  /** The modules a file loads when it is imported: its static imports, transitively (dynamic imports excluded). */
  const staticGraph = (entry: URL): ReadonlySet<string> => {
    const seen = new Set<string>()
    const packages = new Set<string>()
    const visit = (file: URL) => {
      if (seen.has(file.href)) return
      seen.add(file.href)
      const source = fs.readFileSync(file, "utf8")
      for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^"';]*?\sfrom\s+)?"([^"]+)"/gm)) {
        const target = match[1]
        if (target.startsWith(".")) visit(new URL(target.replace(/\.js$/, ".ts"), file))
        else packages.add(target)
      }
    }
    visit(entry)
    return packages
  }

  it("the root index loads no @effect/sql package: the SQL stores are imported only when their layer is built", () => {
    const packages = [...staticGraph(new URL("../src/index.ts", import.meta.url))]
    expect(packages.filter((p) => p.startsWith("@effect/sql") || p === "better-sqlite3" || p === "pg")).toEqual([])
    // the check sees imports at all: the SQLite store's module does load them
    const sqlite = [...staticGraph(new URL("../src/internal/journal/sqlite.ts", import.meta.url))]
    expect(sqlite).toContain("@effect/sql-sqlite-node/SqliteClient")
  })
})

describe("an outcome's JSON", () => {
  const slow = (value: Either.Either<ToolResult.ToolResult, ToolError.ToolError>) =>
    Codec.toJson(Schema.encodeSync(Codec.Outcome)(value))

  it("of plain text parts (written without the schema) is the schema's encoding, to the character", () =>
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.string({ unit: "binary" }), { maxLength: 4 }),
        FastCheck.boolean(),
        (texts, terminate) => {
          const result = ToolResult.parts(texts.map((text) => ({ type: "text" as const, text })))
          const value = Either.right(terminate ? ToolResult.withTerminate(result) : result)
          expect(Either.getOrThrow(Codec.encodeOutcome(value))).toBe(slow(value))
          expect(Schema.decodeSync(Schema.parseJson(Codec.Outcome))(Either.getOrThrow(Codec.encodeOutcome(value))))
            .toEqual(value)
        }
      ),
      { seed: 17, numRuns: 100 }
    ))

  it("of anything else is the schema's encoding", () => {
    for (const value of outcomes) expect(Either.getOrThrow(Codec.encodeOutcome(value))).toBe(slow(value))
    const annotated = ToolResult.parts([{ type: "text", text: "x", annotations: { priority: 1 } }])
    expect(Either.getOrThrow(Codec.encodeOutcome(Either.right(annotated)))).toBe(slow(Either.right(annotated)))
  })
})
