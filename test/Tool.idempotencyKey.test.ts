/**
 * The idempotency key `Tool.currentCall` gives, without a journal: minted once per model call (so a middleware that
 * runs the handler again sees the same key), unique per call, on every path a call can take through the executor.
 * The journaled keys (the same across processes) are in Journal.run.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { Executor, Tool, Toolkit, ToolResult } from "../src/index.js"
import type { Middleware } from "../src/index.js"

const keyOf = Effect.map(Tool.currentCall, (call) => Option.getOrThrow(call).idempotencyKey)

/** Answers its key at once: the executor's bare path, which runs the handler's effect in a fiber of its own. */
const Bare = Tool.make("bare", { description: "Its key", handler: () => keyOf })

const texts = (outcomes: ReadonlyArray<Executor.Outcome>) =>
  outcomes.map((outcome) => ToolResult.toText(Either.getOrThrow(outcome)))

describe("idempotency keys without a journal", () => {
  it.effect("every call of a batch has a key of its own, on the bare path and through the pipeline", () =>
    Effect.gen(function*() {
      const calls = [0, 1, 2].map((i) => ({ id: "same-id", name: "bare", arguments: "{}", i }))
      const bare = texts(yield* Executor.run(Toolkit.make(Bare), calls))
      const passThrough: Middleware.Middleware = (_, next) => next
      const piped = texts(yield* Executor.run(Toolkit.make(Bare), calls, { middleware: [passThrough] }))
      for (const keys of [bare, piped]) {
        expect(new Set(keys).size).toBe(3)
        for (const key of keys) expect(key).toMatch(/^[0-9a-f-]{36}$/)
      }
      expect(bare.filter((key) => piped.includes(key))).toEqual([])
    }))

  it.effect("a middleware that runs the handler again gets the same key: the key is the call's, not the run's", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const Records = Tool.make("records", {
        description: "Keeps its key",
        handler: () => Effect.map(keyOf, (key) => void seen.push(key))
      })
      const twice: Middleware.Middleware = (_, next) => Effect.zipRight(next, next)
      yield* Executor.run(Toolkit.make(Records), [
        { id: "a", name: "records", arguments: "{}" },
        { id: "b", name: "records", arguments: "{}" }
      ], { middleware: [twice] })
      expect(seen).toHaveLength(4)
      const byCall = [seen.filter((key) => key === seen[0]), seen.filter((key) => key !== seen[0])]
      expect(byCall.map((keys) => keys.length)).toEqual([2, 2])
    }))
})
