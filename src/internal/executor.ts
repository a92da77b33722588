/**
 * The executor's machinery.
 *
 * A batch is scanned once, synchronously, before anything waits: each call is looked up, its arguments checked and
 * its resource keys computed. A call whose keys overlap earlier calls' keys depends on the latest such call per
 * key; dependencies only point backwards, so the graph cannot deadlock, and by transitivity calls sharing a key
 * run in model order. Calls with no unfinished dependency join a ready list; `pump` starts ready calls while fewer
 * than `maxParallel` run (a call waiting for a key is not in the list, so it holds no slot).
 *
 * A call runs one of two ways. A call with something around its handler (`onStart`, permission, a span when a
 * tracer is installed, a record when a recorder is) is an Effect that does all that, in a fiber of its own. A
 * "bare" call (none of those) has its handler function called in the pump's stack: when it answers with a value
 * (`Effect.succeed`, `Effect.fail` and `Effect.void` are `Exit`s) the call is finished there, with no fiber and no
 * scheduling; any other effect runs in a fiber forked with the call context already set. Either way a fiber is
 * started from the batch's runtime and observed: its completion (however it ended) emits `Finished`, releases its
 * dependents and pumps again, synchronously, so the scheduling needs no fiber of its own, and one that never
 * suspends has finished when `runFork` returns. Closing the batch's scope interrupts the running calls and waits
 * for them, so every finalizer has run when the stream ends or `run` returns.
 *
 * A call's state lives in arrays indexed by its place in the batch (a few bytes per call, no object per call), and
 * its decoded parameters are dropped once it is done.
 *
 * Events go to one plain buffer, which the consumer's stream takes whole on each pull. When the consumer falls
 * `EVENT_BUFFER` events behind, no new call starts and `Tool.progress` waits, so events are never buffered without
 * bound; `Finished` is never dropped. Progress that lands after its call's `Finished` is dropped on the consumer
 * side, where the order is already fixed.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as FiberId from "effect/FiberId"
import * as FiberRefs from "effect/FiberRefs"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { Recorder as RecorderTag } from "../Recorder.js"
import type * as Tool from "../Tool.js"
import { KernelId } from "../Tool.js"
import type { ToolError } from "../ToolError.js"
import { isToolError, ToolFailure, ToolNotFound } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import type { ToolResult } from "../ToolResult.js"
import type { Progress } from "./context.js"
import { currentCall, nativeTracer } from "./context.js"
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

const emptyKeys: ReadonlyArray<string> = []

const endOfStream: Effect.Effect<never, Option.Option<never>> = Effect.fail(Option.none())

const noPartial = (): unknown => undefined

export const start = <Tools extends Tool.Any, RS>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Options<RS> | undefined
): Effect.Effect<Handle, never, Scope.Scope | RS | Tool.Requirements<Tools>> => begin(toolkit, calls, options, false)

/**
 * The batch's outcomes in call order, once every call has finished; the calls run as `start` runs them. No event is
 * kept: the outcomes are written where they belong as the calls finish, so the batch needs no stream (whose
 * machinery, woken once per finished call when calls end one at a time, costs more than the call), and nothing
 * waits for a consumer.
 */
export const run = <Tools extends Tool.Any, RS>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Options<RS> | undefined
): Effect.Effect<ReadonlyArray<Outcome>, never, RS | Tool.Requirements<Tools>> =>
  Effect.scoped(Effect.flatMap(begin(toolkit, calls, options, true), (batch) => batch.outcomes))

interface Batch extends Handle {
  /** With `collect`: the outcomes once every call has finished. */
  readonly outcomes: Effect.Effect<ReadonlyArray<Outcome>>
}

