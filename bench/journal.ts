/**
 * Row 8: durable calls. 1,000 calls of a no-op tool through the executor, 8 in flight, journaled in SQLite
 * (`Executor.run` with a `runId`: the run begun and leased, its calls journaled, each call's dispatch durable
 * before its handler runs and its outcome as it ends, with group commit), against a baseline that writes the same
 * rows per call with better-sqlite3 directly, one durable transaction per call, and runs nothing; both in WAL mode
 * with `synchronous = FULL`, on the same disk, each in a file of its own, interleaved. The baseline gets the better
 * side of the durability rule: it makes a call's two rows durable in one transaction, where the journal makes the
 * dispatch durable before the handler runs and the outcome once it has.
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Executor from "../src/Executor.js"
import { encodeOutcome } from "../src/internal/journal/codec.js"
import * as Journal from "../src/Journal.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import * as ToolResult from "../src/ToolResult.js"
import type { Line } from "./harness.js"
import { interleave, median, micros, plan, quick, ratioOf, report } from "./harness.js"

const CALLS = 1000
const IN_FLIGHT = 8
const ARGUMENTS = "{\"path\":\"/tmp/bench.txt\"}"

// on the disk the journal would use, not a tmpfs: fsync is what this row is about
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-journal-"))
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }))

const runtime = ManagedRuntime.make(Journal.layerSqlite({ filename: path.join(dir, "journal.db") }))
let rounds = 0

const Noop = Tool.make("read_file", {
  description: "Does nothing",
  parameters: { path: Schema.String },
  replay: "safe",
  handler: () => Effect.succeed("ok")
})
const toolkit = Toolkit.make(Noop)
const calls: ReadonlyArray<Executor.ToolCall> = Array.from(
  { length: CALLS },
  (_, i) => ({ id: `call_${i}`, name: "read_file", arguments: ARGUMENTS })
)

/** One round through the executor with the journal: a new run of 1,000 calls, `inFlight` at a time. */
const ours = (inFlight: number) => async (): Promise<number> => {
  const runId = `run-${rounds++}`
  return runtime.runPromise(Effect.gen(function*() {
    const start = performance.now()
    const outcomes = yield* Executor.run(toolkit, calls, { runId, maxParallel: inFlight })
    const elapsed = performance.now() - start
    if (!outcomes.every(Either.isRight)) throw new Error("row 8: a call failed")
    return elapsed
  }))
}

const OK = Either.right(ToolResult.text("ok"))
const OK_JSON = Either.getOrThrow(encodeOutcome(OK))

// the baseline: the same table, the same two row writes per call, one durable transaction per call
const baselineDb = new Database(path.join(dir, "baseline.db"))
baselineDb.pragma("journal_mode = WAL")
baselineDb.pragma("synchronous = FULL")
baselineDb.exec(`CREATE TABLE calls (
  run_id TEXT NOT NULL, step INTEGER NOT NULL, call_id TEXT NOT NULL, call_index INTEGER NOT NULL,
  tool TEXT NOT NULL, arguments TEXT NOT NULL, idempotency_key TEXT, replay TEXT, attempts INTEGER NOT NULL,
  dispatched_at INTEGER, outcome TEXT, finished_at INTEGER, PRIMARY KEY (run_id, step, call_id))`)
const insertDispatch = baselineDb.prepare(`INSERT INTO calls AS c (run_id, step, call_id, call_index, tool,
    arguments, idempotency_key, replay, attempts, dispatched_at) VALUES (?, 0, ?, ?, 'read_file', ?, ?, 'safe', 1, ?)
  ON CONFLICT (run_id, step, call_id) DO UPDATE SET attempts = c.attempts + 1`)
const insertOutcome = baselineDb.prepare(`INSERT INTO calls AS c (run_id, step, call_id, call_index, tool,
    arguments, attempts, outcome, finished_at) VALUES (?, 0, ?, ?, 'read_file', ?, 0, ?, ?)
  ON CONFLICT (run_id, step, call_id) DO UPDATE SET outcome = excluded.outcome, finished_at = excluded.finished_at
  WHERE c.outcome IS NULL`)
const perCall = baselineDb.transaction((runId: string, i: number) => {
  const callId = `call_${i}`
  insertDispatch.run(runId, callId, i, ARGUMENTS, Journal.idempotencyKey({ runId, step: 0, callId }), Date.now())
  insertOutcome.run(runId, callId, i, ARGUMENTS, OK_JSON, Date.now())
})
let baselineRounds = 0

const baseline = async (): Promise<number> => {
  const runId = `run-${baselineRounds++}`
  const start = performance.now()
  for (let i = 0; i < CALLS; i++) perCall(runId, i)
  return performance.now() - start
}

const check = async () => {
  await ours(IN_FLIGHT)()
  const journaled = await runtime.runPromise(Effect.flatMap(Journal.Journal, (journal) => journal.calls("run-0")))
  if (journaled.length !== CALLS || !journaled.every((c) => c.outcome._tag === "Some" && c.dispatch._tag === "Some")) {
    throw new Error("row 8: the journal did not hold every call's dispatch and outcome")
  }
}

const main = async () => {
  await check()
  const variants: Record<string, () => Promise<number>> = { ours: ours(IN_FLIGHT), baseline }
  // for information only: one call at a time leaves group commit nothing to group (left out of a quick run)
  if (!quick) variants.serial = ours(1)
  const figures = await interleave(variants, { ...plan({ warmup: 1, rounds: 7 }), label: "row 8" })
  const each = (label: string) => micros(median(figures[label]) / CALLS)
  const vs = ratioOf(figures.ours, figures.baseline)
  const lines: Array<Line> = [{
    id: "8",
    what: `${CALLS.toLocaleString("en-US")} calls of a no-op tool through the executor, ${IN_FLIGHT} in flight, ` +
      "journaled in SQLite (group commit, WAL, synchronous=FULL)",
    figure: `${each("ours")}/call`,
    baseline: `better-sqlite3, one durable transaction per call ${each("baseline")}/call`,
    ...vs,
    target: "<= 1.0x",
    met: vs.ratio <= 1
  }]
  if (figures.serial !== undefined) {
    lines.push({
      id: "8b",
      what: "the same, one call at a time (two durable transactions per call, nothing to group); for information",
      figure: `${each("serial")}/call`,
      baseline: `better-sqlite3 ${each("baseline")}/call`,
      ...ratioOf(figures.serial, figures.baseline),
      target: "-",
      met: null
    })
  }
  await runtime.dispose()
  baselineDb.close()
  report(lines)
}

await main()
