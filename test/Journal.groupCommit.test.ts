/**
 * The group commit on its own: a bounded queue that back-pressures its writers, writers resumed only after their
 * transaction ends (with its outcome, or their own refusal), a failed or dying commit reported to its writers as a
 * `JournalError`, and a close that fails what was still queued.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Option, Queue } from "effect"
import * as GroupCommit from "../src/internal/journal/groupCommit.js"
import { JournalError } from "../src/Journal.js"

/**
 * A group commit whose commits record their batches, say when one starts, and wait for `open` before they return.
 * The gate opens when the scope closes at the latest: a transaction in flight holds up the close, by design.
 */
const gated = (batches: Array<ReadonlyArray<number>>, options: { maxPending: number; maxBatch: number }) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const started = yield* Queue.unbounded<ReadonlyArray<number>>()
    const group = yield* GroupCommit.make<number>((writes) =>
      Effect.sync(() => batches.push(writes)).pipe(
        Effect.zipRight(Queue.offer(started, writes)),
        Effect.zipRight(Deferred.await(gate)),
        Effect.as(writes.map(() => undefined))
      ), options)
    // after the group's own finalizer was added, so it runs first
    yield* Effect.addFinalizer(() => Deferred.succeed(gate, undefined))
    return { group, started, open: Deferred.succeed(gate, undefined) }
  })

describe("GroupCommit", () => {
  it.scoped("a writer resumes only once its transaction has committed", () =>
    Effect.gen(function*() {
      const batches: Array<ReadonlyArray<number>> = []
      const { group, open, started } = yield* gated(batches, { maxPending: 16, maxBatch: 16 })
      const writer = yield* Effect.fork(group.submit(1))
      expect(yield* Queue.take(started)).toEqual([1])
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(writer))).toBe(true)
      yield* open
      yield* Fiber.join(writer)
    }))

  it.scoped("writes beyond maxPending wait for room instead of growing the queue", () =>
    Effect.gen(function*() {
      const batches: Array<ReadonlyArray<number>> = []
      const { group, open, started } = yield* gated(batches, { maxPending: 2, maxBatch: 1 })
      const writers = yield* Effect.forEach([1, 2, 3, 4, 5, 6], (n) => Effect.fork(group.submit(n)))
      expect(yield* Queue.take(started)).toEqual([1])
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      // one write in the transaction, one waiting for the next, four waiting for room: a waiting write is committed
      // even if its writer leaves, one waiting for room was never taken, so interrupting every writer but the
      // first shows which writes the group held
      yield* Effect.forEach(writers.slice(1), Fiber.interrupt)
      yield* open
      yield* Fiber.join(writers[0])
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
      expect(batches).toEqual([[1], [2]])
    }))

  it.scoped("a write the store refused fails alone; the others of its transaction succeed", () =>
    Effect.gen(function*() {
      const refusal = new JournalError({ reason: "Conflict", message: "odd numbers are leased elsewhere" })
      const group = yield* GroupCommit.make<number>(
        (writes) => Effect.succeed(writes.map((n) => n % 2 === 1 ? refusal : undefined)),
        { maxPending: 16, maxBatch: 16 }
      )
      const results = yield* Effect.forEach([1, 2, 3, 4], (n) => Effect.either(group.submit(n)), {
        concurrency: "unbounded"
      })
      expect(results.map(Either.isRight)).toEqual([false, true, false, true])
    }))

  it.scoped("a failed commit fails all its writers with its error; the next transaction runs", () =>
    Effect.gen(function*() {
      let calls = 0
      const full = new JournalError({ reason: "Full", message: "SQLITE_FULL: database or disk is full" })
      const group = yield* GroupCommit.make<number>(
        (writes) => calls++ === 0 ? Effect.fail(full) : Effect.succeed(writes.map(() => undefined)),
        { maxPending: 16, maxBatch: 16 }
      )
      const first = yield* Effect.forEach([1, 2], (n) => Effect.flip(group.submit(n)), { concurrency: "unbounded" })
      expect(first).toEqual([full, full])
      yield* group.submit(3)
    }))

  it.scoped("a commit that dies fails its writers with a JournalError, never a defect, and the writer goes on", () =>
    Effect.gen(function*() {
      let calls = 0
      const group = yield* GroupCommit.make<number>(
        (writes) => calls++ === 0 ? Effect.die(new Error("a bug")) : Effect.succeed(writes.map(() => undefined)),
        { maxPending: 16, maxBatch: 16 }
      )
      const error = yield* Effect.flip(group.submit(1))
      expect(error).toBeInstanceOf(JournalError)
      expect(error).toMatchObject({ reason: "Unavailable", message: "the journal's writer failed: Error: a bug" })
      yield* group.submit(2)
    }))

  it.effect("closing lets the transaction in flight finish and fails the writes still queued or to come", () =>
    Effect.gen(function*() {
      const batches: Array<ReadonlyArray<number>> = []
      const [inFlight, queued, group] = yield* Effect.scoped(
        Effect.gen(function*() {
          // the gate opens as the scope closes: the transaction in flight ends during the close
          const { group, started } = yield* gated(batches, { maxPending: 4, maxBatch: 1 })
          const inFlight = yield* Effect.fork(group.submit(1))
          expect(yield* Queue.take(started)).toEqual([1])
          const queued = yield* Effect.fork(group.submit(2))
          yield* Effect.yieldNow()
          return [inFlight, queued, group] as const
        })
      )
      expect(Either.isRight(yield* Effect.either(Fiber.join(inFlight)))).toBe(true)
      const closed = "the journal was closed before the write was made durable"
      expect(yield* Effect.flip(Fiber.join(queued))).toMatchObject({ reason: "Unavailable", message: closed })
      expect(yield* Effect.flip(group.submit(3))).toMatchObject({ reason: "Unavailable", message: closed })
      expect(batches).toEqual([[1]])
    }))
})
