/**
 * The executor's machinery.
 *
 * A batch is scanned once, synchronously, before anything waits: each call is looked up, its arguments checked and
 * its resource keys computed. A call whose keys overlap earlier calls' keys depends on the latest such call per
 * key; dependencies only point backwards, so the graph cannot deadlock, and by transitivity calls sharing a key
 * run in model order. Calls with no unfinished dependency join a ready list; `pump` starts ready calls while fewer
 * than `maxParallel` run (a call waiting for a key is not in the list, so it holds no slot).
 *
 * Each call is its own fiber, started from the batch's runtime and observed: its completion (however it ended)
 * emits `Finished`, releases its dependents and pumps again, synchronously, so the scheduling needs no fiber of its
 * own. Closing the batch's scope interrupts the running calls and waits for them, so every finalizer has run when
 * the stream ends or `run` returns.
 *
 * Events go to one queue. When the consumer falls `EVENT_BUFFER` events behind, no new call starts and
 * `Tool.progress` waits, so events are never buffered without bound; `Finished` is never dropped. Progress that
 * lands after its call's `Finished` is dropped on the consumer side, where the order is already fixed.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRefs from "effect/FiberRefs"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import type * as Tool from "../Tool.js"
import { KernelId } from "../Tool.js"
import type { ToolError } from "../ToolError.js"
import { isToolError, ToolFailure, ToolInterrupted, ToolNotFound } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import type { ToolResult } from "../ToolResult.js"
import type { Progress } from "./context.js"
import type { Kernel } from "./tool.js"
import * as Internal from "./tool.js"

export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

export type Outcome = Either.Either<ToolResult, ToolError>

export interface Started {
  readonly _tag: "Started"
  readonly index: number
  readonly call: ToolCall
}

export interface ProgressEvent {
  readonly _tag: "Progress"
  readonly index: number
  readonly call: ToolCall
  readonly progress: Progress
}

export interface Finished {
  readonly _tag: "Finished"
  readonly index: number
  readonly call: ToolCall
  readonly outcome: Outcome
  readonly durationMillis: number
}

export type ToolEvent = Started | ProgressEvent | Finished

export interface Options<RS = never> {
  readonly maxParallel?: number | undefined
  readonly sequential?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly onStart?: ((call: ToolCall) => Effect.Effect<void, unknown, RS>) | undefined
}

export interface Handle {
  readonly events: Stream.Stream<ToolEvent>
  readonly cancel: (callId: string) => Effect.Effect<void>
}

export const DEFAULT_MAX_PARALLEL = 8

/** How far the consumer may fall behind before no new call starts and progress reporting waits. */
export const EVENT_BUFFER = 1024

// ---------------------------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------------------------

const callsTotal = MetricKey.counter("agent_tools_calls_total", {
  description: "Tool calls finished, by tool and outcome",
  incremental: true
})
const callDuration = MetricKey.histogram(
  "agent_tools_call_duration_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "How long a tool call's handler ran, in milliseconds"
)
const resourceWait = MetricKey.histogram(
  "agent_tools_resource_wait_ms",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 16 }),
  "How long a tool call waited for its resource keys, in milliseconds"
)

const outcomeTag = (outcome: Outcome): string => (Either.isRight(outcome) ? "Success" : outcome.left._tag)

interface ToolMetrics {
  readonly calls: Map<string, Metric.Metric.Counter<number>>
  readonly duration: Metric.Metric.Histogram<number>
  readonly wait: Metric.Metric.Histogram<number>
}

/**
 * Metrics per tool, with the tags in the key and made once: `Metric.tagged` builds a new key on every update,
 * which costs more than a no-op call.
 */
const metricsByTool = new Map<string, ToolMetrics>()

const metricsFor = (tool: string): ToolMetrics => {
  let metrics = metricsByTool.get(tool)
  if (metrics === undefined) {
    metrics = {
      calls: new Map(),
      duration: Metric.fromMetricKey(MetricKey.tagged(callDuration, "tool", tool)),
      wait: Metric.fromMetricKey(MetricKey.tagged(resourceWait, "tool", tool))
    }
    metricsByTool.set(tool, metrics)
  }
  return metrics
}

const noTags: ReadonlyArray<never> = []

/** The tag for calls naming no tool: a model's made-up names must not each become a metric key. */
const UNKNOWN_TOOL = "(unknown)"

