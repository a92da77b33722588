/**
 * The long-lived scheduler that an MCP server's and a stdio provider's calls go through: `maxParallel` slots
 * handed over in arrival order, a sequential tool taking every slot, resource keys in arrival order, and places
 * given back whenever a call is interrupted, including the moment slots were handed to it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Option, Ref, Schema } from "effect"
import type { Executor } from "../src/index.js"
import { Recorder, Tool, Toolkit } from "../src/index.js"
import * as Scheduler from "../src/internal/scheduler.js"
import { collectingTracer, modelText, settle } from "./helpers.js"

/** A tool whose calls wait for their gate (`gates[tag]`), logging what they do and how many run at once. */
const makeKit = () => {
  const gates = new Map<string, Deferred.Deferred<void>>()
  const log: Array<string> = []
  let running = 0
  let most = 0
  const gate = (tag: string) => {
    let found = gates.get(tag)
    if (found === undefined) {
      found = Deferred.unsafeMake<void>(undefined as never)
      gates.set(tag, found)
    }
    return found
  }
  const body = (tag: string) =>
    Effect.gen(function*() {
      running++
      most = Math.max(most, running)
      log.push(`start ${tag}`)
      yield* Deferred.await(gate(tag))
      log.push(`end ${tag}`)
      return tag
    }).pipe(Effect.ensuring(Effect.sync(() => void running--)))
  const parameters = { tag: Schema.String, keys: Schema.optional(Schema.Array(Schema.String)) }
  const kit = Toolkit.make(
    Tool.make("wait", {
      description: "Waits for its gate",
      parameters,
      resource: ({ keys }) => keys,
      handler: ({ tag }) => body(tag)
    }),
    Tool.make("alone", { description: "Sequential", parameters, sequential: true, handler: ({ tag }) => body(tag) }),
    Tool.make("value", {
      description: "Answers at once",
      parameters,
      resource: ({ keys }) => keys,
      handler: ({ tag }) => Effect.succeed(tag)
    })
  )
  return {
    kit,
    log,
    most: () => most,
    open: (tag: string) => Deferred.succeed(gate(tag), undefined),
    call: (tag: string, name = "wait", keys?: ReadonlyArray<string>) => ({
      id: tag,
      name,
      arguments: keys === undefined ? { tag } : { tag, keys }
    })
  }
}

