import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { Tracer } from "effect"
import { Effect, Either, Exit, Fiber, MetricState, Option, Schema, Stream, TestClock } from "effect"
import { Executor, McpServer, Permission, StdioProvider, Tool, Toolkit } from "../src/index.js"
import * as Scheduler from "../src/internal/scheduler.js"
import { callsTotal, collectingTracer, metricTagged } from "./helpers.js"

// Metrics live in one global registry shared by every test in the worker: every tool here has a name no other test
// file uses, and each test reads counts as differences from before its batch.

const callSpans = (spans: ReadonlyArray<Tracer.Span>) => spans.filter((span) => span.name === "Executor.call")

const spanOf = (spans: ReadonlyArray<Tracer.Span>, callId: string): Tracer.Span => {
  const found = callSpans(spans).filter((span) => span.attributes.get("tool.call_id") === callId)
  expect(found).toHaveLength(1)
  return found[0]
}

const attributesOf = (span: Tracer.Span) => Object.fromEntries(span.attributes)

/** A histogram by tool (`agent_tools_call_duration_ms`, `agent_tools_resource_wait_ms`), undefined if never used. */
const histogram = (name: string, tool: string) =>
  Effect.map(metricTagged(name, { tool }), (pair) => {
    if (pair === undefined) return undefined
    expect(MetricState.isHistogramState(pair.metricState)).toBe(true)
    return pair.metricState as MetricState.MetricState.Histogram
  })

class Refused extends Schema.TaggedError<Refused>()("Refused", { why: Schema.String }) {
  override get message() {
    return `refused: ${this.why}`
  }
}

const Ok = Tool.make("obs_ok", {
  description: "Succeeds",
  parameters: { path: Schema.String },
  resource: ({ path }) => ["file:" + path, "dir:" + path.split("/")[0]],
  handler: ({ path }) => Effect.succeed(`read ${path}`)
})

const Fails = Tool.make("obs_fails", {
  description: "Fails with a typed error",
  failure: Refused,
  handler: () => Effect.fail(new Refused({ why: "no" }))
})

const Dies = Tool.make("obs_dies", {
  description: "Dies",
  handler: () => Effect.die(new Error("boom"))
})

const Guarded = Tool.make("obs_guarded", {
  description: "Needs permission",
  permission: { action: "write" },
  handler: () => Effect.succeed("written")
})

const Slow = Tool.make("obs_slow", {
  description: "Takes a second",
  timeout: "1 second",
  handler: () => Effect.never
})

const kit = Toolkit.make(Ok, Fails, Dies, Guarded, Slow)

const denyAll = Permission.layer(() => Effect.succeed(Permission.deny("no")))

