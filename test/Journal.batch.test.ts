/**
 * A journaled batch (`Executor.run` with a run id, `Executor.resume`): what it writes and when, and how a batch
 * whose process stopped is resumed from what the journal recorded (the replay rules per call, decisions applied,
 * a changed or missing tool), on the memory journal, whose rules are the SQL stores' (Journal.test.ts). Real
 * crashes of real processes on SQLite and Postgres are in Journal.crash.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Option, Ref, Schema, TestClock } from "effect"
import { Executor, Journal, Permission, Recorder, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { countCommits, stores } from "./fixtures/journal.js"

const sqlite = stores[1].database

const memory = stores[0].database

/** Tools that count their runs and give back the key they ran with. */
const counting = () => {
  const runs: Record<string, number> = {}
  const keys: Array<string> = []
  const make = (name: string, replay: Tool.Replay, options: { readonly permission?: boolean } = {}) =>
    Tool.make(name, {
      description: `The ${replay} tool`,
      parameters: { n: Schema.Number },
      replay,
      ...(options.permission === true ? { permission: { action: "write" } } : {}),
      handler: ({ n }) =>
        Effect.gen(function*() {
          runs[name] = (runs[name] ?? 0) + 1
          const key = Option.getOrThrow(yield* Tool.currentCall).idempotencyKey
          keys.push(`${name}:${key}`)
          return `${name} ${n}`
        })
    })
  return { runs, keys, make }
}

const text = (outcome: Executor.Outcome): string =>
  Either.match(outcome, { onLeft: ToolError.toModelText, onRight: ToolResult.toText })

const call = (id: string, name: string, n = 1) => ({ id, name, arguments: JSON.stringify({ n }) })

const provide = (journal: Journal.Journal.Service) => Effect.provideService(Journal.Journal, journal)

