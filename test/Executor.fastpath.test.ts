/**
 * The executor's two ways of running a call keep the same guarantees. A call with nothing around its handler
 * (no `onStart`, no permission, no tracer, no recorder) is "bare": its handler function is called in the pump's
 * stack, and an answer that is already a value (`Effect.succeed`, `Effect.fail`, `Effect.void`) finishes the call
 * with no fiber at all; any other effect runs in a fiber of its own with the call context set when it is forked.
 * These tests mix both kinds, and the full path, in the same batches.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Option, Ref, Schema, Stream, TestClock } from "effect"
import type { ToolError } from "../src/index.js"
import { Executor, Recorder, Tool, Toolkit, ToolResult } from "../src/index.js"
import { collectingTracer, modelText } from "./helpers.js"

class Refused extends Schema.TaggedError<Refused>()("Refused", { why: Schema.String }) {
  override get message() {
    return `refused: ${this.why}`
  }
}

/** Counts handlers running at once, and logs starts and ends in order. */
const makeProbe = () => {
  let running = 0
  let most = 0
  const log: Array<string> = []
  return {
    log,
    most: () => most,
    enter: (tag: string) =>
      Effect.sync(() => {
        running++
        most = Math.max(most, running)
        log.push(`start ${tag}`)
      }),
    leave: (tag: string) =>
      Effect.sync(() => {
        running--
        log.push(`end ${tag}`)
      })
  }
}

type Probe = ReturnType<typeof makeProbe>

const kitOf = (probe: Probe) => {
  const parameters = { tag: Schema.String, key: Schema.optional(Schema.String) }
  const resource = ({ key }: { readonly key?: string | undefined }) => key
  return Toolkit.make(
    // answers with a value: finishes in the pump's stack
    Tool.make("value", {
      description: "Answers at once",
      parameters,
      resource,
      handler: ({ tag }) => {
        probe.log.push(`value ${tag}`)
        return Effect.succeed(`value ${tag}`)
      }
    }),
    Tool.make("refuse", {
      description: "Fails at once with a typed error",
      parameters,
      resource,
      failure: Refused,
      handler: ({ tag }) => Effect.fail(new Refused({ why: tag }))
    }),
    Tool.make("throw", {
      description: "Throws while building its effect",
      parameters,
      resource,
      handler: ({ tag }): Effect.Effect<string> => {
        throw new Error(`thrown by ${tag}`)
      }
    }),
    // synchronous, but an effect to run: a fiber that finishes before runFork returns
    Tool.make("gen", {
      description: "Synchronous generator",
      parameters,
      resource,
      handler: ({ tag }) =>
        Effect.gen(function*() {
          yield* probe.enter(tag)
          yield* probe.leave(tag)
          return `gen ${tag}`
        })
    }),
    // suspends: a fiber the executor observes
    Tool.make("sleep", {
      description: "Sleeps 10 ms on Effect's clock",
      parameters,
      resource,
      handler: ({ tag }) =>
        Effect.gen(function*() {
          yield* probe.enter(tag)
          yield* Effect.sleep("10 millis")
          yield* probe.leave(tag)
          return `slept ${tag}`
        })
    })
  )
}

const call = (id: string, name: string, key?: string): Executor.ToolCall => ({
  id,
  name,
  arguments: JSON.stringify(key === undefined ? { tag: id } : { tag: id, key })
})

const batch = [
  call("a", "sleep", "k"),
  call("b", "value", "k"),
  call("c", "gen", "k"),
  call("d", "refuse"),
  call("e", "throw"),
  call("f", "value"),
  call("g", "sleep"),
  call("h", "gen"),
  call("i", "sleep", "k"),
  call("j", "value", "k")
]

const expected = [
  "slept a",
  "value b",
  "gen c",
  "Error: refused: d",
  "Error: tool \"throw\" panicked: thrown by e",
  "value f",
  "slept g",
  "gen h",
  "slept i",
  "value j"
]

