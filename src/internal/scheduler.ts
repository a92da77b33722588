/**
 * The executor's rules for calls that arrive one at a time over a long life (an MCP server's sessions, a stdio
 * provider's requests), rather than as one batch.
 *
 * Arrival order stands in for the model's order: a call waits for the latest earlier call on each of its resource
 * keys (so calls from every client on one key run one after another, in the order they arrived, and waits only
 * point backwards: no deadlock), then for one of `maxParallel` slots; a `sequential` tool takes every slot, so
 * nothing else runs while it does; a call that does not fit (a sequential one waiting for every slot) does not hold
 * back one behind it that does, and a slot that comes free goes to the calls already waiting before any call that
 * arrives then. Arguments are checked before any of that. Interrupting a call's fiber anywhere (while it waits or
 * while it runs) releases its place at once.
 *
 * Once a call has its turn and its slot, it runs through the one call pipeline (`call.ts`: permission, the handler,
 * the record, a span when traced), as a call of a batch does, and it counts in the same metrics.
 *
 * `tryNow` is the way in for a call that can start at once (no keys, nothing to ask, a free slot): a handler that
 * answers with a value is the outcome there and then, so a server answers such a call without a fiber.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { Outcome, ToolCall } from "../Executor.js"
import type * as Tool from "../Tool.js"
import { KernelId } from "../Tool.js"
import { ToolNotFound } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import * as Call from "./call.js"
import type { Progress } from "./context.js"
import { DEFAULT_MAX_PARALLEL } from "./executor.js"
import * as Internal from "./tool.js"

export interface Scheduler {
  /**
   * Runs one call under the shared rules, through the one call pipeline (`call.ts`: permission, the handler, the
   * record, a span when traced), and counts it in the metrics. Never fails; interruption propagates (the caller
   * decides what an interrupted call answers, if anything).
   */
  readonly run: <T extends Tool.Any>(
    toolkit: Toolkit.Toolkit<T>,
    call: ToolCall,
    options?: { readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined }
  ) => Effect.Effect<Outcome, never, Tool.Requirements<T>>
  /** Whether the runtime the scheduler was made in has a tracer of its own: calls are then traced, never `tryNow`. */
  readonly traced: boolean
  /**
   * Starts a call at once when nothing stands before its handler: no resource keys, nothing around its handler
   * (`Call.isBare`: no permission to ask, no recorder to write to, no tracer to report to), and a free slot. Its
   * handler is called here; an answer that is a value (`Effect.succeed`, `Effect.fail`) is the call's outcome, with
   * no fiber and no Effect around it, and so is a refusal (an unknown tool, invalid arguments). A handler whose
   * effect must run gives that effect, which holds the call's slot until it ends: the caller runs it at once (in a
   * fiber it observes, as `run`'s effect would be). Undefined when the call cannot start now: `run` it.
   */
  readonly tryNow: <T extends Tool.Any>(
    toolkit: Toolkit.Toolkit<T>,
    call: ToolCall,
    options?: { readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined }
  ) => Outcome | Effect.Effect<Outcome, never, Tool.Requirements<T>> | undefined
}

/**
 * A call's place on its resource keys: done once the call has finished (or was interrupted), which lets the calls
 * after it on those keys go. Lighter than a `Deferred`: a flag and the callbacks of the calls waiting for it.
 */
interface Turn {
  done: boolean
  readonly waiting: Set<() => void>
}

const endTurn = (turn: Turn): void => {
  turn.done = true
  for (const wake of turn.waiting) wake()
  turn.waiting.clear()
}

const awaitTurn = (turn: Turn): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (turn.done) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    turn.waiting.add(wake)
    return Effect.sync(() => {
      turn.waiting.delete(wake)
    })
  })

/**
 * The `maxParallel` slots. Effect's `Semaphore` does the same job, but costs more than a no-op call through an MCP
 * server: its `take` suspends through `asyncInterrupt` even when a permit is free, and each release schedules a
 * task. Here a free slot is taken synchronously, and a release hands the slots over to waiting calls in the order
 * they came (a call that needs more slots than are free does not hold back one behind it that fits, as with
 * Effect's semaphore). A waiting call that is interrupted after slots were handed to it gives them back.
 */
interface Slots {
  readonly withSlots: (n: number) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Takes `n` slots now if they are free, without waiting behind anyone. */
  readonly tryTake: (n: number) => boolean
  /** Gives back slots taken with `tryTake`. */
  readonly giveBack: (n: number) => void
}

interface Waiter {
  readonly n: number
  granted: boolean
  readonly resume: () => void
}

const makeSlots = (size: number): Slots => {
  let free = size
  const waiters = new Set<Waiter>()
  const handOver = (): void => {
    for (const waiter of waiters) {
      if (free <= 0) return
      if (waiter.n > free) continue
      free -= waiter.n
      waiter.granted = true
      waiters.delete(waiter)
      waiter.resume()
    }
  }
  const giveBack = (n: number): void => {
    free += n
    if (waiters.size > 0) handOver()
  }
  const release = (n: number) => Effect.sync(() => giveBack(n))
  const wait = (n: number): Effect.Effect<void> =>
    Effect.async<void>((resume) => {
      const waiter: Waiter = { n, granted: false, resume: () => resume(Effect.void) }
      waiters.add(waiter)
      return Effect.sync(() => {
        // interrupted while waiting: out of the line, or, if slots were just handed over, give them back
        if (waiters.delete(waiter) || !waiter.granted) return
        free += n
        handOver()
      })
    })
  return {
    tryTake: (n) => {
      // calls already waiting keep their turn
      if (free < n || waiters.size > 0) return false
      free -= n
      return true
    },
    giveBack,
    withSlots: (n) => (self) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          const body = Effect.ensuring(restore(self), release(n))
          if (free >= n) {
            free -= n
            return body
          }
          return Effect.zipRight(restore(wait(n)), body)
        })
      )
  }
}