describe("a journaled batch", () => {
  it.scoped("journals the run, its calls, each dispatch with its key and replay, and every outcome", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const tools = counting()
      const kit = Toolkit.make(tools.make("safe", "safe"), tools.make("keyed", "keyed"))
      const calls = [call("c1", "safe"), call("c2", "keyed"), call("c3", "nope"), {
        id: "c4",
        name: "safe",
        arguments: "{"
      }]
      const outcomes = yield* provide(journal)(Executor.run(kit, calls, { runId: "batch-1", maxParallel: 2 }))
      expect(outcomes.map(text)).toEqual([
        "safe 1",
        "keyed 1",
        "Error: unknown tool \"nope\"; available tools: safe, keyed",
        expect.stringContaining("Error: invalid arguments:")
      ])

      const run = Option.getOrThrow(yield* journal.run("batch-1"))
      expect(run.status).toBe("completed")
      expect(run.options).toEqual({ kind: "batch", maxParallel: 2 })
      expect(run.definitionsHash).toBe(Journal.fingerprint(kit).definitionsHash)
      const [step] = yield* journal.steps("batch-1")
      expect(step.response).toEqual({
        calls,
        tools: { safe: Journal.fingerprint(kit).tools.safe, keyed: Journal.fingerprint(kit).tools.keyed }
      })
      const rows = yield* journal.calls("batch-1")
      expect(rows.map((c) => [c.callId, c.tool, Option.isSome(c.dispatch), Option.isSome(c.outcome)])).toEqual([
        ["c1", "safe", true, true],
        ["c2", "keyed", true, true],
        ["c3", "nope", false, true],
        ["c4", "safe", false, true]
      ])
      const key = (callId: string) => Journal.idempotencyKey({ runId: "batch-1", step: 0, callId })
      expect(rows.slice(0, 2).map((c) => Option.getOrThrow(c.dispatch))).toMatchObject([
        { idempotencyKey: key("c1"), replay: "safe", attempts: 1 },
        { idempotencyKey: key("c2"), replay: "keyed", attempts: 1 }
      ])
      // the key the handler saw is the journal's
      expect(tools.keys).toEqual([`safe:${key("c1")}`, `keyed:${key("c2")}`])
      expect(rows.map((c) => text(Option.getOrThrow(c.outcome).outcome))).toEqual(outcomes.map(text))
    }))

  it.scoped("journals each permission decision and each record; the host's requester and recorder still get them", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const Spawn = Tool.make("spawn", {
        description: "Records a handle, after asking",
        permission: { action: "execute", describe: () => "spawn a worker" },
        handler: () => Effect.as(Recorder.write(new Recorder.Record({ namespace: "w/pid", data: { pid: 7 } })), "ok")
      })
      const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
      const asked: Array<string> = []
      const outcomes = yield* Executor.run(Toolkit.make(Spawn), [
        { id: "a", name: "spawn", arguments: "{}" },
        { id: "b", name: "spawn", arguments: "{}" }
      ], { runId: "batch-2" }).pipe(
        provide(journal),
        Effect.provide(Recorder.layerMemory(entries)),
        Effect.provide(Permission.layer((request) => {
          asked.push(request.callId)
          return Effect.succeed(request.callId === "a" ? Permission.allow : Permission.deny("not b"))
        }))
      )
      expect(outcomes.map(text)).toEqual(["ok", "Error: permission denied: spawn a worker: not b"])
      expect(asked).toEqual(["a", "b"])
      expect((yield* journal.decisions("batch-2")).map((d) => [d.callId, d.description, d.decision])).toEqual([
        ["a", "spawn a worker", { _tag: "Allow" }],
        ["b", "spawn a worker", { _tag: "Deny", reason: "not b" }]
      ])
      expect((yield* journal.records("batch-2")).map((r) => [r.callId, r.phase, r.record.data])).toEqual([
        ["a", "during", { pid: 7 }]
      ])
      expect((yield* Ref.get(entries)).map((e) => e.callId)).toEqual(["a"])
      // the denied call never started: an outcome, no dispatch
      const rows = yield* journal.calls("batch-2")
      expect(rows.map((c) => Option.isSome(c.dispatch))).toEqual([true, false])
    }))

  it.scoped("the dispatches of calls starting together share a transaction, as do their outcomes", () =>
    Effect.gen(function*() {
      const batches: Array<number> = []
      const journal = yield* (yield* memory).host({ wrap: countCommits(batches) })
      const tools = counting()
      const calls = Array.from({ length: 16 }, (_, i) => call(`c${i}`, "safe", i))
      yield* provide(journal)(Executor.run(Toolkit.make(tools.make("safe", "safe")), calls, { runId: "b" }))
      // the step, then per 8 calls in flight: their dispatches, their outcomes; then the run's end
      expect(batches).toEqual([1, 8, 8, 8, 8, 1])
    }))

  it.scoped("a call id the model repeats gets a row of its own", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const tools = counting()
      yield* provide(journal)(
        Executor.run(Toolkit.make(tools.make("safe", "safe")), [call("x", "safe"), call("x", "safe")], { runId: "d" })
      )
      expect((yield* journal.calls("d")).map((c) => c.callId)).toEqual(["x", "x#1"])
      expect(new Set(tools.keys).size).toBe(2)
    }))
})