const begin = <Tools extends Tool.Any, RS>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Options<RS> | undefined,
  /** Keep only the outcomes, no events: see {@link run}. */
  collect: boolean
): Effect.Effect<Batch, never, Scope.Scope | RS | Tool.Requirements<Tools>> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<RS | Tool.Requirements<Tools>>()
    const services = FiberRefs.getOrDefault(runtime.fiberRefs, DefaultServices.currentServices)
    const clock = Context.get(services, Clock.Clock)
    // Spans cost about as much as a no-op call: made only when a tracer other than Effect's built-in one (which
    // exports nowhere) is installed.
    const traced = Context.get(services, Tracer.Tracer) !== nativeTracer
    const onStart = options?.onStart
    // A call needs no more than its handler when nothing is asked before it runs (`onStart`, permission), nothing
    // observes it (a span), and nothing records its result: such a call starts without an Effect around it.
    const bare = onStart === undefined && !traced && Option.isNone(Context.getOption(runtime.context, RecorderTag))
    const runFork = Runtime.runFork(runtime)
    const n = calls.length
    const maxParallel = Math.max(1, Math.floor(options?.maxParallel ?? DEFAULT_MAX_PARALLEL))
    const timeout = options?.timeout === undefined ? undefined : Duration.decode(options.timeout)
    const batchStart = clock.unsafeCurrentTimeMillis()

    // A call's state is spread over arrays indexed by its place in the batch, rather than an object per call: a
    // batch of 100,000 calls then holds a few bytes per call besides its decoded parameters, and no boxed numbers.
    const state = new Uint8Array(n)
    /** The call's tool; undefined for a call that never got past its checks. */
    const kernels: Array<Kernel | undefined> = new Array(n)
    /** Decoded parameters, dropped when the call is done with them. */
    const params: Array<unknown> = new Array(n)
    /** Resource keys, kept for the span's attributes only. */
    const keysOf: Array<ReadonlyArray<string>> | undefined = traced ? new Array(n) : undefined
    /** Unfinished predecessors. */
    const pending = new Uint32Array(n)
    const dependents: Array<Array<number> | undefined> = new Array(n)
    /** When the call's predecessors were done (the batch's start for a call with none). */
    const readyAt = new Float64Array(n).fill(batchStart)
    /** When its handler started, -1 until then. */
    const startedAt = new Float64Array(n).fill(-1)
    /** The last `partial` progress output, kept for `ToolInterrupted`; made when the call starts in a fiber. */
    const partials: Array<{ value: unknown } | undefined> = new Array(n)
    const outcomesOfInvalid: Array<Outcome | undefined> = new Array(n)
    const running = new Map<number, Fiber.RuntimeFiber<unknown, unknown>>()
    const ready: Array<number> = []
    let readyHead = 0
    let closed = false

    /** Call `i` waits for the earlier call `before`. */
    const depend = (i: number, before: number): void => {
      const waiting = dependents[before] ??= []
      // several keys may name the same predecessor: count it once
      if (waiting[waiting.length - 1] === i) return
      waiting.push(i)
      pending[i]++
    }

    // -- scan: look up, check, compute keys and the dependencies they make; never waits. Per key, each call
    //    waits for the latest earlier call naming it; dependencies only point backwards, so no deadlock ---------
    let sequential = options?.sequential === true
    let available: ReadonlyArray<string> | undefined
    const lastByKey = new Map<string, number>()
    for (let i = 0; i < n; i++) {
      const call = calls[i]
      const tool = toolkit.byName.get(call.name)
      if (tool === undefined) {
        available ??= toolkit.tools.map((t) => t.name)
        const names = available
        outcomesOfInvalid[i] = Either.left(
          Internal.makeError(ToolNotFound, { tool: call.name, available: names })
        )
        continue
      }
      if (tool.sequential) sequential = true
      const kernel = tool[KernelId]
      const checked = Internal.prepare(kernel, call.arguments)
      if (Either.isLeft(checked)) {
        outcomesOfInvalid[i] = checked as unknown as Outcome
        continue
      }
      const keys = Internal.resourcesOf(kernel, checked.right)
      if (Either.isLeft(keys)) {
        outcomesOfInvalid[i] = keys as unknown as Outcome
        continue
      }
      kernels[i] = kernel
      params[i] = checked.right
      if (keysOf !== undefined) keysOf[i] = keys.right.length === 0 ? emptyKeys : keys.right
      for (const key of keys.right) {
        const previous = lastByKey.get(key)
        lastByKey.set(key, i)
        if (previous !== undefined) depend(i, previous)
      }
    }
    lastByKey.clear()
    // a sequential batch is one chain in model order instead
    if (sequential) {
      pending.fill(0)
      dependents.fill(undefined)
      let previous = -1
      for (let i = 0; i < n; i++) {
        if (kernels[i] === undefined) continue
        if (previous >= 0) depend(i, previous)
        previous = i
      }
    }
    for (let i = 0; i < n; i++) if (kernels[i] !== undefined && pending[i] === 0) ready.push(i)
    const slots = sequential ? 1 : maxParallel

    // -- events: a plain buffer the consumer takes whole; it wakes the consumer when it was waiting ---------
    let buffer: Array<ToolEvent> = []
    let wakeConsumer: (() => void) | undefined
    // -- or, collecting: each Finished's outcome in its place, and the waiter woken when the last is in
    const outcomes: Array<Outcome> = collect ? new Array(n) : []
    let finished = 0
    let wakeCollector: (() => void) | undefined
    const emit = collect
      ? (event: ToolEvent): void => {
        if (event._tag !== "Finished") return
        outcomes[event.index] = event.outcome
        if (++finished === n && wakeCollector !== undefined) wakeCollector()
      }
      : (event: ToolEvent): void => {
        buffer.push(event)
        if (wakeConsumer !== undefined) {
          const wake = wakeConsumer
          wakeConsumer = undefined
          wake()
        }
      }

    // -- back-pressure ----------------------------------------------------------------------------------------
    const waitingForRoom: Array<() => void> = []
    const roomForEvents = () => collect || buffer.length < EVENT_BUFFER
    const waitForRoom: Effect.Effect<void> = Effect.async<void>((resume) => {
      if (roomForEvents()) return resume(Effect.void)
      const wake = () => resume(Effect.void)
      waitingForRoom.push(wake)
      return Effect.sync(() => {
        const at = waitingForRoom.indexOf(wake)
        if (at >= 0) waitingForRoom.splice(at, 1)
      })
    })

    // -- finishing a call: event, metrics, release dependents -------------------------------------------------
    const finish = (i: number, outcome: Outcome): void => {
      state[i] = DONE
      const now = clock.unsafeCurrentTimeMillis()
      const started = startedAt[i]
      const durationMillis = started < 0 ? 0 : now - started
      emit({ _tag: "Finished", index: i, call: calls[i], outcome, durationMillis })
      const tool = calls[i].name
      countOutcome(tool, outcome)
      if (kernels[i] === undefined) return
      if (started >= 0) metricsFor(tool).duration.unsafeUpdate(durationMillis, noTags)
      // A call cancelled while it still waited for its turn holds its place in the chain until its own
      // predecessors are done, so the calls after it on a key never overlap the ones before it.
      if (pending[i] === 0) release(i, now)
    }

    /** Lets a finished call's dependents go, and forgets the call (a long batch keeps no finished calls). */
    const release = (i: number, now: number): void => {
      params[i] = undefined
      partials[i] = undefined
      const waiting = dependents[i]
      if (waiting === undefined) return
      dependents[i] = undefined
      for (const d of waiting) {
        if (--pending[d] !== 0) continue
        if (state[d] === PENDING) {
          readyAt[d] = now
          ready.push(d)
        } else {
          release(d, now)
        }
      }
    }

    const interrupted = (i: number): Outcome =>
      Either.left(Internal.interruptedOutcome(kernels[i]!.name, partials[i]?.value))

    const reporter = (i: number) => (progress: Progress) =>
      Effect.zipRight(
        waitForRoom,
        Effect.sync(() => emit({ _tag: "Progress", index: i, call: calls[i], progress }))
      )

    // -- one call, after its turn and its slot ---------------------------------------------------------------

    /** A call with permission to ask, `onStart`, a span or a record: an Effect that does all that, then runs it. */
    const runCall = (i: number): Effect.Effect<Outcome, never, any> => {
      const call = calls[i]
      const kernel = kernels[i]!
      const parameters = params[i]
      const partial = partials[i] = { value: undefined }
      const handler = Effect.suspend(() => {
        startedAt[i] = clock.unsafeCurrentTimeMillis()
        emit({ _tag: "Started", index: i, call })
        return Internal.runHandler(kernel, call.id, parameters, { timeout, onProgress: reporter(i), partial })
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
          Internal.askPermission(kernel, call.id, parameters),
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
            "tool.resource_keys": keysOf![i].join(",")
          },
          // a stack trace per call costs more than the call itself; the span's name and attributes locate it
          captureStackTrace: false
        }
      )
    }

    /** Watches a call's fiber: when it ends, however it ends, the call finishes and the next ones may start. */
    const observe = <A>(
      i: number,
      fiber: Fiber.RuntimeFiber<A, unknown>,
      outcomeOf: (exit: Exit.Exit<A, unknown>) => Outcome
    ) => {
      const exit = fiber.unsafePoll()
      if (exit !== null) return settle(i, exit, outcomeOf)
      running.set(i, fiber)
      fiber.addObserver((exit) => {
        running.delete(i)
        settle(i, exit, outcomeOf)
        pump()
      })
    }

    const settle = <A>(i: number, exit: Exit.Exit<A, unknown>, outcomeOf: (exit: Exit.Exit<A, unknown>) => Outcome) => {
      if (state[i] === DONE) return
      // stopped from outside (cancel, the consumer leaving, the batch's scope closing)
      finish(i, Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? interrupted(i) : outcomeOf(exit))
    }

    const launch = (i: number): void => {
      state[i] = RUNNING
      // the wait for the call's keys: from the batch's start to the moment its predecessors on them were done
      metricsFor(calls[i].name).wait.unsafeUpdate(readyAt[i] - batchStart, noTags)
      const kernel = kernels[i]!
      if (!bare || kernel.permission !== undefined) {
        return observe(i, runFork(runCall(i)), (exit) =>
          Exit.isSuccess(exit) ? exit.value : Internal.classify(kernel, exit, () =>
            partials[i]?.value))
      }
      // A bare call: the handler is called here, in the pump's stack. One that answers with a value (an
      // `Effect.succeed`, `Effect.fail`) has finished: no fiber, no scheduling. One that must run starts as a fiber
      // with its call context set from the start, and one that never suspends has finished when `runFork` returns.
      // `pump` is a loop, not a recursion, so a long batch of synchronous calls never deepens the stack.
      const call = calls[i]
      startedAt[i] = clock.unsafeCurrentTimeMillis()
      emit({ _tag: "Started", index: i, call })
      const handler = Internal.callHandler(kernel, params[i])
      if (Exit.isExit(handler)) {
        return finish(i, Internal.classify(kernel, handler, noPartial))
      }
      const partial = partials[i] = { value: undefined }
      const lastPartial = () =>
        partial.value
      const context = Internal.callContext(kernel, call.id, partial, reporter(i))
      const inContext = {
        updateRefs: (refs: FiberRefs.FiberRefs, fiberId: FiberId.Runtime) =>
          FiberRefs.updateAs(refs, { fiberId, fiberRef: currentCall, value: context })
      }
      const limit = kernel.timeout ?? timeout
      if (limit === undefined) {
        return observe(i, runFork(handler, inContext), (exit) => Internal.classify(kernel, exit, lastPartial))
      }
      observe(i, runFork(Internal.underTimeout(handler, limit), inContext), (exit) =>
        Exit.isSuccess(exit)
          ? Internal.timedOutcome(kernel, exit.value, limit, lastPartial)
          : Internal.classify(kernel, exit, lastPartial))
    }

    let pumping = false
    /** Starts ready calls while there is a free slot and the consumer keeps up. */
    const pump = (): void => {
      if (closed || pumping) {
        return
      }
      pumping = true
      try {
        while (running.size < slots && readyHead < ready.length && roomForEvents()) {
          const i = ready[readyHead++]
          if (state[i] === PENDING) {
            launch(i)
          }
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
      if (!roomForEvents()) {
        return
      }
      const wake = waitingForRoom.splice(0, waitingForRoom.length)
      for (const f of wake) {
        f()
      }
      pump()
    }

    const cancel = (callId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const toInterrupt: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
        for (let i = 0; i < n; i++) {
          if (calls[i].id !== callId) {
            continue
          }
          if (state[i] === PENDING) {
            finish(i, interrupted(i))
          } else if (state[i] === RUNNING) {
            const fiber = running.get(i)
            if (fiber !== undefined) {
              toInterrupt.push(fiber)
            }
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
      if (outcome !== undefined) {
        finish(i, outcome)
      }
    }
    outcomesOfInvalid.length = 0
    pump()

    // -- the consumer's side: takes everything buffered at once, drops progress that came after its call's
    //    Finished, and ends with the last Finished ----------------------------------------------------------
    const seen = new Uint8Array(n)
    let delivered = 0
    const waitForEvents: Effect.Effect<void> = Effect.async<void>((resume) => {
      if (buffer.length > 0) {
        return resume(Effect.void)
      }
      wakeConsumer = () => resume(Effect.void)
      return Effect.sync(() => {
        wakeConsumer = undefined
      })
    })
    const take = (): Chunk.Chunk<ToolEvent> => {
      const taken = buffer
      buffer = []
      let kept = 0
      for (let k = 0; k < taken.length; k++) {
        const event = taken[k]
        if (event._tag === "Finished") {
          seen[event.index] = 1
          delivered++
        } else if (seen[event.index] === 1) {
          continue
        }
        taken[kept++] = event
      }
      taken.length = kept
      consumed()
      return Chunk.unsafeFromArray(taken)
    }
    const pull: Effect.Effect<Chunk.Chunk<ToolEvent>, Option.Option<never>> = Effect.suspend(() => {
      if (delivered === n) return endOfStream
      if (buffer.length > 0) return Effect.succeed(take())
      return Effect.zipRight(waitForEvents, pull)
    })
    const stream: Stream.Stream<ToolEvent> = n === 0 ? Stream.empty : Stream.repeatEffectChunkOption(pull)
    const collected: Effect.Effect<ReadonlyArray<Outcome>> = Effect.async((resume) => {
      if (finished === n) return resume(Effect.succeed(outcomes))
      wakeCollector = () => resume(Effect.succeed(outcomes))
      return Effect.sync(() => {
        wakeCollector = undefined
      })
    })
    return { events: stream, cancel, outcomes: collected }
  })

export const shouldTerminate = (outcomes: ReadonlyArray<Outcome>): boolean =>
  outcomes.length > 0 && outcomes.every((o) => Either.isRight(o) && o.right.terminate)
