/**
 * Group commit: writes from many fibers share one transaction, and each writer resumes only once its transaction
 * has committed.
 *
 * A writer puts its write and a `Deferred` on a bounded queue (waiting for room when it is full, so a slow store
 * back-pressures its writers instead of growing a buffer) and waits on the `Deferred`. One writer fiber takes
 * everything queued (up to `maxBatch`), commits it in one transaction, and completes each `Deferred` after the
 * COMMIT: with the commit's error when the transaction failed (nothing of it is durable), or with that write's own
 * rejection when the store refused one write and kept the others. While a transaction commits, the writes that
 * arrive queue up for the next one, so the number of transactions follows the store's speed, not the writers'.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { JournalError } from "../../Journal.js"

/**
 * Commits a batch in one transaction: for each write, `undefined` (durable) or the reason the store refused it
 * (the others still commit); a failure of the whole means none is durable.
 */
export type Commit<W> = (
  writes: ReadonlyArray<W>
) => Effect.Effect<ReadonlyArray<JournalError | undefined>, JournalError>

interface Pending<W> {
  readonly write: W
  readonly done: Deferred.Deferred<void, JournalError>
}

type State =
  | { readonly _tag: "Open" }
  | { readonly _tag: "Closed" }

const closedError = (): JournalError =>
  new JournalError({ reason: "Unavailable", message: "the journal was closed before the write was made durable" })

export class GroupCommit<W> {
  private state: State = { _tag: "Open" }

  constructor(private readonly queue: Queue.Queue<Pending<W>>) {}

  /** Returns once the write is durable, or fails with why it is not. */
  submit(write: W): Effect.Effect<void, JournalError> {
    return Effect.suspend(() => {
      if (this.state._tag === "Closed") return Effect.fail(closedError())
      return Effect.flatMap(
        Deferred.make<void, JournalError>(),
        (done) =>
          Queue.offer(this.queue, { write, done }).pipe(
            // an offer waiting for room when the queue shuts down is interrupted: the write was not taken
            Effect.catchAllCause(() => Effect.fail(closedError())),
            Effect.zipRight(Deferred.await(done))
          )
      )
    })
  }

  /** Stops taking writes; fails those still queued (the transaction in flight, if any, finishes first). */
  close(writer: Fiber.Fiber<unknown>): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.state = { _tag: "Closed" }
      return Fiber.interrupt(writer).pipe(
        Effect.zipRight(Queue.takeAll(this.queue)),
        Effect.flatMap((left) => Effect.forEach(left, (p) => Deferred.fail(p.done, closedError()), { discard: true })),
        Effect.zipRight(Queue.shutdown(this.queue))
      )
    })
  }
}

/** Completes every write of a batch from the commit's exit. */
const settle = <W>(
  batch: ReadonlyArray<Pending<W>>,
  exit: Exit.Exit<ReadonlyArray<JournalError | undefined>, JournalError>
): Effect.Effect<void> => {
  if (Exit.isSuccess(exit)) {
    return Effect.forEach(batch, (pending, i) => {
      const rejected = exit.value[i]
      return rejected === undefined ? Deferred.succeed(pending.done, undefined) : Deferred.fail(pending.done, rejected)
    }, { discard: true })
  }
  const failure = Cause.failureOption(exit.cause)
  const error = failure._tag === "Some"
    ? failure.value
    // a defect in a commit is a bug; its writers still learn that nothing of it is durable
    : new JournalError({
      reason: "Unavailable",
      message: `the journal's writer failed: ${Cause.pretty(exit.cause).split("\n")[0]}`,
      cause: Cause.squash(exit.cause)
    })
  return Effect.forEach(batch, (pending) => Deferred.fail(pending.done, error), { discard: true })
}

/** A group commit whose writer fiber lives as long as the scope. */
export const make = <W>(
  commit: Commit<W>,
  options: { readonly maxPending: number; readonly maxBatch: number }
): Effect.Effect<GroupCommit<W>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.bounded<Pending<W>>(options.maxPending)
    const group = new GroupCommit(queue)
    // the first write wakes the writer; one turn of the scheduler lets the writes of fibers started with it join
    const takeBatch = Effect.flatMap(
      Effect.zipLeft(Queue.take(queue), Effect.yieldNow()),
      (first) => Effect.map(Queue.takeUpTo(queue, options.maxBatch - 1), (rest) => [first, ...rest])
    )
    const writeOnce = Effect.flatMap(takeBatch, (batch) =>
      // uninterruptible: once a transaction starts, its writers learn how it ended, also when the layer closes
      Effect.uninterruptible(
        Effect.flatMap(Effect.exit(commit(batch.map((p) => p.write))), (exit) => settle(batch, exit))
      ))
    const writer = yield* Effect.forkScoped(Effect.forever(writeOnce))
    // runs before the scope interrupts the writer (finalizers run last first): writes queued behind it are failed
    yield* Effect.addFinalizer(() => group.close(writer))
    return group
  })