describe("resuming a batch whose process stopped", () => {
  /**
   * What a process that died mid-batch leaves: the run and its calls journaled, then per call what it got to
   * write, and its lease left to expire.
   */
  const crashed = (
    db: { readonly plant: (runId: string, owner: string, millis: number) => Effect.Effect<void, Journal.JournalError> },
    journal: Journal.Journal.Service,
    kit: Toolkit.Toolkit<Tool.Any>,
    calls: ReadonlyArray<Executor.ToolCall>,
    progress: ReadonlyArray<"finished" | "running" | "waiting">,
    more: (runId: string) => Effect.Effect<void, Journal.JournalError> = () => Effect.void
  ) =>
    Effect.gen(function*() {
      const runId = "crashed"
      const fingerprint = Journal.fingerprint(kit)
      yield* journal.begin({ runId, ...fingerprint, options: { kind: "batch" } })
      yield* journal.step({ runId, step: 0, response: { calls, tools: fingerprint.tools } })
      yield* Effect.forEach(calls, (c, index) => {
        const key = { runId, step: 0, callId: c.id }
        const base = { ...key, index, tool: c.name, arguments: c.arguments }
        const tool = kit.byName.get(c.name)
        const dispatch = journal.dispatch({
          ...base,
          // a key minted by the dead host: the resumed run must use it, not mint one
          idempotencyKey: `dead-host-key-${c.id}`,
          replay: tool?.replay ?? "unknown"
        })
        switch (progress[index]) {
          case "finished":
            return Effect.zipRight(
              dispatch,
              journal.outcome({ ...base, outcome: Either.right(ToolResult.text("before")) })
            )
          case "running":
            return dispatch
          case "waiting":
            return Effect.void
        }
      })
      yield* more(runId)
      yield* db.plant(runId, "dead-host", -1)
      return runId
    })

  it.scoped("finished calls keep their outcome, safe and keyed ones run again (keyed with its key), unknown ones do not", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host()
      const tools = counting()
      const kit = Toolkit.make(
        tools.make("safe", "safe"),
        tools.make("keyed", "keyed"),
        tools.make("unknown", "unknown")
      )
      const calls = [
        call("f", "safe"),
        call("s", "safe"),
        call("k", "keyed"),
        call("u", "unknown"),
        call("w", "unknown")
      ]
      const runId = yield* crashed(db, journal, kit, calls, ["finished", "running", "running", "running", "waiting"])

      const outcomes = yield* provide(journal)(Executor.resume(kit, runId))
      expect(outcomes.map(text)).toEqual([
        "before",
        "safe 1",
        "keyed 1",
        "Error: the call was running when its process stopped, so whether it took effect is unknown: check its " +
        "effect before calling it again",
        "unknown 1"
      ])
      const unknown = outcomes[3]
      expect(Either.isLeft(unknown) && unknown.left).toMatchObject({
        _tag: "ToolOutcomeUnknown",
        tool: "unknown",
        idempotencyKey: "dead-host-key-u"
      })
      // the finished one did not run again; the waiting one ran for the first time, with a key of its own
      expect(tools.runs).toEqual({ safe: 1, keyed: 1, unknown: 1 })
      expect(tools.keys).toContain("keyed:dead-host-key-k")
      expect(tools.keys).toContain(`unknown:${Journal.idempotencyKey({ runId, step: 0, callId: "w" })}`)

      const rows = yield* journal.calls(runId)
      expect(rows.map((c) => Option.map(c.dispatch, (d) => d.attempts))).toEqual([
        Option.some(1),
        Option.some(2),
        Option.some(2),
        Option.some(1),
        Option.some(1)
      ])
      expect(rows.every((c) => Option.isSome(c.outcome))).toBe(true)
      expect(Option.getOrThrow(yield* journal.run(runId)).status).toBe("completed")
      // resumed again, nothing runs: every outcome is on record
      expect((yield* provide(journal)(Executor.resume(kit, runId))).map(text)).toEqual(outcomes.map(text))
      expect(tools.runs).toEqual({ safe: 1, keyed: 1, unknown: 1 })
    }))

  it.scoped("a decision on record is applied, never asked again", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host()
      const tools = counting()
      const kit = Toolkit.make(tools.make("keyed", "keyed", { permission: true }))
      const calls = [call("yes", "keyed"), call("no", "keyed")]
      const decide = (runId: string, callId: string, decision: Permission.Decision) =>
        journal.decision({ runId, step: 0, callId, tool: "keyed", action: "write", description: "d", decision })
      const runId = yield* crashed(db, journal, kit, calls, ["running", "waiting"], (runId) =>
        Effect.zipRight(
          decide(runId, "yes", Permission.allow),
          decide(runId, "no", Permission.deny("not that one"))
        ))
      const asked: Array<string> = []
      const outcomes = yield* Executor.resume(kit, runId).pipe(
        provide(journal),
        Effect.provide(Permission.layer((request) => Effect.sync(() => (asked.push(request.callId), Permission.allow))))
      )
      expect(asked).toEqual([])
      expect(outcomes.map(text)).toEqual(["keyed 1", "Error: permission denied: keyed (write): not that one"])
    }))

  it.scoped("a tool whose definition changed: a running call's outcome is unknown, a waiting one is refused; a gone one is not found", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host()
      const before = counting()
      const kit = Toolkit.make(before.make("safe", "safe"), before.make("other", "safe"))
      const calls = [call("r", "safe"), call("w", "safe"), call("gone-r", "other"), call("gone-w", "other")]
      const runId = yield* crashed(db, journal, kit, calls, ["running", "waiting", "running", "waiting"])

      const after = counting()
      const changed = Tool.make("safe", {
        description: "The safe tool, described anew",
        parameters: { n: Schema.Number },
        replay: "safe",
        handler: () => Effect.succeed("ran")
      })
      const outcomes = yield* provide(journal)(Executor.resume(Toolkit.make(changed), runId))
      expect(outcomes.map((o) => Either.isLeft(o) && o.left._tag)).toEqual([
        "ToolOutcomeUnknown",
        "InvalidArguments",
        "ToolOutcomeUnknown",
        "ToolNotFound"
      ])
      expect(text(outcomes[1])).toBe(
        "Error: invalid arguments: written for an earlier definition of the tool \"safe\", which has changed since: " +
          "call it again with arguments for its current definition"
      )
      expect(after.runs).toEqual({})
    }))

  it.scoped("a tool that now says less about replay than it did is not run again", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host()
      const before = counting()
      const runId = yield* crashed(db, journal, Toolkit.make(before.make("t", "keyed")), [call("r", "t")], ["running"])
      const after = counting()
      const outcomes = yield* provide(journal)(Executor.resume(Toolkit.make(after.make("t", "unknown")), runId))
      expect(Either.isLeft(outcomes[0]) && outcomes[0].left._tag).toBe("ToolOutcomeUnknown")
      expect(after.runs).toEqual({})
    }))

  it.scoped("resuming a run never begun fails UnknownRun; running other calls under an existing id fails Conflict", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const tools = counting()
      const kit = Toolkit.make(tools.make("safe", "safe"))
      expect(yield* Effect.flip(provide(journal)(Executor.resume(kit, "never")))).toMatchObject({
        reason: "UnknownRun",
        message: "no run \"never\" was begun"
      })
      yield* provide(journal)(Executor.run(kit, [call("a", "safe")], { runId: "one" }))
      const other = yield* Effect.flip(provide(journal)(Executor.run(kit, [call("b", "safe")], { runId: "one" })))
      expect(other.reason).toBe("Conflict")
      expect(other.message).toContain("was begun with other calls")
      // the same calls again: the run as it was, nothing run again
      expect((yield* provide(journal)(Executor.run(kit, [call("a", "safe")], { runId: "one" }))).map(text)).toEqual([
        "safe 1"
      ])
      expect(tools.runs).toEqual({ safe: 1 })
    }))
})