const countOutcome = (tool: string, outcome: Outcome): void => {
  if (Either.isLeft(outcome) && outcome.left._tag === "ToolNotFound") tool = UNKNOWN_TOOL
  const metrics = metricsFor(tool)
  const tag = outcomeTag(outcome)
  let counter = metrics.calls.get(tag)
  if (counter === undefined) {
    counter = Metric.fromMetricKey(MetricKey.tagged(MetricKey.tagged(callsTotal, "tool", tool), "outcome", tag))
    metrics.calls.set(tag, counter)
  }
  counter.unsafeUpdate(1, noTags)
}

// ---------------------------------------------------------------------------------------------------------------
// one batch
// ---------------------------------------------------------------------------------------------------------------

const PENDING = 0
const RUNNING = 1
const DONE = 2

/** A call that passed its checks, with its place in the dependency graph. */
interface Prepared {
  readonly kernel: Kernel
  readonly params: unknown
  readonly keys: ReadonlyArray<string>
  /** Unfinished predecessors. */
  pending: number
  dependents: Array<number> | undefined
  readyAt: number
  startedAt: number
  /** The last `partial` progress output, kept for `ToolInterrupted`; made when the call starts. */
  partial: { value: unknown } | undefined
}

const emptyKeys: ReadonlyArray<string> = []

/** The tracer every runtime has unless another is installed. */
const nativeTracer = Effect.runSync(Effect.tracer)

