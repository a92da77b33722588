/**
 * A journaled agent run (`Agent.run` / `Agent.stream` with a `runId` and a `Journal` provided): what it writes,
 * and how a run stopped mid-step is resumed from its journal (the model not asked again for the steps it answered,
 * the interrupted step's calls finished by the replay rules), on the memory journal. A run killed with its process
 * is in Journal.crash.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Either, Fiber, Layer, Option, Schema, Stream } from "effect"
import { Agent, Journal, Recorder, Tool, ToolError, Toolkit } from "../src/index.js"
import type { Executor } from "../src/index.js"
import { stores } from "./fixtures/journal.js"

const memory = stores[0].database

/** A scripted model: one batch per step as given, then a last answer; each request counted by its step. */
const scripted =
  (batches: ReadonlyArray<ReadonlyArray<Executor.ToolCall>>, asked: Array<number>) =>
  (_: ReadonlyArray<Agent.Message>, context: Agent.ModelContext) =>
    Effect.sync((): Agent.Turn => {
      asked.push(context.step)
      const calls = batches[context.step]
      return calls === undefined ? { text: `done after ${context.step} steps` } : { text: "", calls }
    })

const call = (id: string, name: string) => ({ id, name, arguments: "{}" })

const modelTextOf = (outcome: Agent.Step["outcomes"][number]) =>
  Either.match(outcome, {
    onLeft: ToolError.toModelText,
    onRight: (r) => String(r.content[0]?.type === "text" && r.content[0].text)
  })

/** Tools for a step that stops mid-way: `finished` ends at once, the others wait for `release` (never, before a crash). */
const tools = (release: Effect.Effect<void>, started: Deferred.Deferred<void>) => {
  const runs: Record<string, number> = {}
  const make = (name: string, replay: Tool.Replay, waits: boolean) =>
    Tool.make(name, {
      description: `${name}, ${replay}`,
      replay,
      handler: () =>
        Effect.gen(function*() {
          runs[name] = (runs[name] ?? 0) + 1
          if (waits) {
            yield* Deferred.succeed(started, undefined)
            yield* release
          }
          return `${name} ran`
        })
    })
  return {
    runs,
    kit: Toolkit.make(make("finished", "safe", false), make("safe", "safe", true), make("unknown", "unknown", true))
  }
}

