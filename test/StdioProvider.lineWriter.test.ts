/**
 * The line writer both sides of the stdio provider protocol write through: a lone line goes out at once, lines
 * sent while a write is in flight go out together in the next write, in order and whole; an interrupted sender's
 * line that has not gone out yet never does; a failed write fails every sender in it and the next write goes on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Runtime } from "effect"
import { lineQueue, lineWriter } from "../src/internal/lines.js"

/** An output whose writes wait for `release`, recording what each write carried. */
const makeOutput = Effect.gen(function*() {
  const writes: Array<string> = []
  const gates: Array<Deferred.Deferred<void, Error>> = []
  const runFork = Runtime.runFork(yield* Effect.runtime<never>())
  const write = lineWriter(lineQueue<Error>((text, done) =>
    runFork(Effect.suspend(() => {
      writes.push(text)
      const gate = Deferred.unsafeMake<void, Error>(undefined as never)
      gates.push(gate)
      return Deferred.await(gate)
    })).addObserver(done)
  ))
  return {
    writes,
    write,
    /** Ends the oldest write still in flight, with success or the error. */
    finish: (error?: Error) => Deferred.done(gates.shift()!, error === undefined ? Exit.void : Exit.fail(error))
  }
})

const settle = Effect.repeatN(Effect.yieldNow(), 10)

describe("lineWriter", () => {
  it.effect("writes a lone line at once, and lines sent during a write together in the next one, in order", () =>
    Effect.gen(function*() {
      const output = yield* makeOutput
      const first = yield* Effect.fork(output.write("a\n"))
      yield* settle
      expect(output.writes).toEqual(["a\n"])
      const rest = yield* Effect.forEach(["b\n", "c\n", "d\n"], (line) => Effect.fork(output.write(line)))
      yield* settle
      expect(output.writes).toEqual(["a\n"])
      yield* output.finish()
      yield* Fiber.join(first)
      yield* settle
      expect(output.writes).toEqual(["a\n", "b\nc\nd\n"])
      expect(rest.every((fiber) => fiber.unsafePoll() === null)).toBe(true)
      yield* output.finish()
      yield* Effect.forEach(rest, Fiber.join)
    }))

  it.effect("does not write the line of a sender interrupted before its write started", () =>
    Effect.gen(function*() {
      const output = yield* makeOutput
      const first = yield* Effect.fork(output.write("a\n"))
      const dropped = yield* Effect.fork(output.write("b\n"))
      const kept = yield* Effect.fork(output.write("c\n"))
      yield* settle
      yield* Fiber.interrupt(dropped)
      yield* output.finish()
      yield* Fiber.join(first)
      yield* settle
      expect(output.writes).toEqual(["a\n", "c\n"])
      yield* output.finish()
      yield* Fiber.join(kept)
    }))

  it.effect("fails every sender of a failed write, and goes on with the next one", () =>
    Effect.gen(function*() {
      const output = yield* makeOutput
      const first = yield* Effect.fork(output.write("a\n"))
      const second = yield* Effect.fork(output.write("b\n"))
      const third = yield* Effect.fork(output.write("c\n"))
      yield* settle
      yield* output.finish()
      yield* Fiber.join(first)
      yield* settle
      const broken = new Error("EPIPE")
      yield* output.finish(broken)
      expect(yield* Fiber.await(second)).toEqual(Exit.fail(broken))
      expect(yield* Fiber.await(third)).toEqual(Exit.fail(broken))
      const later = yield* Effect.fork(output.write("d\n"))
      yield* settle
      yield* output.finish()
      yield* Fiber.join(later)
      expect(output.writes).toEqual(["a\n", "b\nc\n", "d\n"])
    }))
})