export const start = <Tools extends Tool.Any, RS>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Options<RS> | undefined
): Effect.Effect<Handle, never, Scope.Scope | RS | Tool.Requirements<Tools>> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<RS | Tool.Requirements<Tools>>()
    const services = FiberRefs.getOrDefault(runtime.fiberRefs, DefaultServices.currentServices)
    const clock = Context.get(services, Clock.Clock)
    // Spans cost about as much as a no-op call: made only when a tracer other than Effect's built-in one (which
    // exports nowhere) is installed.
    const traced = Context.get(services, Tracer.Tracer) !== nativeTracer
    const runFork = Runtime.runFork(runtime)
    const n = calls.length
    const events = yield* Queue.unbounded<ToolEvent>()
    const state = new Uint8Array(n)
    const prepared: Array<Prepared | undefined> = new Array(n)
    const outcomesOfInvalid: Array<Outcome | undefined> = new Array(n)
    const running = new Map<number, Fiber.RuntimeFiber<Outcome>>()
    const ready: Array<number> = []
    let readyHead = 0
    let closed = false
    const maxParallel = Math.max(1, Math.floor(options?.maxParallel ?? DEFAULT_MAX_PARALLEL))
    const timeout = options?.timeout === undefined ? undefined : Duration.decode(options.timeout)
    const onStart = options?.onStart
    const batchStart = clock.unsafeCurrentTimeMillis()

    // -- scan: look up, check, compute keys; never waits ----------------------------------------------------
    let sequential = options?.sequential === true
    let available: ReadonlyArray<string> | undefined
    for (let i = 0; i < n; i++) {
      const call = calls[i]
      const tool = toolkit.byName.get(call.name)
      if (tool === undefined) {
        available ??= toolkit.tools.map((t) => t.name)
        outcomesOfInvalid[i] = Either.left(new ToolNotFound({ tool: call.name, available }))
        continue
      }
      if (tool.sequential) sequential = true
      const kernel = tool[KernelId]
      const checked = Internal.prepare(kernel, call.arguments)
      if (Either.isLeft(checked)) {
        outcomesOfInvalid[i] = Either.left(checked.left)
        continue
      }
      const keys = Internal.resourcesOf(kernel, checked.right)
      if (Either.isLeft(keys)) {
        outcomesOfInvalid[i] = Either.left(keys.left)
        continue
      }
      prepared[i] = {
        kernel,
        params: checked.right,
        keys: keys.right.length === 0 ? emptyKeys : keys.right,
        pending: 0,
        dependents: undefined,
        readyAt: batchStart,
        startedAt: -1,
        partial: undefined
      }
    }

    // -- dependencies: per key, each call waits for the latest earlier call naming it; a sequential batch is
    //    one chain in model order ----------------------------------------------------------------------------
    const lastByKey = new Map<string, number>()
    let previousValid = -1
    for (let i = 0; i < n; i++) {
      const p = prepared[i]
      if (p === undefined) continue
      const depend = (before: number) => {
        const predecessor = prepared[before]!
        const dependents = predecessor.dependents ??= []
        // several keys may name the same predecessor: count it once
        if (dependents[dependents.length - 1] === i) return
        dependents.push(i)
        p.pending++
      }
      if (sequential) {
        if (previousValid >= 0) depend(previousValid)
        previousValid = i
      } else {
        for (const key of p.keys) {
          const previous = lastByKey.get(key)
          lastByKey.set(key, i)
          if (previous !== undefined) depend(previous)
        }
      }
      if (p.pending === 0) ready.push(i)
    }
    const slots = sequential ? 1 : maxParallel

    // -- back-pressure ----------------------------------------------------------------------------------------
    const waitingForRoom: Array<() => void> = []
    const roomForEvents = () => events.unsafeSize().pipe(Option.getOrElse(() => 0)) < EVENT_BUFFER
    const waitForRoom: Effect.Effect<void> = Effect.async<void>((resume) => {
      if (roomForEvents()) return resume(Effect.void)
      const wake = () => resume(Effect.void)
      waitingForRoom.push(wake)
      return Effect.sync(() => {
        const at = waitingForRoom.indexOf(wake)
        if (at >= 0) waitingForRoom.splice(at, 1)
      })
    })

    // -- finishing a call: event, metrics, release dependents, pump ------------------------------------------
    const finish = (i: number, outcome: Outcome): void => {
      state[i] = DONE
      const p = prepared[i]
      const now = clock.unsafeCurrentTimeMillis()
      const durationMillis = p === undefined || p.startedAt < 0 ? 0 : now - p.startedAt
      events.unsafeOffer({ _tag: "Finished", index: i, call: calls[i], outcome, durationMillis })
      const tool = calls[i].name
      countOutcome(tool, outcome)
      if (p === undefined) return
      if (p.startedAt >= 0) metricsFor(tool).duration.unsafeUpdate(durationMillis, noTags)
      // A call cancelled while it still waited for its turn holds its place in the chain until its own
      // predecessors are done, so the calls after it on a key never overlap the ones before it.
      if (p.pending === 0) release(i, now)
    }

    /** Lets a finished call's dependents go, and forgets the call (a long batch keeps no finished calls). */
    const release = (i: number, now: number): void => {
      const p = prepared[i]!
      prepared[i] = undefined
      if (p.dependents === undefined) return
      for (const d of p.dependents) {
        const dependent = prepared[d]!
        if (--dependent.pending !== 0) continue
        if (state[d] === PENDING) {
          dependent.readyAt = now
          ready.push(d)
        } else {
          release(d, now)
        }
      }
    }

    const interrupted = (i: number): Outcome => {
      const p = prepared[i]!
      const partial = p.partial?.value
      return Either.left(
        new ToolInterrupted({ tool: p.kernel.name, ...(partial === undefined ? {} : { partial }) })
      )
    }

    // -- one call, after its turn and its slot ---------------------------------------------------------------
    const runCall = (i: number): Effect.Effect<Outcome, never, any> => {
      const p = prepared[i]!
      const call = calls[i]
      const kernel = p.kernel
      const partial = p.partial = { value: undefined }
      const onProgress = (progress: Progress) =>
        Effect.zipRight(
          waitForRoom,
          Effect.sync(() => {
            events.unsafeOffer({ _tag: "Progress", index: i, call, progress })
          })
        )
      const handler = Effect.suspend(() => {
        p.startedAt = clock.unsafeCurrentTimeMillis()
        events.unsafeOffer({ _tag: "Started", index: i, call })
        return Internal.runHandler(kernel, call.id, p.params, { timeout, onProgress, partial })
      })
      let body: Effect.Effect<Outcome, never, any> = handler
      if (onStart !== undefined) {
        body = Effect.flatMap(Effect.exit(Effect.suspend(() => onStart(call))), (exit) => {
          if (Exit.isSuccess(exit)) return handler
          if (Cause.isInterruptedOnly(exit.cause)) return Effect.interrupt
          const failure = Cause.failureOption(exit.cause)
          if (Option.isSome(failure) && !isToolError(failure.value)) {
            const error = failure.value
            return Effect.succeed(
              Either.left(new ToolFailure({ tool: kernel.name, message: kernel.failureMessage(error), error }))
            )
          }
          return Effect.succeed(Internal.classify(kernel, exit, () => undefined))
        })
      }
      if (kernel.permission !== undefined) {
        const afterPermission = body
        body = Effect.flatMap(
          Internal.askPermission(kernel, call.id, p.params),
          (refused) => refused === undefined ? afterPermission : Effect.succeed(Either.left(refused))
        )
      }
      const recorded = Effect.tap(body, (outcome) => Internal.recordDetails(call.id, kernel.name, outcome))
      if (!traced) return recorded
      return Effect.withSpan(
        recorded.pipe(
          Effect.tap((outcome) => Effect.annotateCurrentSpan("tool.outcome", outcomeTag(outcome))),
          // stopped from outside (cancel, the consumer leaving): the outcome is decided after the span, say it here
          Effect.onInterrupt(() => Effect.annotateCurrentSpan("tool.outcome", "ToolInterrupted"))
        ),
        "Executor.call",
        {
          attributes: {
            "tool.name": kernel.name,
            "tool.call_id": call.id,
            "tool.resource_keys": p.keys.join(",")
          },
          // a stack trace per call costs more than the call itself; the span's name and attributes locate it
          captureStackTrace: false
        }
      )
    }

    /** How a call's fiber ended, as its outcome. */
    const complete = (i: number, exit: Exit.Exit<Outcome>): void => {
      if (state[i] === DONE) return
      const p = prepared[i]!
      finish(
        i,
        Exit.isSuccess(exit)
          ? exit.value
          : Cause.isInterruptedOnly(exit.cause)
          ? interrupted(i)
          : Internal.classify(p.kernel, exit, () => p.partial?.value)
      )
    }

    const launch = (i: number): void => {
      state[i] = RUNNING
      const p = prepared[i]!
      // the wait for the call's keys: from the batch's start to the moment its predecessors on them were done
      metricsFor(calls[i].name).wait.unsafeUpdate(p.readyAt - batchStart, noTags)
      // The call starts at once, in this stack: a handler that never suspends has finished when `runFork`
      // returns, with no scheduling round trip. One that suspends is observed; `pump` is a loop, not a recursion,
      // so a long batch of synchronous calls never deepens the stack.
      const fiber = runFork(runCall(i))
      const exit = fiber.unsafePoll()
      if (exit !== null) return complete(i, exit)
      running.set(i, fiber)
      fiber.addObserver((exit) => {
        running.delete(i)
        complete(i, exit)
        pump()
      })
    }

    let pumping = false
    /** Starts ready calls while there is a free slot and the consumer keeps up. */
    const pump = (): void => {
      if (closed || pumping) return
      pumping = true
      try {
        while (running.size < slots && readyHead < ready.length && roomForEvents()) {
          const i = ready[readyHead++]
          if (state[i] === PENDING) launch(i)
        }
        if (readyHead === ready.length && readyHead > 0) {
          ready.length = 0
          readyHead = 0
        }
      } finally {
        pumping = false
      }
    }

    /** After the consumer took events: wake progress reporters and start what was held back. */
    const consumed = (): void => {
      if (!roomForEvents()) return
      const wake = waitingForRoom.splice(0, waitingForRoom.length)
      for (const f of wake) f()
      pump()
    }

    const cancel = (callId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const toInterrupt: Array<Fiber.RuntimeFiber<Outcome>> = []
        for (let i = 0; i < n; i++) {
          if (calls[i].id !== callId) continue
          if (state[i] === PENDING) {
            finish(i, interrupted(i))
          } else if (state[i] === RUNNING) {
            const fiber = running.get(i)
            if (fiber !== undefined) toInterrupt.push(fiber)
          }
        }
        pump()
        return toInterrupt.length === 0 ? Effect.void : Fiber.interruptAll(toInterrupt)
      })

    // -- go ---------------------------------------------------------------------------------------------------
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return running.size === 0 ? Effect.void : Fiber.interruptAll([...running.values()])
      })
    )
    for (let i = 0; i < n; i++) {
      const outcome = outcomesOfInvalid[i]
      if (outcome !== undefined) finish(i, outcome)
    }
    pump()

    const seen = new Uint8Array(n)
    let delivered = 0
    const stream: Stream.Stream<ToolEvent> = n === 0 ? Stream.empty : Stream.fromQueue(events).pipe(
      Stream.mapChunks((chunk) => {
        consumed()
        return chunk
      }),
      Stream.filter((event) => {
        if (event._tag !== "Finished") return seen[event.index] === 0
        seen[event.index] = 1
        return true
      }),
      Stream.takeUntil((event) => event._tag === "Finished" && ++delivered === n)
    )
    return { events: stream, cancel }
  })

export const shouldTerminate = (outcomes: ReadonlyArray<Outcome>): boolean =>
  outcomes.length > 0 && outcomes.every((o) => Either.isRight(o) && o.right.terminate)