describe("a journaled agent run", () => {
  it.scoped("journals its options and prompt, each step's response before its calls, each call; ends completed", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const asked: Array<number> = []
      const started = yield* Deferred.make<void>()
      const { kit } = tools(Effect.void, started)
      const result = yield* Agent.run({
        toolkit: kit,
        prompt: "go",
        runId: "agent-1",
        maxSteps: 5,
        model: scripted([[call("c1", "finished")], [call("c2", "safe")]], asked)
      }).pipe(Effect.provideService(Journal.Journal, journal))
      expect(result.text).toBe("done after 2 steps")
      expect(result.runId).toBe("agent-1")

      const run = Option.getOrThrow(yield* journal.run("agent-1"))
      expect(run.status).toBe("completed")
      expect(run.options).toEqual({ kind: "agent", prompt: [{ role: "user", content: "go" }], maxSteps: 5 })
      const steps = yield* journal.steps("agent-1")
      expect(steps.map((s) => (s.response as { response: Agent.Response }).response.calls.map((c) => c.id))).toEqual([
        ["c1"],
        ["c2"],
        []
      ])
      expect((steps[0].response as { tools: object }).tools).toEqual({
        finished: Journal.fingerprint(kit).tools.finished
      })
      const calls = yield* journal.calls("agent-1")
      expect(calls.map((c) => [c.step, c.callId, Option.getOrThrow(c.dispatch).idempotencyKey])).toEqual([
        [0, "c1", Journal.idempotencyKey({ runId: "agent-1", step: 0, callId: "c1" })],
        [1, "c2", Journal.idempotencyKey({ runId: "agent-1", step: 1, callId: "c2" })]
      ])
    }))

  it.scoped("without a Journal, a runId is a label: nothing is journaled, nothing is needed", () =>
    Effect.gen(function*() {
      const asked: Array<number> = []
      const { kit } = tools(Effect.void, yield* Deferred.make<void>())
      const result = yield* Agent.run({ toolkit: kit, prompt: "go", runId: "label", model: scripted([], asked) })
      expect(result.runId).toBe("label")
    }))

  it.scoped("resumed after it stopped mid-step: answered steps are not asked again; the step's calls finish by their replay", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const first = yield* db.host()
      const asked: Array<number> = []
      const batches = [[call("a", "finished")], [call("b", "finished"), call("c", "safe"), call("d", "unknown")]]
      const started = yield* Deferred.make<void>()
      const before = tools(Effect.never, started)
      const fiber = yield* Effect.fork(
        Agent.run({ toolkit: before.kit, prompt: "go", runId: "r", model: scripted(batches, asked) }).pipe(
          Effect.provideService(Journal.Journal, first)
        )
      )
      yield* Deferred.await(started)
      yield* Effect.yieldNow()
      // the process stops: nothing more of it is written
      yield* Fiber.interrupt(fiber)
      expect(asked).toEqual([0, 1])
      expect(before.runs).toEqual({ finished: 2, safe: 1, unknown: 1 })

      const after = tools(Effect.void, yield* Deferred.make<void>())
      const events = yield* Agent.stream({
        toolkit: after.kit,
        prompt: "ignored",
        runId: "r",
        model: scripted(batches, asked)
      })
        .pipe(
          Stream.runCollect,
          Effect.map(Chunk.toReadonlyArray),
          Effect.provideService(Journal.Journal, yield* db.host())
        )
      expect(asked).toEqual([0, 1, 2])
      expect(after.runs).toEqual({ safe: 1 })
      expect(events.map((e) => e._tag === "Finished" ? `Finished ${e.step}:${e.index}` : e._tag)).toEqual([
        "StepFinished",
        "ModelResponded",
        "Finished 1:0",
        "Finished 1:2",
        "Started",
        "Finished 1:1",
        "StepFinished",
        "StepStarted",
        "ModelResponded",
        "StepFinished",
        "RunFinished"
      ])
      const last = events[events.length - 1]
      const result = (last as Agent.RunFinished).result
      // the transcript is the journaled prompt's, not the one given to the resumed run
      expect(result.transcript[0]).toEqual({ role: "user", content: "go" })
      expect(result.steps[1].outcomes.map(modelTextOf)).toEqual([
        "finished ran",
        "safe ran",
        "Error: the call was running when its process stopped, so whether it took effect is unknown: check its " +
        "effect before calling it again"
      ])
      expect(result.text).toBe("done after 2 steps")
    }))

  it.scoped("a completed run resumed gives its result from the journal, without asking the model or running a call", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const asked: Array<number> = []
      const { kit, runs } = tools(Effect.void, yield* Deferred.make<void>())
      const options = { toolkit: kit, prompt: "go", runId: "done", model: scripted([[call("a", "finished")]], asked) }
      const first = yield* Effect.provideService(Agent.run(options), Journal.Journal, journal)
      const again = yield* Effect.provideService(Agent.run(options), Journal.Journal, journal)
      expect(asked).toEqual([0, 1])
      expect(runs).toEqual({ finished: 1 })
      expect(again.transcript).toEqual(first.transcript)
      expect(again.reason).toBe("NoCalls")
    }))

  it.scoped("a run another host holds fails JournalFailed with the Conflict, before the model is asked", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const journal = yield* db.host()
      yield* journal.begin({ runId: "held", definitionsHash: "h", options: { kind: "agent" } })
      yield* db.plant("held", "live-host", 60_000)
      const asked: Array<number> = []
      const { kit } = tools(Effect.void, yield* Deferred.make<void>())
      const error = yield* Effect.flip(
        Agent.run({ toolkit: kit, prompt: "go", runId: "held", model: scripted([], asked) }).pipe(
          Effect.provideService(Journal.Journal, journal)
        )
      )
      expect(error.reason).toBe("JournalFailed")
      expect(error.message).toContain("the run's journal failed at step 0: the run \"held\" is leased by live-host")
      expect((error.cause as Journal.JournalError).reason).toBe("Conflict")
      expect(asked).toEqual([])
    }))

  it.scoped("a step that cannot be journaled fails the run JournalFailed; none of its calls runs", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      const failing: Journal.Journal.Service = {
        ...journal,
        step: () => Effect.fail(new Journal.JournalError({ reason: "Full", message: "the disk is full" }))
      }
      const asked: Array<number> = []
      const { kit, runs } = tools(Effect.void, yield* Deferred.make<void>())
      const error = yield* Effect.flip(
        Agent.run({ toolkit: kit, prompt: "go", runId: "full", model: scripted([[call("a", "finished")]], asked) })
          .pipe(Effect.provideService(Journal.Journal, failing))
      )
      expect(error).toMatchObject({ reason: "JournalFailed", step: 0 })
      expect(error.message).toBe("the run's journal failed at step 0: the disk is full")
      expect(runs).toEqual({})
      // not ended: a run its journal stopped stays running, to be resumed
      expect(Option.getOrThrow(yield* journal.run("full")).status).toBe("running")
    }))

  it.scoped("resumed by another host: the cleanup handlers get the run's records, each saying whether its call finished", () =>
    Effect.gen(function*() {
      const db = yield* memory
      const first = yield* db.host()
      const started = yield* Deferred.make<void>()
      const Handle = Schema.Struct({ id: Schema.String })
      const holding = (name: string, waits: boolean) =>
        Tool.make(name, {
          description: name,
          replay: "safe",
          handler: () =>
            Effect.gen(function*() {
              yield* Recorder.write(Recorder.makeRecord("test/handle", Handle, { id: name }))
              if (waits) {
                yield* Deferred.succeed(started, undefined)
                yield* Effect.never
              }
              return "ok"
            })
        })
      const kit = Toolkit.make(holding("done", false), holding("stuck", true))
      const batches = [[call("a", "done")], [call("b", "stuck")]]
      const fiber = yield* Effect.fork(
        Agent.run({ toolkit: kit, prompt: "go", runId: "c", model: scripted(batches, []) }).pipe(
          Effect.provideService(Journal.Journal, first)
        )
      )
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)

      const seen: Array<[string, boolean]> = []
      const after = Toolkit.make(holding("done", false), holding("stuck", false))
      yield* Agent.run({ toolkit: after, prompt: "go", runId: "c", model: scripted(batches, []) }).pipe(
        Effect.provideService(Journal.Journal, yield* db.host()),
        Effect.provide(Journal.layerCleanup({
          "test/handle": (leftovers) =>
            Effect.sync(() => {
              for (const { finished, record } of leftovers) {
                seen.push([(record.record.data as { id: string }).id, finished])
              }
            })
        }))
      )
      expect(seen).toEqual([["done", true], ["stuck", false]])
    }))
})