describe("the scheduler", () => {
  it.effect("runs at most maxParallel calls at once, handing slots over in arrival order", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 2 })
      const t = makeKit()
      const tags = ["a", "b", "c", "d", "e"]
      const fibers = yield* Effect.forEach(tags, (tag) => Effect.fork(scheduler.run(t.kit, t.call(tag))))
      yield* settle
      expect(t.log).toEqual(["start a", "start b"])
      yield* t.open("b")
      yield* settle
      yield* t.open("a")
      yield* settle
      expect(t.log).toEqual(["start a", "start b", "end b", "start c", "end a", "start d"])
      yield* Effect.forEach(tags, t.open)
      const outcomes = yield* Effect.forEach(fibers, Fiber.join)
      expect(outcomes.map(modelText)).toEqual(tags)
      expect(t.most()).toBe(2)
    }))

  it.effect("a sequential tool takes every slot: nothing runs alongside it", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 3 })
      const t = makeKit()
      const a = yield* Effect.fork(scheduler.run(t.kit, t.call("a")))
      yield* settle
      const s = yield* Effect.fork(scheduler.run(t.kit, t.call("s", "alone")))
      yield* settle
      expect(t.log).toEqual(["start a"])
      yield* t.open("a")
      yield* settle
      expect(t.log).toEqual(["start a", "end a", "start s"])
      const b = yield* Effect.fork(scheduler.run(t.kit, t.call("b")))
      yield* settle
      expect(t.log).toEqual(["start a", "end a", "start s"])
      yield* t.open("s")
      yield* t.open("b")
      yield* Effect.forEach([a, s, b], Fiber.join)
      expect(t.log).toEqual(["start a", "end a", "start s", "end s", "start b", "end b"])
    }))

  it.effect("a call that does not fit does not block one behind it that does, waiting or newly arrived", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 2 })
      const t = makeKit()
      const a = yield* Effect.fork(scheduler.run(t.kit, t.call("a")))
      const b = yield* Effect.fork(scheduler.run(t.kit, t.call("b")))
      yield* settle
      // every slot is taken: the sequential call waits for both, the next call for one
      const s = yield* Effect.fork(scheduler.run(t.kit, t.call("s", "alone")))
      const c = yield* Effect.fork(scheduler.run(t.kit, t.call("c")))
      yield* settle
      expect(t.log).toEqual(["start a", "start b"])
      // one slot comes free: too few for s, enough for c behind it
      yield* t.open("a")
      yield* settle
      expect(t.log).toEqual(["start a", "start b", "end a", "start c"])
      yield* t.open("c")
      yield* settle
      // and a call arriving while s still cannot fit takes the free slot at once
      const d = yield* Effect.fork(scheduler.run(t.kit, t.call("d")))
      yield* settle
      expect(t.log).toEqual(["start a", "start b", "end a", "start c", "end c", "start d"])
      yield* Effect.forEach(["b", "d", "s"], t.open)
      yield* Effect.forEach([a, b, c, d, s], Fiber.join)
      expect(t.log.slice(6)).toEqual(["end b", "end d", "start s", "end s"])
    }))

  it.effect("calls already waiting keep their turn: a slot freed goes to them, not to a call arriving then", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 1 })
      const t = makeKit()
      // the holder's fiber asks for a slot for a newcomer the moment its own call has ended, before the waiting
      // call's fiber has had a chance to run; `runFork` starts the newcomer there and then, as a server's request
      // handler does
      const holder = yield* Effect.fork(
        Effect.zipRight(
          scheduler.run(t.kit, t.call("holder")),
          Effect.sync(() => ({
            now: scheduler.tryNow(t.kit, t.call("v", "value")),
            later: Effect.runFork(scheduler.run(t.kit, t.call("late")))
          }))
        )
      )
      yield* settle
      const waiting = yield* Effect.fork(scheduler.run(t.kit, t.call("waiting")))
      yield* settle
      yield* t.open("holder")
      const { later, now } = yield* Fiber.join(holder)
      expect(now).toBeUndefined()
      yield* settle
      expect(t.log).toEqual(["start holder", "end holder", "start waiting"])
      yield* t.open("waiting")
      yield* t.open("late")
      expect(modelText(yield* Fiber.join(waiting))).toBe("waiting")
      expect(modelText(yield* Fiber.join(later))).toBe("late")
      expect(t.log.slice(3)).toEqual(["end waiting", "start late", "end late"])
    }))

  it.effect("calls on a key run in arrival order; a call with several keys waits for all; values keep their turn", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 4 })
      const t = makeKit()
      const fibers = yield* Effect.forEach([
        t.call("x1", "wait", ["x"]),
        t.call("y1", "wait", ["y"]),
        t.call("xy", "wait", ["y", "x"]),
        t.call("v", "value", ["x"]),
        t.call("free")
      ], (c) => Effect.fork(scheduler.run(t.kit, c)))
      yield* settle
      expect(t.log).toEqual(["start x1", "start y1", "start free"])
      yield* t.open("x1")
      yield* settle
      expect(t.log).toEqual(["start x1", "start y1", "start free", "end x1"])
      yield* t.open("y1")
      yield* settle
      expect(t.log.slice(4)).toEqual(["end y1", "start xy"])
      expect(fibers[3].unsafePoll()).toBeNull()
      yield* t.open("xy")
      yield* t.open("free")
      const outcomes = yield* Effect.forEach(fibers, Fiber.join)
      expect(outcomes.map(modelText)).toEqual(["x1", "y1", "xy", "v", "free"])
    }))

  it.effect("a call naming one key twice runs, and waits only for the calls before it", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 4 })
      const t = makeKit()
      const first = yield* Effect.fork(scheduler.run(t.kit, t.call("twice", "wait", ["k", "k"])))
      const second = yield* Effect.fork(scheduler.run(t.kit, t.call("after", "wait", ["k"])))
      yield* settle
      expect(t.log).toEqual(["start twice"])
      yield* t.open("twice")
      yield* t.open("after")
      expect(modelText(yield* Fiber.join(first))).toBe("twice")
      expect(modelText(yield* Fiber.join(second))).toBe("after")
    }))

  it.effect("interrupted waiting calls give back their places: slots and keys stay whole", () =>
    Effect.gen(function*() {
      const scheduler = yield* Scheduler.make({ maxParallel: 1 })
      const t = makeKit()
      const a = yield* Effect.fork(scheduler.run(t.kit, t.call("a", "wait", ["k"])))
      yield* settle
      const b = yield* Effect.fork(scheduler.run(t.kit, t.call("b", "wait", ["k"])))
      const c = yield* Effect.fork(scheduler.run(t.kit, t.call("c")))
      const d = yield* Effect.fork(scheduler.run(t.kit, t.call("d", "wait", ["k"])))
      yield* settle
      // b waits for its key, c for a slot, d for b
      yield* Fiber.interrupt(b)
      yield* Fiber.interrupt(c)
      yield* t.open("a")
      yield* settle
      expect(t.log).toEqual(["start a", "end a", "start d"])
      yield* t.open("d")
      yield* Effect.forEach([a, d], Fiber.join)
      // the one slot and the key are free again
      const e = yield* Effect.fork(scheduler.run(t.kit, t.call("e", "wait", ["k"])))
      yield* settle
      yield* t.open("e")
      expect(modelText(yield* Fiber.join(e))).toBe("e")
    }))

  it.live("a call interrupted as a slot is handed to it gives the slot back", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 200; round++) {
        const scheduler = yield* Scheduler.make({ maxParallel: 1 })
        const t = makeKit()
        const holder = yield* Effect.fork(scheduler.run(t.kit, t.call("holder")))
        yield* settle
        const waiter = yield* Effect.fork(scheduler.run(t.kit, t.call("waiter")))
        yield* settle
        // the release and the interruption race; whichever wins, the slot must come back
        yield* Effect.all([t.open("holder"), Effect.repeatN(Effect.yieldNow(), round % 5), Fiber.interrupt(waiter)], {
          concurrency: "unbounded"
        })
        yield* Fiber.join(holder)
        yield* t.open("waiter")
        yield* t.open("last")
        const last = yield* scheduler.run(t.kit, t.call("last")).pipe(Effect.timeout("1 second"))
        expect(modelText(last)).toBe("last")
      }
    }))

  it.effect("with a tracer, a call runs in the span Executor.call of the one call pipeline, as in a batch", () =>
    Effect.gen(function*() {
      const { spans, tracer } = yield* collectingTracer
      const scheduler = yield* Scheduler.make().pipe(Effect.withTracer(tracer))
      const t = makeKit()
      expect(scheduler.traced).toBe(true)
      expect(scheduler.tryNow(t.kit, t.call("v", "value"))).toBeUndefined()
      const outcome = yield* scheduler.run(t.kit, t.call("v", "value", ["k"])).pipe(Effect.withTracer(tracer))
      expect(modelText(outcome)).toBe("v")
      expect(spans.filter((span) => span.name === "Executor.call").map((span) => Object.fromEntries(span.attributes)))
        .toEqual([{ "tool.name": "value", "tool.call_id": "v", "tool.resource_keys": "k", "tool.outcome": "Success" }])
    }))

  describe("tryNow", () => {
    it.effect("answers a value call at once, and a refusal, and leaves the slot free", () =>
      Effect.gen(function*() {
        const scheduler = yield* Scheduler.make({ maxParallel: 1 })
        const t = makeKit()
        for (const tag of ["v1", "v2", "v3"]) {
          const now = scheduler.tryNow(t.kit, t.call(tag, "value"))
          expect(now !== undefined && Either.isEither(now) && modelText(now)).toBe(tag)
        }
        const unknown = scheduler.tryNow(t.kit, t.call("x", "nope"))
        expect(unknown !== undefined && Either.isEither(unknown) && Either.isLeft(unknown)).toBe(true)
        const invalid = scheduler.tryNow(t.kit, { id: "bad", name: "value", arguments: { tag: 1 } })
        expect(invalid !== undefined && Either.isEither(invalid) && Either.isLeft(invalid)).toBe(true)
        // the one slot is still free
        const run = yield* Effect.fork(scheduler.run(t.kit, t.call("a")))
        yield* settle
        yield* t.open("a")
        expect(modelText(yield* Fiber.join(run))).toBe("a")
      }))

    it.effect("gives a handler that must run as an effect holding its slot until it ends, in its call context", () =>
      Effect.gen(function*() {
        const scheduler = yield* Scheduler.make({ maxParallel: 1 })
        const t = makeKit()
        const Who = Tool.make("who", {
          description: "Says which call it runs for",
          handler: () => Effect.map(Tool.currentCall, (call) => Option.getOrThrow(call).id)
        })
        const later = scheduler.tryNow(t.kit, t.call("a"))
        expect(later !== undefined && !Either.isEither(later)).toBe(true)
        const running = yield* Effect.fork(later as Effect.Effect<Executor.Outcome>)
        yield* settle
        expect(t.log).toEqual(["start a"])
        // the slot is held: nothing else starts now, and `run` waits
        expect(scheduler.tryNow(t.kit, t.call("v", "value"))).toBeUndefined()
        const waiting = yield* Effect.fork(scheduler.run(t.kit, t.call("b")))
        yield* settle
        expect(t.log).toEqual(["start a"])
        yield* t.open("a")
        expect(modelText(yield* Fiber.join(running))).toBe("a")
        yield* settle
        expect(t.log).toEqual(["start a", "end a", "start b"])
        // a call waits for its turn: tryNow does not pass it
        expect(scheduler.tryNow(t.kit, t.call("v", "value"))).toBeUndefined()
        yield* t.open("b")
        yield* Fiber.join(waiting)
        const who = scheduler.tryNow(Toolkit.make(Who), { id: "call-7", name: "who", arguments: {} })
        expect(modelText(yield* (who as Effect.Effect<Executor.Outcome>))).toBe("call-7")
      }))

    it.effect("leaves to run a call with resource keys, a permission, or a recorder to write to", () =>
      Effect.gen(function*() {
        const t = makeKit()
        const scheduler = yield* Scheduler.make({ maxParallel: 4 })
        expect(scheduler.tryNow(t.kit, t.call("k", "value", ["k"]))).toBeUndefined()
        const Asks = Tool.make("asks", {
          description: "Asks first",
          permission: { action: "write" },
          handler: () => Effect.succeed("ok")
        })
        expect(scheduler.tryNow(Toolkit.make(Asks), { id: "p", name: "asks", arguments: {} })).toBeUndefined()
        const layer = Recorder.layerMemory(yield* Ref.make<ReadonlyArray<Recorder.Entry>>([]))
        const recording = yield* Scheduler.make({ maxParallel: 4 }).pipe(Effect.provide(layer))
        expect(recording.tryNow(t.kit, t.call("v", "value"))).toBeUndefined()
      }))
  })
})