describe("Executor: calls answered by a value and calls run as fibers", () => {
  it.effect("in one batch keep every guarantee: one Finished each, Started first, outcomes in call order", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const fiber = yield* Effect.fork(Stream.runCollect(Executor.stream(kitOf(probe), batch, { maxParallel: 2 })))
      yield* TestClock.adjust("1 second")
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      const outcomes: Array<string> = []
      const started = new Set<number>()
      for (const event of events) {
        if (event._tag === "Started") {
          expect(outcomes[event.index]).toBeUndefined()
          started.add(event.index)
        }
        if (event._tag === "Finished") {
          expect(outcomes[event.index]).toBeUndefined()
          outcomes[event.index] = modelText(event.outcome)
        }
      }
      expect(outcomes).toEqual(expected)
      // every call's handler ran, so every call started, once
      expect(events.filter((e) => e._tag === "Started")).toHaveLength(batch.length)
      expect(started.size).toBe(batch.length)
    }))

  it.effect("calls sharing a key run in model order whatever way each runs, and maxParallel holds", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const fiber = yield* Effect.fork(Executor.run(kitOf(probe), batch, { maxParallel: 2 }))
      yield* TestClock.adjust("1 second")
      const outcomes = yield* Fiber.join(fiber)
      expect(outcomes.map(modelText)).toEqual(expected)
      // a, b, c, i, j share "k": each starts after the one before it ended
      const onKey = probe.log.filter((line) => /\b[abcij]$/.test(line))
      expect(onKey).toEqual(["start a", "end a", "value b", "start c", "end c", "start i", "end i", "value j"])
      expect(probe.most()).toBeLessThanOrEqual(2)
    }))

  it.effect("a sequential batch runs both kinds one at a time, in order", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const fiber = yield* Effect.fork(Executor.run(kitOf(probe), batch, { sequential: true }))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(fiber)).map(modelText)).toEqual(expected)
      expect(probe.log).toEqual([
        "start a",
        "end a",
        "value b",
        "start c",
        "end c",
        "value f",
        "start g",
        "end g",
        "start h",
        "end h",
        "start i",
        "end i",
        "value j"
      ])
      expect(probe.most()).toBe(1)
    }))

  it.effect("100,000 calls answered by a value finish without deepening the stack", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      const calls = Array.from({ length: 100_000 }, (_, i) => call(`v${i}`, "value", i % 2 === 0 ? "k" : undefined))
      const outcomes = yield* Executor.run(kitOf(probe), calls, { maxParallel: 3 })
      expect(outcomes).toHaveLength(100_000)
      expect(outcomes.every(Either.isRight)).toBe(true)
      expect(modelText(outcomes[99_999])).toBe("value v99999")
    }))

  it.effect("a fiber call sees its call context, and progress from a fiber it forked reaches its call", () =>
    Effect.gen(function*() {
      const Reports = Tool.make("reports", {
        description: "Reports progress from a child fiber",
        handler: () =>
          Effect.gen(function*() {
            const current = yield* Tool.currentCall
            const child = yield* Effect.fork(Tool.progress({ message: "from the child", partial: "half" }))
            yield* Fiber.join(child)
            yield* Effect.sleep("1 millis")
            return Option.getOrThrow(current).id
          })
      })
      const fiber = yield* Effect.fork(
        Stream.runCollect(Executor.stream(Toolkit.make(Reports), [{ id: "r1", name: "reports", arguments: "" }]))
      )
      yield* TestClock.adjust("1 second")
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(events.map((e) => e._tag)).toEqual(["Started", "Progress", "Finished"])
      const progress = events[1]
      expect(progress._tag === "Progress" && progress.progress.message).toBe("from the child")
      const finished = events[2]
      expect(finished._tag === "Finished" && modelText(finished.outcome)).toBe("r1")
    }))

  it.effect("outside a call, after it: the context set on a call's fiber does not leak to the caller", () =>
    Effect.gen(function*() {
      const probe = makeProbe()
      yield* Executor.run(kitOf(probe), [call("x", "gen")])
      expect(Option.isNone(yield* Tool.currentCall)).toBe(true)
    }))

  it.effect("cancel interrupts a fiber call with its last partial output, while value calls around it finish", () =>
    Effect.gen(function*() {
      const Long = Tool.make("long", {
        description: "Reports, then waits for ever",
        handler: () => Effect.zipRight(Tool.progress({ partial: "so far" }), Effect.never)
      })
      const probe = makeProbe()
      const kit = Toolkit.merge(kitOf(probe), Toolkit.make(Long))
      const events = yield* Effect.scoped(Effect.gen(function*() {
        const handle = yield* Executor.start(kit, [
          call("v1", "value"),
          { id: "l", name: "long", arguments: "" },
          call("v2", "value")
        ])
        const collected = yield* Effect.fork(Stream.runCollect(handle.events))
        yield* TestClock.adjust("10 millis")
        yield* handle.cancel("l")
        return Chunk.toReadonlyArray(yield* Fiber.join(collected))
      }))
      const finished = events.filter((e) => e._tag === "Finished")
      expect(finished.map((e) => modelText(e.outcome))).toEqual(expect.arrayContaining([
        "value v1",
        "value v2",
        "Error: the call was cancelled before it finished"
      ]))
      const long = finished.find((e) => e.index === 1)!
      expect(Either.isLeft(long.outcome) && long.outcome.left._tag === "ToolInterrupted").toBe(true)
      expect(Either.isLeft(long.outcome) && (long.outcome.left as ToolError.ToolInterrupted).partial).toBe("so far")
    }))

  it.effect("a value call still takes the full path with onStart, a tracer or a recorder, and each does its job", () =>
    Effect.gen(function*() {
      const Detailed = Tool.make("detailed", {
        description: "Answers at once with recordable details",
        handler: () =>
          Effect.succeed(ToolResult.withDetails(ToolResult.text("done"), Recorder.makeRecord("test", Schema.Int, 1)))
      })
      const kit = Toolkit.make(Detailed)
      const calls = [{ id: "d1", name: "detailed", arguments: "" }]
      // onStart
      const handed = yield* Ref.make<Array<string>>([])
      yield* Executor.run(kit, calls, { onStart: (c) => Ref.update(handed, (ids) => [...ids, c.id]) })
      expect(yield* Ref.get(handed)).toEqual(["d1"])
      // a tracer
      const { spans, tracer } = yield* collectingTracer
      yield* Executor.run(kit, calls).pipe(Effect.withTracer(tracer))
      expect(spans.map((span) => span.name)).toContain("Executor.call")
      // a recorder
      const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
      const layer = Recorder.layerMemory(entries)
      const outcomes = yield* Executor.run(kit, calls).pipe(Effect.provide(layer))
      expect(outcomes.map(modelText)).toEqual(["done"])
      expect((yield* Ref.get(entries)).map((e) => [e.callId, e.phase])).toEqual([["d1", "end"]])
    }))
})