describe("Journal.Cleanup", () => {
  it.effect("has the built-in handler of the workspace shell's records; layerCleanup adds beside it", () =>
    Effect.gen(function*() {
      expect([...(yield* Journal.Cleanup).keys()]).toEqual(["bash/process"])
      const added = yield* Effect.provide(
        Journal.Cleanup,
        Journal.layerCleanup({ "x/y": () => Effect.void })
      )
      expect([...added.keys()]).toEqual(["bash/process", "x/y"])
    }))

  it.scoped("Journal.cleanUp gives a run's records to their handlers and says how many", () =>
    Effect.gen(function*() {
      const journal = yield* (yield* memory).host()
      yield* journal.begin({ runId: "x", definitionsHash: "h" })
      const record = (callId: string, namespace: string) =>
        journal.record({
          runId: "x",
          step: 0,
          callId,
          tool: "t",
          phase: "during",
          record: new Recorder.Record({ namespace, data: callId })
        })
      yield* record("a", "mine")
      yield* record("b", "other")
      const handled: Array<unknown> = []
      const count = yield* Journal.cleanUp("x").pipe(
        Effect.provideService(Journal.Journal, journal),
        Effect.provide(Layer.merge(
          Journal.layerCleanup({
            mine: (leftovers) => Effect.sync(() => handled.push(...leftovers.map((l) => l.record.record.data)))
          }),
          Layer.empty
        ))
      )
      expect(count).toBe(1)
      expect(handled).toEqual(["a"])
    }))
})