const notFound = (toolkit: Toolkit.Toolkit<Tool.Any>, call: ToolCall): Outcome =>
  Either.left(
    Internal.makeError(ToolNotFound, { tool: call.name, available: toolkit.tools.map((t) => t.name) })
  )

/** A call refused before it could wait for anything: counted, and that is its outcome. */
const refuse = (call: ToolCall, outcome: Outcome): Outcome => {
  Call.finished(call.name, outcome, undefined)
  return outcome
}

export const make = (options?: {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
}): Effect.Effect<Scheduler> =>
  Effect.map(
    Call.current({ timeout: options?.timeout === undefined ? undefined : Duration.decode(options.timeout) }),
    (pipeline) => {
      const maxParallel = Math.max(1, Math.floor(options?.maxParallel ?? DEFAULT_MAX_PARALLEL))
      const slots = makeSlots(maxParallel)
      const now = () => pipeline.clock.unsafeCurrentTimeMillis()
      /** The latest call on each key; removed when that call is done and nothing came after it. */
      const tails = new Map<string, Turn>()
      /** A sequential tool takes every slot, so nothing runs alongside it. */
      const need = (tool: Tool.Any): number => tool.sequential ? maxParallel : 1

      const run: Scheduler["run"] = (toolkit, call, runOptions) =>
        Effect.suspend(() => {
          const tool = toolkit.byName.get(call.name)
          if (tool === undefined) return Effect.succeed(refuse(call, notFound(toolkit, call)))
          const kernel = tool[KernelId]
          const checked = Internal.prepare(kernel, call.arguments)
          if (Either.isLeft(checked)) return Effect.succeed(refuse(call, Either.left(checked.left)))
          const keys = Internal.resourcesOf(kernel, checked.right)
          if (Either.isLeft(keys)) return Effect.succeed(refuse(call, Either.left(keys.left)))
          const timing: Call.Timing = { startedAt: -1 }
          const body = Call.run(pipeline, tool, kernel, call, checked.right, {
            onProgress: runOptions?.onProgress,
            started: Call.startTiming(pipeline, timing),
            keys: keys.right
          })
          if (keys.right.length === 0) {
            const launched = Effect.suspend(() => {
              Call.waited(call.name, 0)
              return body
            })
            return Call.counted(pipeline, call.name, timing, slots.withSlots(need(tool))(launched))
          }

          // take our place on each key now, in arrival order
          const mine: Turn = { done: false, waiting: new Set() }
          const predecessors: Array<Turn> = []
          for (const key of keys.right) {
            const previous = tails.get(key)
            if (previous !== undefined && !predecessors.includes(previous)) predecessors.push(previous)
            tails.set(key, mine)
          }
          const leave = Effect.sync(() => {
            for (const key of keys.right) if (tails.get(key) === mine) tails.delete(key)
            endTurn(mine)
          })
          // the wait for the call's keys: from its arrival to the moment its predecessors on them were done,
          // counted once it has a slot too (as a batch counts the calls it starts)
          const arrived = now()
          let turnAt = arrived
          const launched = Effect.suspend(() => {
            Call.waited(call.name, turnAt - arrived)
            return body
          })
          const inSlot = slots.withSlots(need(tool))(launched)
          const afterTurn = predecessors.length === 0 ? inSlot : Effect.zipRight(
            Effect.forEach(predecessors, awaitTurn, { discard: true }),
            Effect.suspend(() => {
              turnAt = now()
              return inSlot
            })
          )
          return Call.counted(pipeline, call.name, timing, Effect.ensuring(afterTurn, leave))
        })

      const tryNow: Scheduler["tryNow"] = (toolkit, call, nowOptions) => {
        const tool = toolkit.byName.get(call.name)
        if (tool === undefined) return refuse(call, notFound(toolkit, call))
        const kernel = tool[KernelId]
        if (!Call.isBare(pipeline, kernel)) return undefined
        const checked = Internal.prepare(kernel, call.arguments)
        if (Either.isLeft(checked)) return refuse(call, Either.left(checked.left))
        const keys = Internal.resourcesOf(kernel, checked.right)
        if (Either.isLeft(keys)) return refuse(call, Either.left(keys.left))
        const slotsNeeded = need(tool)
        if (keys.right.length > 0 || !slots.tryTake(slotsNeeded)) return undefined
        Call.waited(call.name, 0)
        const timing: Call.Timing = { startedAt: now() }
        const handler = Call.callHandler(kernel, checked.right)
        if (Exit.isExit(handler)) {
          slots.giveBack(slotsNeeded)
          const outcome = Internal.classify(kernel, handler, Call.noPartial)
          Call.finished(call.name, outcome, now() - timing.startedAt)
          return outcome
        }
        const running = Call.continueHandler(kernel, call.id, handler, {
          timeout: pipeline.timeout,
          onProgress: nowOptions?.onProgress
        })
        return Call.counted(
          pipeline,
          call.name,
          timing,
          Effect.ensuring(running, Effect.sync(() => slots.giveBack(slotsNeeded)))
        )
      }

      return { run, traced: pipeline.traced, tryNow }
    }
  )
