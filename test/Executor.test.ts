import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Either, Exit, Fiber, Layer, Random, Ref, Schema, Stream, TestClock } from "effect"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { Executor, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { modelText, withClock } from "./helpers.js"

/** What happened, in order: `start <tag>`, `end <tag>`, `interrupted <tag>`, `finalized <tag>`. */
const makeLog = () => {
  const lines: Array<string> = []
  return { lines, push: (line: string) => Effect.sync(() => void lines.push(line)) }
}

type Log = ReturnType<typeof makeLog>

/** A tool that sleeps `ms` (Effect's clock), on the resource keys it is given, logging what it does. */
const sleeper = (log: Log, options: { readonly sequential?: boolean } = {}) =>
  Tool.make("sleep", {
    description: "Sleep",
    parameters: {
      tag: Schema.String,
      ms: Schema.Int,
      keys: Schema.optional(Schema.Array(Schema.String))
    },
    sequential: options.sequential,
    resource: ({ keys }) => keys,
    handler: ({ ms, tag }) =>
      Effect.gen(function*() {
        yield* log.push(`start ${tag}`)
        yield* Effect.sleep(ms)
        yield* log.push(`end ${tag}`)
        return tag
      }).pipe(
        Effect.onInterrupt(() => log.push(`interrupted ${tag}`)),
        Effect.ensuring(log.push(`finalized ${tag}`))
      )
  })

const call = (id: string, args: Record<string, unknown>, name = "sleep"): Executor.ToolCall => ({
  id,
  name,
  arguments: JSON.stringify(args)
})

const describeEvent = (event: Executor.ToolEvent): string =>
  event._tag === "Finished" ? `Finished ${event.index} ${modelText(event.outcome)}` : `${event._tag} ${event.index}`

describe("Executor", () => {
  describe("events", () => {
    it.effect("every call gets exactly one Finished, and Started only when its handler runs", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const events = yield* withClock(Stream.runCollect(Executor.stream(kit, [
          call("a", { tag: "a", ms: 10 }),
          call("b", {}, "missing"),
          call("c", { tag: "c", ms: "ten" }),
          call("d", { tag: "d", ms: 5 })
        ])))
        const all = Chunk.toReadonlyArray(events)
        const finished = all.filter((e) => e._tag === "Finished").map((e) => e.index).sort()
        expect(finished).toEqual([0, 1, 2, 3])
        expect(all.filter((e) => e._tag === "Started").map((e) => e.index).sort()).toEqual([0, 3])
        expect(all.map(describeEvent)).toContain(
          `Finished 1 Error: unknown tool "missing"; available tools: sleep`
        )
        expect(all.map(describeEvent)).toContain(
          `Finished 2 Error: invalid arguments: ms: expected an integer, got "ten"`
        )
        for (const index of [0, 3]) {
          const mine = all.filter((e) => e.index === index).map((e) => e._tag)
          expect(mine[0]).toBe("Started")
          expect(mine[mine.length - 1]).toBe("Finished")
        }
      }))

    it.effect("completions stream in completion order while run returns outcomes in call order", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const calls = [
          call("slow", { tag: "slow", ms: 30 }),
          call("fast", { tag: "fast", ms: 10 }),
          call("mid", { tag: "mid", ms: 20 })
        ]
        const events = yield* withClock(Stream.runCollect(Executor.stream(kit, calls)))
        expect(Chunk.toReadonlyArray(events).filter((e) => e._tag === "Finished").map((e) => e.index)).toEqual([
          1,
          2,
          0
        ])
        const outcomes = yield* withClock(Executor.run(kit, calls))
        expect(outcomes.map(modelText)).toEqual(["slow", "fast", "mid"])
      }))

    it.effect("an empty batch is an empty stream and no outcomes", () =>
      Effect.gen(function*() {
        const kit = Toolkit.make(sleeper(makeLog()))
        expect(Chunk.size(yield* Stream.runCollect(Executor.stream(kit, [])))).toBe(0)
        expect(yield* Executor.run(kit, [])).toEqual([])
      }))

    it.live("progress carries its call, and progress after the call's Finished is dropped", () =>
      Effect.gen(function*() {
        const Reporter = Tool.make("report", {
          description: "Report, and leave a reporter behind",
          handler: () =>
            Effect.gen(function*() {
              yield* Tool.progress({ progress: 1, total: 2, message: "half" })
              // a fiber outliving the call keeps reporting: none of it may follow the Finished event
              yield* Effect.forkDaemon(
                Effect.forEach([1, 2, 3], () =>
                  Effect.zipRight(Effect.sleep("2 millis"), Tool.progress({ message: "late" })))
              )
              return "done"
            })
        })
        const events = yield* Executor.stream(Toolkit.make(Reporter), [{ id: "r", name: "report", arguments: "" }])
          .pipe(Stream.runCollect)
        yield* Effect.sleep("20 millis")
        const tags = Chunk.toReadonlyArray(events).map((e) => e._tag)
        expect(tags).toEqual(["Started", "Progress", "Finished"])
        const progress = Chunk.toReadonlyArray(events)[1]
        expect(progress._tag === "Progress" && progress.progress).toEqual({ progress: 1, total: 2, message: "half" })
        expect(progress._tag === "Progress" && progress.call.id).toBe("r")
      }))

    it.effect("progress reported after a call's Finished is dropped while the rest of the batch goes on", () =>
      Effect.gen(function*() {
        const late = yield* Deferred.make<void>()
        const reported = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const kit = Toolkit.make(
          Tool.make("leaves", {
            description: "Finishes, leaving a fiber that reports once the call has finished",
            handler: () =>
              Effect.as(
                Effect.forkDaemon(
                  Deferred.await(late).pipe(
                    Effect.zipRight(Tool.progress({ message: "late" })),
                    Effect.zipRight(Deferred.succeed(reported, undefined))
                  )
                ),
                "done"
              )
          }),
          Tool.make("waits", { description: "Waits for its gate", handler: () => Deferred.await(gate) })
        )
        const seen: Array<string> = []
        const batch = yield* Executor.start(kit, [
          { id: "a", name: "leaves", arguments: "" },
          { id: "b", name: "waits", arguments: "" }
        ])
        const consumer = yield* Effect.fork(Stream.runForEach(batch.events, (event) => {
          seen.push(`${event._tag} ${event.index}`)
          // the late report is made once its call's Finished has been delivered, while the stream is still open
          return event._tag === "Finished" && event.index === 0 ? Deferred.succeed(late, undefined) : Effect.void
        }))
        yield* Deferred.await(reported)
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(consumer)
        expect(seen.filter((line) => line.endsWith(" 0"))).toEqual(["Started 0", "Finished 0"])
        expect(seen).toContain("Finished 1")
      }).pipe(Effect.scoped))
  })

  describe("scheduling", () => {
    it.effect("at most maxParallel handlers run at once", () =>
      Effect.gen(function*() {
        let running = 0
        let peak = 0
        const Busy = Tool.make("busy", {
          description: "Busy",
          parameters: { ms: Schema.Int },
          handler: ({ ms }) =>
            Effect.acquireUseRelease(
              Effect.sync(() => {
                running++
                peak = Math.max(peak, running)
              }),
              () => Effect.sleep(ms),
              () => Effect.sync(() => void running--)
            )
        })
        const calls = Array.from({ length: 20 }, (_, i) => call(`c${i}`, { ms: 5 + (i % 3) }, "busy"))
        yield* withClock(Executor.run(Toolkit.make(Busy), calls, { maxParallel: 3 }))
        expect(peak).toBe(3)
        peak = 0
        yield* withClock(Executor.run(Toolkit.make(Busy), calls))
        expect(peak).toBe(Executor.DEFAULT_MAX_PARALLEL)
      }))

    it.effect("a call waiting for its resource key holds no slot", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        // two slots: `first` holds key k for 100ms; `second` waits for k; the free calls must still run meanwhile
        yield* withClock(Executor.run(kit, [
          call("first", { tag: "first", ms: 100, keys: ["k"] }),
          call("second", { tag: "second", ms: 10, keys: ["k"] }),
          call("free1", { tag: "free1", ms: 10 }),
          call("free2", { tag: "free2", ms: 10 })
        ], { maxParallel: 2 }))
        const order = log.lines.filter((l) => l.startsWith("start") || l.startsWith("end"))
        expect(order.indexOf("end free2")).toBeLessThan(order.indexOf("end first"))
        expect(order.indexOf("start second")).toBeGreaterThan(order.indexOf("end first"))
      }))

    it.effect("calls sharing a resource key never overlap and run in model order; the rest run alongside", () =>
      Effect.gen(function*() {
        const active = new Map<string, number>()
        const started: Record<string, Array<number>> = {}
        let overlaps = 0
        let peak = 0
        let running = 0
        const Keyed = Tool.make("keyed", {
          description: "Work on one key",
          parameters: { n: Schema.Int, key: Schema.String, ms: Schema.Int },
          resource: ({ key }) => `file:${key}`,
          handler: ({ key, ms, n }) =>
            Effect.gen(function*() {
              if (active.has(key)) overlaps++
              active.set(key, n)
              running++
              peak = Math.max(peak, running)
              ;(started[key] ??= []).push(n)
              yield* Effect.sleep(ms)
            }).pipe(Effect.ensuring(Effect.sync(() => {
              active.delete(key)
              running--
            })))
        })
        const keys = ["a", "b", "c", "d"]
        const calls = yield* Effect.forEach(Array.from({ length: 100 }, (_, n) => n), (n) =>
          Effect.gen(function*() {
            const key = keys[yield* Random.nextIntBetween(0, 4)]
            const ms = yield* Random.nextIntBetween(1, 50)
            return call(`c${n}`, { n, key, ms }, "keyed")
          }))
        const outcomes = yield* withClock(Executor.run(Toolkit.make(Keyed), calls), "2 hours")
        expect(outcomes.every(Either.isRight)).toBe(true)
        expect(overlaps).toBe(0)
        // four keys, eight slots: the four chains run alongside each other
        expect(peak).toBe(4)
        for (const key of keys) {
          const expected = calls.filter((c) => JSON.parse(c.arguments as string).key === key).map((c) =>
            JSON.parse(c.arguments as string).n
          )
          expect(started[key] ?? []).toEqual(expected)
        }
      }).pipe(Effect.withRandom(Random.make("executor-keys"))))

    it.effect("a call naming several keys waits for all of them, without deadlock whatever the key order", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const outcomes = yield* withClock(Executor.run(kit, [
          call("ab", { tag: "ab", ms: 30, keys: ["a", "b"] }),
          call("ba", { tag: "ba", ms: 10, keys: ["b", "a"] }),
          call("a", { tag: "a", ms: 10, keys: ["a"] }),
          call("b", { tag: "b", ms: 10, keys: ["b"] }),
          call("c", { tag: "c", ms: 10, keys: ["c", "a"] })
        ]))
        expect(outcomes.map(modelText)).toEqual(["ab", "ba", "a", "b", "c"])
        const starts = log.lines.filter((l) => l.startsWith("start")).map((l) => l.slice(6))
        expect(starts).toEqual(["ab", "ba", "a", "b", "c"])
        const ends = log.lines.filter((l) => l.startsWith("end")).map((l) => l.slice(4))
        // `a` and `b` each wait for `ba` (which waits for `ab`); `c` waits for `a` through key a
        expect(ends.indexOf("ab")).toBeLessThan(starts.indexOf("ba") + 1)
        expect(log.lines.indexOf("end ba")).toBeLessThan(log.lines.indexOf("start a"))
        expect(log.lines.indexOf("end ba")).toBeLessThan(log.lines.indexOf("start b"))
        expect(log.lines.indexOf("end a")).toBeLessThan(log.lines.indexOf("start c"))
      }))

    it.effect("a call naming one key twice runs (it does not wait for itself), and the next on the key after it", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const outcomes = yield* withClock(Executor.run(kit, [
          call("twice", { tag: "twice", ms: 10, keys: ["a", "b", "a"] }),
          call("after", { tag: "after", ms: 10, keys: ["a"] })
        ]))
        expect(outcomes.map(modelText)).toEqual(["twice", "after"])
        expect(log.lines.indexOf("end twice")).toBeLessThan(log.lines.indexOf("start after"))
        expect(
          Executor.plan(kit, [
            call("twice", { tag: "twice", ms: 10, keys: ["a", "b", "a"] }),
            call("after", { tag: "after", ms: 10, keys: ["a"] })
          ]).calls.map((c) => [c.waitsFor, c.keys])
        ).toEqual([[[], ["a", "b"]], [[0], ["a"]]])
      }))

    it.effect("a fixed resource string serialises every call of the tool", () =>
      Effect.gen(function*() {
        let active = 0
        let peak = 0
        const Shell = Tool.make("shell", {
          description: "One shell",
          parameters: { ms: Schema.Int },
          resource: "shell:session",
          handler: ({ ms }) =>
            Effect.acquireUseRelease(
              Effect.sync(() => peak = Math.max(peak, ++active)),
              () => Effect.sleep(ms),
              () => Effect.sync(() => active--)
            )
        })
        yield* withClock(
          Executor.run(Toolkit.make(Shell), Array.from({ length: 6 }, (_, i) => call(`s${i}`, { ms: 10 }, "shell")))
        )
        expect(peak).toBe(1)
      }))

    it.effect("a sequential tool anywhere in the batch runs the whole batch one call at a time, in order", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const Barrier = Tool.make("barrier", {
          description: "Nothing else runs",
          sequential: true,
          handler: () => log.push("barrier")
        })
        const kit = Toolkit.make(sleeper(log), Barrier)
        yield* withClock(Executor.run(kit, [
          call("a", { tag: "a", ms: 30 }),
          call("b", { tag: "b", ms: 10 }),
          call("x", {}, "barrier"),
          call("c", { tag: "c", ms: 10 })
        ]))
        expect(log.lines.filter((l) => !l.startsWith("finalized"))).toEqual([
          "start a",
          "end a",
          "start b",
          "end b",
          "barrier",
          "start c",
          "end c"
        ])
      }))

    it.effect("options.sequential runs the batch one call at a time, in order", () =>
      Effect.gen(function*() {
        const log = makeLog()
        yield* withClock(Executor.run(Toolkit.make(sleeper(log)), [
          call("a", { tag: "a", ms: 30 }),
          call("b", { tag: "b", ms: 10 })
        ], { sequential: true }))
        expect(log.lines.filter((l) => !l.startsWith("finalized"))).toEqual(["start a", "end a", "start b", "end b"])
      }))

    it.effect("arguments are checked before a call waits for anything", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const batch = yield* Executor.start(kit, [
            call("long", { tag: "long", ms: 1000, keys: ["k"] }),
            call("bad", { tag: "bad", ms: "x", keys: ["k"] }),
            call("unknown", {}, "nope")
          ], { maxParallel: 1 })
          // no clock advance: the long call is still running, yet both refusals are already out
          return yield* batch.events.pipe(Stream.take(3), Stream.runCollect)
        }))
        expect(Chunk.toReadonlyArray(events).map((e) => `${e._tag} ${e.index}`)).toEqual([
          "Finished 1",
          "Finished 2",
          "Started 0"
        ])
      }))
  })

  describe("cancellation", () => {
    it.effect("stopping the consumer interrupts the running handlers, whose finalizers have run when it ends", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const taken = yield* Executor.stream(kit, [
          call("a", { tag: "a", ms: 100_000 }),
          call("b", { tag: "b", ms: 100_000 })
        ]).pipe(Stream.take(2), Stream.runCollect)
        expect(Chunk.toReadonlyArray(taken).map((e) => e._tag)).toEqual(["Started", "Started"])
        expect(log.lines).toContain("finalized a")
        expect(log.lines).toContain("finalized b")
        expect(log.lines).toContain("interrupted a")
      }))

    it.effect("interrupting run interrupts the handlers and their finalizers have run when it returns", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const fiber = yield* Effect.fork(Executor.run(kit, [
          call("a", { tag: "a", ms: 100_000 }),
          call("b", { tag: "b", ms: 100_000, keys: ["k"] }),
          call("c", { tag: "c", ms: 10, keys: ["k"] })
        ]))
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(log.lines).toEqual(expect.arrayContaining(["finalized a", "finalized b"]))
        // c waited for b and never started
        expect(log.lines.some((l) => l.endsWith(" c"))).toBe(false)
      }))

    it.effect("cancel(callId) interrupts a running call, which finishes ToolInterrupted with its last partial output", () =>
      Effect.gen(function*() {
        const finalized = yield* Ref.make(false)
        const Stream_ = Tool.make("produce", {
          description: "Produce output slowly",
          handler: () =>
            Effect.gen(function*() {
              yield* Tool.progress({ partial: "line 1" })
              yield* Tool.progress({ partial: "line 1\nline 2" })
              yield* Effect.never
            }).pipe(Effect.ensuring(Ref.set(finalized, true)))
        })
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const batch = yield* Executor.start(Toolkit.make(Stream_), [
            { id: "p", name: "produce", arguments: "" },
            { id: "q", name: "produce", arguments: "" }
          ])
          const collected = yield* Effect.fork(Stream.runCollect(batch.events))
          yield* TestClock.adjust("1 second")
          yield* batch.cancel("p")
          // cancel returns once the call's finalizers have run
          expect(yield* Ref.get(finalized)).toBe(true)
          yield* batch.cancel("q")
          return yield* Fiber.join(collected)
        }))
        const finished = Chunk.toReadonlyArray(events).filter((e) => e._tag === "Finished")
        expect(finished.map((e) => e.index)).toEqual([0, 1])
        const first = finished[0]
        expect(Either.isLeft(first.outcome) && first.outcome.left).toMatchObject({
          _tag: "ToolInterrupted",
          partial: "line 1\nline 2"
        })
        expect(modelText(first.outcome)).toBe("Error: the call was cancelled before it finished")
      }))

    it.effect("a call cancelled before its turn never starts, and the calls after it keep model order", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const batch = yield* Executor.start(kit, [
            call("x", { tag: "x", ms: 100, keys: ["q"] }),
            call("y", { tag: "y", ms: 10, keys: ["q"] }),
            call("z", { tag: "z", ms: 10, keys: ["q"] })
          ])
          const collected = yield* Effect.fork(Stream.runCollect(batch.events))
          yield* TestClock.adjust("50 millis")
          yield* batch.cancel("y")
          yield* TestClock.adjust("1 second")
          return yield* Fiber.join(collected)
        }))
        expect(Chunk.toReadonlyArray(events).map((e) => `${e._tag} ${e.index}`)).toEqual([
          "Started 0",
          "Finished 1",
          "Finished 0",
          "Started 2",
          "Finished 2"
        ])
        // z (same key) waited for x even though y, between them, was cancelled
        expect(log.lines.indexOf("end x")).toBeLessThan(log.lines.indexOf("start z"))
        expect(log.lines.some((l) => l.endsWith(" y"))).toBe(false)
      }))

    it.effect("cancel applies to every unfinished call with that id", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const events = yield* Effect.scoped(Effect.gen(function*() {
          const batch = yield* Executor.start(kit, [
            call("dup", { tag: "one", ms: 100 }),
            call("dup", { tag: "two", ms: 100 })
          ])
          const collected = yield* Effect.fork(Stream.runCollect(batch.events))
          yield* TestClock.adjust("10 millis")
          yield* batch.cancel("dup")
          return yield* Fiber.join(collected)
        }))
        const finished = Chunk.toReadonlyArray(events).filter((e) => e._tag === "Finished")
        expect(finished.map((e) => Either.isLeft(e.outcome) && e.outcome.left._tag)).toEqual([
          "ToolInterrupted",
          "ToolInterrupted"
        ])
      }))
  })

  describe("failures", () => {
    it.effect("a defect in one handler is that call's ToolDefect; the rest of the batch carries on", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const Boom = Tool.make("boom", {
          description: "Dies",
          handler: () => Effect.die(new Error("kaboom\n    at somewhere.js:1:1"))
        })
        const outcomes = yield* withClock(Executor.run(Toolkit.make(sleeper(log), Boom), [
          call("a", { tag: "a", ms: 10 }),
          call("b", {}, "boom"),
          call("c", { tag: "c", ms: 20 })
        ]))
        expect(outcomes.map(modelText)).toEqual(["a", `Error: tool "boom" panicked: kaboom`, "c"])
      }))

    it.effect("the tool's timeout, else the executor's default, interrupts the handler and runs its finalizers", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const Own = Tool.make("own", {
          description: "Has its own timeout",
          timeout: "50 millis",
          handler: () => Effect.never.pipe(Effect.ensuring(log.push("finalized own")))
        })
        const kit = Toolkit.make(sleeper(log), Own)
        const outcomes = yield* withClock(
          Executor.run(kit, [call("o", {}, "own"), call("s", { tag: "s", ms: 10_000 })], { timeout: "1 second" })
        )
        expect(outcomes.map(modelText)).toEqual([
          `Error: tool "own" timed out after 50ms`,
          `Error: tool "sleep" timed out after 1s`
        ])
        expect(log.lines).toEqual(expect.arrayContaining(["finalized own", "finalized s", "interrupted s"]))
      }))

    it.effect("onStart runs when the call is handed to its tool; its failure completes the call, which never runs", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const kit = Toolkit.make(sleeper(log))
        const events = yield* withClock(Stream.runCollect(Executor.stream(kit, [
          call("ok", { tag: "ok", ms: 10 }),
          call("refused", { tag: "refused", ms: 10 })
        ], {
          onStart: (c) =>
            Effect.zipRight(
              log.push(`dispatch ${c.id}`),
              c.id === "refused" ? Effect.fail(new Error("journal unavailable")) : Effect.void
            )
        })))
        expect(log.lines.indexOf("dispatch ok")).toBeLessThan(log.lines.indexOf("start ok"))
        expect(log.lines).not.toContain("start refused")
        const refused = Chunk.toReadonlyArray(events).filter((e) => e.index === 1)
        expect(refused.map(describeEvent)).toEqual(["Finished 1 Error: journal unavailable"])
      }))

    it.effect("the executor never retries: a failing call runs once", () =>
      Effect.gen(function*() {
        let runs = 0
        const Flaky = Tool.make("flaky", {
          description: "Fails",
          handler: () => Effect.suspend(() => (runs++, Effect.fail("nope")))
        })
        const outcomes = yield* Executor.run(Toolkit.make(Flaky), [{ id: "f", name: "flaky", arguments: "{}" }])
        expect(runs).toBe(1)
        expect(outcomes.map(modelText)).toEqual(["Error: nope"])
      }))

    it.effect("the executor closes nothing the host built: a tool's scoped resource outlives the batch", () =>
      Effect.gen(function*() {
        const released = yield* Ref.make(false)
        class Connection
          extends Effect.Tag("test/Connection")<Connection, { readonly query: Effect.Effect<string> }>()
        {}
        const ConnectionLive = Layer.scoped(
          Connection,
          Effect.acquireRelease(Effect.succeed({ query: Effect.succeed("row") }), () => Ref.set(released, true))
        )
        const Query = Tool.make("query", {
          description: "Query",
          handler: () => Effect.flatMap(Connection, (c) => c.query)
        })
        yield* Effect.scoped(Effect.gen(function*() {
          const context = yield* Layer.build(ConnectionLive)
          const batch = [{ id: "1", name: "query", arguments: "" }, { id: "2", name: "query", arguments: "" }]
          const outcomes = yield* Executor.run(Toolkit.make(Query), batch).pipe(Effect.provide(context))
          expect(outcomes.map(modelText)).toEqual(["row", "row"])
          expect(yield* Ref.get(released)).toBe(false)
        }))
        expect(yield* Ref.get(released)).toBe(true)
      }))
  })

  describe("typed outcomes", () => {
    const Measure = Tool.make("measure", {
      description: "Measure a text",
      parameters: { text: Schema.String },
      success: Schema.Struct({ length: Schema.Int }),
      handler: ({ text }) => Effect.succeed({ length: text.length })
    })
    const Shout = Tool.make("shout", {
      description: "Shout a text",
      parameters: { text: Schema.String },
      handler: ({ text }) => Effect.succeed(text.toUpperCase())
    })
    const kit = Toolkit.make(Measure, Shout)
    const calls: ReadonlyArray<Executor.ToolCall> = [
      { id: "1", name: "shout", arguments: { text: "hi" } },
      { id: "2", name: "measure", arguments: { text: "four" } },
      { id: "3", name: "measure", arguments: { text: 4 } },
      { id: "4", name: "nope", arguments: {} }
    ]

    it.effect("isOutcomeOf holds for the calls naming that tool, whatever their outcome", () =>
      Effect.gen(function*() {
        const isMeasure = Executor.isOutcomeOf(kit, "measure")
        const outcomes = yield* Executor.run(kit, calls)
        expect(outcomes.map((outcome, i) => isMeasure(calls[i], outcome))).toEqual([false, true, true, false])
        const lengths = outcomes.flatMap((outcome, i) =>
          isMeasure(calls[i], outcome) && Either.isRight(outcome) ? [outcome.right.structured.length] : []
        )
        expect(lengths).toEqual([4])
      }))

    it.effect("isOutcomeOf narrows a Finished event's outcome", () =>
      Effect.gen(function*() {
        const isShout = Executor.isOutcomeOf(kit, "shout")
        const events = yield* Stream.runCollect(Executor.stream(kit, calls))
        const shouted = Chunk.toReadonlyArray(events).flatMap((event) =>
          event._tag === "Finished" && isShout(event.call, event.outcome) && Either.isRight(event.outcome)
            ? [ToolResult.toText(event.outcome.right)]
            : []
        )
        expect(shouted).toEqual(["HI"])
      }))
  })

  describe("back-pressure and memory", () => {
    it.live("a consumer that falls behind holds the batch back instead of buffering without bound", () =>
      Effect.gen(function*() {
        let reported = 0
        const Chatty = Tool.make("chatty", {
          description: "Reports a lot",
          handler: () =>
            Effect.forEach(
              Array.from({ length: 5000 }, (_, i) => i),
              (i) => Effect.zipRight(Tool.progress({ progress: i }), Effect.sync(() => void reported++)),
              { discard: true }
            )
        })
        yield* Effect.scoped(Effect.gen(function*() {
          const batch = yield* Executor.start(Toolkit.make(Chatty), [{ id: "c", name: "chatty", arguments: "" }])
          yield* Effect.sleep("100 millis")
          // nobody consumed: the handler is parked once the buffer is full
          expect(reported).toBeLessThanOrEqual(1100)
          expect(reported).toBeGreaterThan(0)
          const events = yield* Stream.runCollect(batch.events)
          expect(reported).toBe(5000)
          expect(Chunk.size(events)).toBe(5002)
        }))
      }))

    it.live("run keeps no events: progress never waits for a consumer", () =>
      Effect.gen(function*() {
        let reported = 0
        const gate = yield* Deferred.make<void>()
        const Chatty = Tool.make("chatty", {
          description: "Reports a lot, then waits",
          handler: () =>
            Effect.forEach(
              Array.from({ length: 5000 }, (_, i) => i),
              (i) => Effect.zipRight(Tool.progress({ progress: i }), Effect.sync(() => void reported++)),
              { discard: true }
            ).pipe(Effect.zipRight(Deferred.await(gate)), Effect.as("done"))
        })
        const fiber = yield* Effect.fork(
          Executor.run(Toolkit.make(Chatty), [{ id: "c", name: "chatty", arguments: "" }])
        )
        // all 5,000 reports went through with nobody reading events (start's buffer holds a handler at 1,024)
        yield* Effect.sleep("200 millis")
        expect(reported).toBe(5000)
        yield* Deferred.succeed(gate, undefined)
        expect((yield* Fiber.join(fiber)).map(modelText)).toEqual(["done"])
      }))

    it.live("100,000 no-op calls stream to the end without the events being retained", () =>
      Effect.gen(function*() {
        v8.setFlagsFromString("--expose-gc")
        const gc = vm.runInNewContext("gc") as () => void
        const Noop = Tool.make("noop", {
          description: "Nothing",
          parameters: { path: Schema.String },
          handler: () => Effect.void
        })
        const n = 100_000
        const calls = Array.from(
          { length: n },
          (_, i) => ({ id: `c${i}`, name: "noop", arguments: "{\"path\":\"x\"}" })
        )
        gc()
        const before = process.memoryUsage().heapUsed
        const samples: Array<number> = []
        let finished = 0
        yield* Executor.stream(Toolkit.make(Noop), calls).pipe(
          Stream.runForEach((event) =>
            Effect.sync(() => {
              if (event._tag !== "Finished") return
              finished++
              if (finished % 20_000 === 0) {
                gc()
                samples.push(process.memoryUsage().heapUsed - before)
              }
            })
          )
        )
        expect(finished).toBe(n)
        // 200,000 events of ~150 bytes would add ~30 MB between the first and the last sample if they were kept;
        // what the batch holds (its checked calls) shrinks as calls finish
        expect(samples[samples.length - 1] - samples[0]).toBeLessThan(2 * 1024 * 1024)
        expect(Math.max(...samples)).toBeLessThan(50 * 1024 * 1024)
      }), 120_000)
  })

  it("shouldTerminate is true only when every outcome is a success that sets it", () => {
    const done = Either.right(ToolResult.withTerminate(ToolResult.text("answered")))
    const more = Either.right(ToolResult.text("more"))
    const failed = Either.left(new ToolError.ToolInterrupted({ tool: "x" }))
    expect(Executor.shouldTerminate([done, done])).toBe(true)
    expect(Executor.shouldTerminate([done, more])).toBe(false)
    expect(Executor.shouldTerminate([done, failed])).toBe(false)
    expect(Executor.shouldTerminate([])).toBe(false)
  })

  it.effect("onStart's failure is a ToolError kept as is when it is one", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const Tool_ = Tool.make("t", { description: "T", handler: () => Deferred.succeed(gate, void 0) })
      const outcomes = yield* Executor.run(Toolkit.make(Tool_), [{ id: "1", name: "t", arguments: "" }], {
        onStart: () => Effect.fail(new ToolError.PermissionDenied({ tool: "t", description: "dispatch refused" }))
      })
      expect(outcomes.map(modelText)).toEqual(["Error: permission denied: dispatch refused"])
      expect(yield* Deferred.isDone(gate)).toBe(false)
    }))
})
