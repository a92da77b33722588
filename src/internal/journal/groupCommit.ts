/**
 * Group commit: writes from many fibers share one transaction, and each writer resumes only once its transaction
 * has ended.
 *
 * Writes join the open batch; one writer fiber takes the open batch (up to `maxBatch` writes, the rest wait for
 * the next), commits it in one transaction, and completes the batch's one `Deferred` after the COMMIT: with the
 * commit's error when the transaction failed (nothing of it is durable), or with each write's own refusal when the
 * store refused one write and kept the others. While a transaction commits, new writes fill the next batch, so the
 * number of transactions follows the store's speed, not the writers'. One `Deferred` per batch, not per write:
 * making one costs more than the rest of a write's way through here.
 *
 * At most `maxPending` writes wait at once; a writer beyond that waits for a batch to end before its write joins
 * one (back-pressure: a store slower than its writers bounds memory instead of growing a buffer).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import { JournalError } from "../../Journal.js"

/**
 * Commits a batch in one transaction: for each write, `undefined` (durable) or the reason the store refused it
 * (the others still commit); a failure of the whole means none is durable.
 */
export type Commit<W> = (
  writes: ReadonlyArray<W>
) => Effect.Effect<ReadonlyArray<JournalError | undefined>, JournalError>

type Results = ReadonlyArray<JournalError | undefined>

/** Writes that will share a transaction, and the one `Deferred` their writers wait on. */
class Batch<W> {
  readonly writes: Array<W> = []
  readonly done = Deferred.unsafeMake<Results, JournalError>(FiberId.none)
}

type State<W> =
  | {
    readonly _tag: "Open"
    /** Full batches waiting for the writer, oldest first, then the batch that takes new writes. */
    readonly batches: Array<Batch<W>>
    /** How many writes are in `batches`. */
    pending: number
    /** Completed when a write arrives for a writer that found nothing to do. */
    wake: Deferred.Deferred<void> | undefined
    /** Completed when a batch ends, for writers waiting for room. */
    room: Deferred.Deferred<void> | undefined
  }
  | { readonly _tag: "Closed" }

const closedError = (): JournalError =>
  new JournalError({ reason: "Unavailable", message: "the journal was closed before the write was made durable" })

export class GroupCommit<W> {
  private state: State<W> = { _tag: "Open", batches: [new Batch()], pending: 0, wake: undefined, room: undefined }

  constructor(
    private readonly commit: Commit<W>,
    private readonly maxPending: number,
    private readonly maxBatch: number
  ) {}

  /** Returns once the write is durable, or fails with why it is not. */
  submit(write: W): Effect.Effect<void, JournalError> {
    return Effect.suspend(() => {
      const state = this.state
      if (state._tag === "Closed") return Effect.fail(closedError())
      if (state.pending >= this.maxPending) {
        state.room ??= Deferred.unsafeMake(FiberId.none)
        return Effect.zipRight(Deferred.await(state.room), this.submit(write))
      }
      let batch = state.batches[state.batches.length - 1]
      if (batch.writes.length >= this.maxBatch) {
        batch = new Batch()
        state.batches.push(batch)
      }
      const index = batch.writes.push(write) - 1
      state.pending++
      if (state.wake !== undefined) {
        const wake = state.wake
        state.wake = undefined
        Deferred.unsafeDone(wake, Exit.void)
      }
      return Effect.flatMap(Deferred.await(batch.done), (results) => {
        const refused = results[index]
        return refused === undefined ? Effect.void : Effect.fail(refused)
      })
    })
  }

  /** One turn of the writer: the oldest batch, once it has a write (and the writes started with that one). */
  readonly step: Effect.Effect<void> = Effect.suspend(() => {
    const state = this.state
    if (state._tag === "Closed") return Effect.never
    if (state.batches[0].writes.length === 0) {
      const wake = Deferred.unsafeMake<void>(FiberId.none)
      state.wake = wake
      return Deferred.await(wake)
    }
    // one turn of the scheduler lets the writes of fibers started with the first one join its batch
    return Effect.zipRight(Effect.yieldNow(), Effect.uninterruptible(this.commitOldest))
  })

  /** Commits the oldest batch and completes its writers; a new open batch takes the writes that come meanwhile. */
  private readonly commitOldest: Effect.Effect<void> = Effect.suspend(() => {
    const state = this.state
    if (state._tag === "Closed") return Effect.void
    const batch = state.batches.shift()!
    if (state.batches.length === 0) state.batches.push(new Batch())
    return Effect.flatMap(Effect.exit(this.commit(batch.writes)), (exit) =>
      Effect.sync(() => {
        if (this.state._tag === "Open") {
          this.state.pending -= batch.writes.length
          const room = this.state.room
          this.state.room = undefined
          if (room !== undefined) Deferred.unsafeDone(room, Exit.void)
        }
        Deferred.unsafeDone(batch.done, Exit.isSuccess(exit) ? exit : Exit.fail(commitError(exit.cause)))
      }))
  })

  /** Stops taking writes; fails those still waiting (the transaction in flight, if any, ends first). */
  readonly close: Effect.Effect<void> = Effect.sync(() => {
    const state = this.state
    if (state._tag === "Closed") return
    this.state = { _tag: "Closed" }
    for (const batch of state.batches) Deferred.unsafeDone(batch.done, Exit.fail(closedError()))
    if (state.room !== undefined) Deferred.unsafeDone(state.room, Exit.void)
  })
}

/** How a failed commit reaches its writers: its own error, or (a defect is a bug) that nothing of it is durable. */
const commitError = (cause: Cause.Cause<JournalError>): JournalError => {
  const failure = Cause.failureOption(cause)
  return failure._tag === "Some"
    ? failure.value
    : new JournalError({
      reason: "Unavailable",
      message: `the journal's writer failed: ${Cause.pretty(cause).split("\n")[0]}`,
      cause: Cause.squash(cause)
    })
}

/** A group commit whose writer fiber lives as long as the scope. */
export const make = <W>(
  commit: Commit<W>,
  options: { readonly maxPending: number; readonly maxBatch: number }
): Effect.Effect<GroupCommit<W>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const group = new GroupCommit(commit, Math.max(1, options.maxPending), Math.max(1, options.maxBatch))
    const writer = yield* Effect.forkScoped(Effect.forever(group.step))
    // before the scope's own interruption of the writer (finalizers run last first): the commit in flight ends
    // (it is uninterruptible), then the writes still waiting fail
    yield* Effect.addFinalizer(() => Effect.zipRight(Fiber.interrupt(writer), group.close))
    return group
  })