describe("a journal that fails mid-batch", () => {
  it.scoped("a dispatch that cannot be made durable: nothing runs, the batch fails with the journal's error", () =>
    Effect.gen(function*() {
      let failing = false
      const journal = yield* (yield* memory).host({
        wrap: (store) => ({
          ...store,
          commit: (writes, owner, now) =>
            failing
              ? Effect.fail(new Journal.JournalError({ reason: "Unavailable", message: "the database went away" }))
              : store.commit(writes, owner, now)
        })
      })
      const tools = counting()
      const kit = Toolkit.make(tools.make("safe", "safe"))
      const calls = [call("a", "safe"), call("b", "safe")]
      // the step is the last write that gets through
      const steps = journal.step
      const failingAfterStep: Journal.Journal.Service = {
        ...journal,
        step: (entry) => Effect.zipRight(steps(entry), Effect.sync(() => void (failing = true)))
      }
      const error = yield* Effect.flip(provide(failingAfterStep)(Executor.run(kit, calls, { runId: "f" })))
      expect(error).toMatchObject({ reason: "Unavailable", message: "the database went away" })
      expect(tools.runs).toEqual({})
    }))

  it.scoped("SQLite full (its page limit, the error a full disk gives) at the dispatch: nothing runs, Full", () =>
    Effect.gen(function*() {
      const db = yield* sqlite
      const sql = db.sql!
      const journal = yield* db.host()
      const steps = journal.step
      // once the calls are journaled, the file cannot grow: a dispatch bigger than what is left fails
      const filling: Journal.Journal.Service = {
        ...journal,
        step: (entry) =>
          Effect.zipRight(
            steps(entry),
            Effect.flatMap(
              sql<{ page_count: number }>`PRAGMA page_count`,
              ([{ page_count }]) => sql.unsafe(`PRAGMA max_page_count = ${page_count}`)
            ).pipe(Effect.orDie)
          )
      }
      const tools = counting()
      const big = { id: "big", name: "safe", arguments: JSON.stringify({ n: 1, pad: "x".repeat(200_000) }) }
      const Loose = Tool.make("safe", {
        description: "Counts its runs",
        parameters: Schema.Struct({ n: Schema.Number }),
        replay: "safe",
        handler: () => Effect.sync(() => void (tools.runs.safe = (tools.runs.safe ?? 0) + 1))
      })
      const error = yield* Effect.flip(
        Effect.provideService(Executor.run(Toolkit.make(Loose), [big], { runId: "full" }), Journal.Journal, filling)
      )
      expect(error).toMatchObject({ reason: "Full" })
      expect(error.message).toContain("SQLITE_FULL")
      expect(tools.runs).toEqual({})
      expect((yield* journal.calls("full")).filter((c) => Option.isSome(c.dispatch))).toEqual([])
    }))

  it.scoped("a lease lost mid-run (another host took the run over) stops the running calls and fails Conflict", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host({ leaseTtl: "3 seconds" })
      let interrupted = false
      const Waits = Tool.make("waits", {
        description: "Waits for ever",
        replay: "safe",
        handler: () => Effect.onInterrupt(Effect.never, () => Effect.sync(() => void (interrupted = true)))
      })
      const fiber = yield* Effect.fork(
        Effect.provideService(
          Executor.run(Toolkit.make(Waits), [{ id: "w", name: "waits", arguments: "{}" }], { runId: "taken" }),
          Journal.Journal,
          journal
        )
      )
      yield* Effect.yieldNow()
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      // this host stalled; another took the run over: the next renewal finds it gone
      yield* db.plant("taken", "other-host", 60_000)
      yield* TestClock.adjust("2 seconds")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error).toMatchObject({
        reason: "Conflict",
        message: "the lease of run \"taken\" was taken over by another host"
      })
      expect(interrupted).toBe(true)
    }))

  it.scoped("a run whose lease another host holds fails Conflict before anything runs", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host()
      const tools = counting()
      const kit = Toolkit.make(tools.make("safe", "safe"))
      yield* journal.begin({ runId: "held", definitionsHash: "h", options: { kind: "batch" } })
      yield* db.plant("held", "live-host", 60_000)
      const error = yield* Effect.flip(provide(journal)(Executor.run(kit, [call("a", "safe")], { runId: "held" })))
      expect(error.reason).toBe("Conflict")
      expect(error.message).toContain("leased by live-host")
      expect(tools.runs).toEqual({})
    }))
})