describe("Executor observability", () => {
  describe("spans", () => {
    it.effect("each call that runs is a span Executor.call with its tool, call id, resource keys and outcome", () =>
      Effect.gen(function*() {
        const { spans, tracer } = yield* collectingTracer
        const fiber = yield* Effect.fork(
          Executor.run(kit, [
            { id: "c_ok", name: "obs_ok", arguments: { path: "src/a.ts" } },
            { id: "c_fails", name: "obs_fails", arguments: {} },
            { id: "c_dies", name: "obs_dies", arguments: {} },
            { id: "c_denied", name: "obs_guarded", arguments: {} },
            { id: "c_slow", name: "obs_slow", arguments: {} }
          ]).pipe(Effect.withTracer(tracer), Effect.provide(denyAll))
        )
        yield* TestClock.adjust("1 second")
        const outcomes = yield* Fiber.join(fiber)
        expect(outcomes.map((o) => Either.isRight(o) ? "Success" : o.left._tag)).toEqual([
          "Success",
          "ToolFailure",
          "ToolDefect",
          "PermissionDenied",
          "ToolTimeout"
        ])
        expect(attributesOf(spanOf(spans, "c_ok"))).toEqual({
          "tool.name": "obs_ok",
          "tool.call_id": "c_ok",
          "tool.resource_keys": "file:src/a.ts,dir:src",
          "tool.outcome": "Success"
        })
        expect(attributesOf(spanOf(spans, "c_fails"))).toEqual({
          "tool.name": "obs_fails",
          "tool.call_id": "c_fails",
          "tool.resource_keys": "",
          "tool.outcome": "ToolFailure"
        })
        expect(spanOf(spans, "c_dies").attributes.get("tool.outcome")).toBe("ToolDefect")
        expect(spanOf(spans, "c_denied").attributes.get("tool.outcome")).toBe("PermissionDenied")
        expect(spanOf(spans, "c_slow").attributes.get("tool.outcome")).toBe("ToolTimeout")
        for (const span of callSpans(spans)) {
          expect(span.status._tag).toBe("Ended")
          // the outcome is data on the span; the span itself ends successfully, as the call "completed"
          if (span.status._tag === "Ended") expect(Exit.isSuccess(span.status.exit)).toBe(true)
        }
      }))

    it.effect("the handler runs inside its call's span, which is a child of the caller's span", () =>
      Effect.gen(function*() {
        const { spans, tracer } = yield* collectingTracer
        const Where = Tool.make("obs_where", {
          description: "Names the span it runs in",
          handler: () =>
            Effect.map(Effect.currentSpan, (span) => `${span.name} ${span.attributes.get("tool.call_id")}`).pipe(
              Effect.orElseSucceed(() => "no span")
            )
        })
        const outcomes = yield* Executor.run(Toolkit.make(Where), [
          { id: "w1", name: "obs_where", arguments: {} },
          { id: "w2", name: "obs_where", arguments: {} }
        ]).pipe(Effect.withSpan("agent.turn"), Effect.withTracer(tracer))
        expect(outcomes.map((o) => Either.isRight(o) && o.right.content[0])).toEqual([
          { type: "text", text: "Executor.call w1" },
          { type: "text", text: "Executor.call w2" }
        ])
        const turn = spans.find((span) => span.name === "agent.turn")!
        expect(turn).toBeDefined()
        for (const id of ["w1", "w2"]) {
          const parent = spanOf(spans, id).parent
          expect(Option.isSome(parent) && parent.value.spanId).toBe(turn.spanId)
        }
      }))

    it.effect("spans come from the tracer installed where the batch starts, also for Executor.stream", () =>
      Effect.gen(function*() {
        const { spans, tracer } = yield* collectingTracer
        yield* Executor.stream(kit, [{ id: "s1", name: "obs_ok", arguments: { path: "a" } }]).pipe(
          Stream.runDrain,
          Effect.withTracer(tracer)
        )
        expect(attributesOf(spanOf(spans, "s1"))).toMatchObject({ "tool.name": "obs_ok", "tool.outcome": "Success" })
      }))

    it.effect("with Effect's built-in tracer no span is made per call (deliberately: a span costs as much as a call)", () =>
      Effect.gen(function*() {
        const Where = Tool.make("obs_where_native", {
          description: "Names the span it runs in",
          handler: () => Effect.map(Effect.currentSpan, (span) => span.name).pipe(Effect.orElseSucceed(() => "none"))
        })
        const [outcome] = yield* Executor.run(Toolkit.make(Where), [{
          id: "n",
          name: "obs_where_native",
          arguments: {}
        }])
          .pipe(Effect.withSpan("agent.turn"))
        // the handler still sees the caller's span (the context is inherited), just no Executor.call in between
        expect(Either.isRight(outcome) && outcome.right.content[0]).toEqual({ type: "text", text: "agent.turn" })
      }))

    // a call interrupted from outside has its outcome decided after the span; the span still says it
    it.effect("a cancelled call's span says tool.outcome ToolInterrupted", () =>
      Effect.gen(function*() {
        const { spans, tracer } = yield* collectingTracer
        const Hang = Tool.make("obs_hang", { description: "Never ends", handler: () => Effect.never })
        const outcomes = yield* Effect.scoped(
          Effect.gen(function*() {
            const batch = yield* Executor.start(Toolkit.make(Hang), [{ id: "h", name: "obs_hang", arguments: {} }])
            return yield* batch.events.pipe(
              Stream.tap((event) => event._tag === "Started" ? batch.cancel("h") : Effect.void),
              Stream.runCollect
            )
          })
        ).pipe(Effect.withTracer(tracer))
        const finished = [...outcomes].find((e) => e._tag === "Finished")
        expect(finished?._tag === "Finished" && Either.isLeft(finished.outcome) && finished.outcome.left._tag).toBe(
          "ToolInterrupted"
        )
        const span = spanOf(spans, "h")
        expect(span.status._tag).toBe("Ended")
        expect(span.attributes.get("tool.outcome")).toBe("ToolInterrupted")
      }))
  })

  describe("metrics", () => {
    it.effect("agent_tools_calls_total counts finished calls by tool and outcome", () =>
      Effect.gen(function*() {
        const before = {
          ok: yield* callsTotal("obs_ok", "Success"),
          fails: yield* callsTotal("obs_fails", "ToolFailure"),
          dies: yield* callsTotal("obs_dies", "ToolDefect"),
          denied: yield* callsTotal("obs_guarded", "PermissionDenied"),
          invalid: yield* callsTotal("obs_ok", "InvalidArguments")
        }
        yield* Executor.run(kit, [
          { id: "1", name: "obs_ok", arguments: { path: "a" } },
          { id: "2", name: "obs_ok", arguments: { path: "b" } },
          { id: "3", name: "obs_ok", arguments: { path: "c" } },
          { id: "4", name: "obs_fails", arguments: {} },
          { id: "5", name: "obs_fails", arguments: {} },
          { id: "6", name: "obs_dies", arguments: {} },
          { id: "7", name: "obs_guarded", arguments: {} },
          { id: "8", name: "obs_ok", arguments: { path: 1 } }
        ]).pipe(Effect.provide(denyAll))
        expect({
          ok: (yield* callsTotal("obs_ok", "Success")) - before.ok,
          fails: (yield* callsTotal("obs_fails", "ToolFailure")) - before.fails,
          dies: (yield* callsTotal("obs_dies", "ToolDefect")) - before.dies,
          denied: (yield* callsTotal("obs_guarded", "PermissionDenied")) - before.denied,
          // a call that never ran counts too
          invalid: (yield* callsTotal("obs_ok", "InvalidArguments")) - before.invalid
        }).toEqual({ ok: 3, fails: 2, dies: 1, denied: 1, invalid: 1 })
      }))

    it.effect("agent_tools_calls_total counts cancelled calls as ToolInterrupted", () =>
      Effect.gen(function*() {
        const Hang = Tool.make("obs_cancelled", { description: "Never ends", handler: () => Effect.never })
        const before = yield* callsTotal("obs_cancelled", "ToolInterrupted")
        yield* Executor.stream(Toolkit.make(Hang), [
          { id: "a", name: "obs_cancelled", arguments: {} },
          { id: "b", name: "obs_cancelled", arguments: {} }
        ]).pipe(Stream.take(2), Stream.runDrain)
        expect((yield* callsTotal("obs_cancelled", "ToolInterrupted")) - before).toBe(2)
      }))

    it.effect("agent_tools_calls_total counts a Tool.execute interrupted from outside as ToolInterrupted, once", () =>
      Effect.gen(function*() {
        const Hang = Tool.make("obs_execute_cancelled", { description: "Never ends", handler: () => Effect.never })
        const before = yield* callsTotal("obs_execute_cancelled", "ToolInterrupted")
        const call = yield* Effect.fork(Tool.execute(Hang, { id: "x", arguments: {} }))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(call)
        expect((yield* callsTotal("obs_execute_cancelled", "ToolInterrupted")) - before).toBe(1)
      }))

    it.effect("Tool.execute counts its call and the handler's running time, on its own path and under a timeout", () =>
      Effect.gen(function*() {
        const Wait = Tool.make("obs_execute_timed", {
          description: "Sleeps",
          parameters: { ms: Schema.Int },
          handler: ({ ms }) => Effect.sleep(ms)
        })
        const durations = yield* histogram("agent_tools_call_duration_ms", "obs_execute_timed")
        const successes = yield* callsTotal("obs_execute_timed", "Success")
        // no timeout: the path of a bare call; with one: the pipeline's
        const bare = yield* Effect.fork(Tool.execute(Wait, { id: "a", arguments: { ms: 120 } }))
        const timed = yield* Effect.fork(
          Tool.execute(Wait, { id: "b", arguments: { ms: 80 } }, { timeout: "1 second" })
        )
        yield* TestClock.adjust("120 millis")
        expect(Either.isRight(yield* Fiber.join(bare))).toBe(true)
        expect(Either.isRight(yield* Fiber.join(timed))).toBe(true)
        const after = yield* histogram("agent_tools_call_duration_ms", "obs_execute_timed")
        expect(after!.count - (durations?.count ?? 0)).toBe(2)
        expect(after!.sum - (durations?.sum ?? 0)).toBe(200)
        expect((yield* callsTotal("obs_execute_timed", "Success")) - successes).toBe(2)
      }))

    it.effect("agent_tools_call_duration_ms counts every started call, with its running time", () =>
      Effect.gen(function*() {
        const Wait = Tool.make("obs_timed", {
          description: "Sleeps",
          parameters: { ms: Schema.Int },
          handler: ({ ms }) => Effect.sleep(ms)
        })
        const before = yield* histogram("agent_tools_call_duration_ms", "obs_timed")
        const fiber = yield* Effect.fork(
          Executor.run(Toolkit.make(Wait), [
            { id: "a", name: "obs_timed", arguments: { ms: 100 } },
            { id: "b", name: "obs_timed", arguments: { ms: 300 } },
            { id: "c", name: "obs_timed", arguments: { ms: "never ran" } }
          ])
        )
        yield* TestClock.adjust("300 millis")
        yield* Fiber.join(fiber)
        const after = yield* histogram("agent_tools_call_duration_ms", "obs_timed")
        expect(after).toBeDefined()
        // two handlers ran; the call with bad arguments never started and is not timed
        expect(after!.count - (before?.count ?? 0)).toBe(2)
        expect(after!.sum - (before?.sum ?? 0)).toBe(400)
      }))

    const Locked = Tool.make("obs_locked", {
      description: "Holds a key for a while",
      resource: "obs:key",
      handler: () => Effect.sleep("50 millis")
    })

    /** Two calls on one key: the second waits 50 ms for the first to release it. Gives the histogram's growth. */
    const waitForKey = Effect.gen(function*() {
      const before = yield* histogram("agent_tools_resource_wait_ms", "obs_locked")
      const fiber = yield* Effect.fork(
        Executor.run(Toolkit.make(Locked), [
          { id: "a", name: "obs_locked", arguments: {} },
          { id: "b", name: "obs_locked", arguments: {} }
        ])
      )
      yield* TestClock.adjust("100 millis")
      yield* Fiber.join(fiber)
      const after = yield* histogram("agent_tools_resource_wait_ms", "obs_locked")
      return { count: after!.count - (before?.count ?? 0), sum: after!.sum - (before?.sum ?? 0) }
    })

    it.effect("agent_tools_resource_wait_ms counts every started call", () =>
      Effect.map(waitForKey, ({ count }) => expect(count).toBe(2)))

    it.effect("agent_tools_resource_wait_ms records the time a call waited for its keys", () =>
      Effect.map(waitForKey, ({ sum }) => expect(sum).toBe(50)))
  })

  describe("calls run elsewhere count the same", () => {
    const Served = Tool.make("obs_served", {
      description: "Answers with a value, or from an effect that must run",
      parameters: { text: Schema.String, later: Schema.optional(Schema.Boolean) },
      handler: ({ later, text }) => later === true ? Effect.as(Effect.yieldNow(), text) : Effect.succeed(text)
    })
    const Asks = Tool.make("obs_served_asks", {
      description: "Needs permission",
      permission: { action: "write" },
      handler: () => Effect.succeed("written")
    })
    const servedKit = Toolkit.make(Served, Asks)

    const counts = Effect.all({
      ok: callsTotal("obs_served", "Success"),
      invalid: callsTotal("obs_served", "InvalidArguments"),
      denied: callsTotal("obs_served_asks", "PermissionDenied"),
      unknown: callsTotal("(unknown)", "ToolNotFound"),
      timed: Effect.map(histogram("agent_tools_call_duration_ms", "obs_served"), (h) => h?.count ?? 0)
    })
    const growth = (before: Effect.Effect.Success<typeof counts>) =>
      Effect.map(counts, (after) => ({
        ok: after.ok - before.ok,
        invalid: after.invalid - before.invalid,
        denied: after.denied - before.denied,
        unknown: after.unknown - before.unknown,
        timed: after.timed - before.timed
      }))
    const expected = { ok: 2, invalid: 1, denied: 1, unknown: 1, timed: 2 }

    it.scopedLive("over MCP: calls answered at once and in a fiber, refused, denied or unknown", () =>
      Effect.gen(function*() {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        yield* McpServer.serve(servedKit, { name: "obs", version: "1.0.0" }, serverSide).pipe(Effect.provide(denyAll))
        const client = new Client({ name: "obs-client", version: "1.0.0" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(clientSide)),
          () => Effect.promise(() => client.close())
        )
        const before = yield* counts
        for (
          const [name, args] of [
            ["obs_served", { text: "now" }],
            ["obs_served", { text: "later", later: true }],
            ["obs_served", { text: 1 }],
            ["obs_served_asks", {}],
            ["obs_nothing_by_that_name", {}]
          ] as const
        ) {
          yield* Effect.promise(() => client.callTool({ name, arguments: args }))
        }
        expect(yield* growth(before)).toEqual(expected)
      }))

    it.effect("by a stdio provider", () =>
      Effect.gen(function*() {
        const line = (id: string, name: string, args: unknown) =>
          JSON.stringify({ call_id: id, function: { name, arguments: JSON.stringify(args) } }) + "\n"
        const before = yield* counts
        const written: Array<string> = []
        yield* StdioProvider.serve(servedKit, {
          input: Stream.make(
            line("1", "obs_served", { text: "now" }),
            line("2", "obs_served", { text: "later", later: true }),
            line("3", "obs_served", { text: 1 }),
            line("4", "obs_served_asks", {}),
            line("5", "obs_nothing_by_that_name", {})
          ),
          output: (text) => Effect.sync(() => void written.push(text))
        }).pipe(Effect.provide(denyAll))
        expect(written).toHaveLength(6)
        expect(yield* growth(before)).toEqual(expected)
      }))

    it.effect("a call the long-lived scheduler runs counts its wait for its keys, once it has a slot", () =>
      Effect.gen(function*() {
        const Held = Tool.make("obs_served_locked", {
          description: "Holds a key for a while",
          resource: "obs:served",
          handler: () => Effect.sleep("50 millis")
        })
        const kit = Toolkit.make(Held)
        const before = yield* histogram("agent_tools_resource_wait_ms", "obs_served_locked")
        const waitsOfServed = Effect.map(histogram("agent_tools_resource_wait_ms", "obs_served"), (h) => h?.count ?? 0)
        const servedBefore = yield* waitsOfServed
        const scheduler = yield* Scheduler.make({ maxParallel: 1 })
        const first = yield* Effect.fork(scheduler.run(kit, { id: "a", name: "obs_served_locked", arguments: {} }))
        const second = yield* Effect.fork(scheduler.run(kit, { id: "b", name: "obs_served_locked", arguments: {} }))
        // a third waits for the one slot and is interrupted before it gets one: it never started, no wait counted
        const third = yield* Effect.fork(scheduler.run(Toolkit.make(Served), {
          id: "c",
          name: "obs_served",
          arguments: { text: "x", later: true }
        }))
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(third)
        yield* TestClock.adjust("100 millis")
        yield* Effect.forEach([first, second], Fiber.join)
        const after = yield* histogram("agent_tools_resource_wait_ms", "obs_served_locked")
        expect({ count: after!.count - (before?.count ?? 0), sum: after!.sum - (before?.sum ?? 0) }).toEqual({
          count: 2,
          sum: 50
        })
        expect((yield* waitsOfServed) - servedBefore).toBe(0)
      }))

    it.effect("through Tool.execute", () =>
      Effect.gen(function*() {
        const before = yield* counts
        yield* Tool.execute(Served, { id: "1", arguments: { text: "now" } })
        yield* Tool.execute(Served, { id: "2", arguments: { text: "later", later: true } })
        yield* Tool.execute(Served, { id: "3", arguments: { text: 1 } })
        yield* Tool.execute(Asks, { id: "4", arguments: {} }).pipe(Effect.provide(denyAll))
        // Tool.execute is given its tool: there is no unknown name to count
        expect(yield* growth(before)).toEqual({ ...expected, unknown: 0 })
      }))
  })
})
