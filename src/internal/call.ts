/**
 * Running one call, from the moment it has its turn and its slot to its outcome: the one pipeline every way of
 * running a call goes through (the executor's batches, the long-lived scheduler under the MCP server and the stdio
 * provider, `Tool.execute`). How calls wait for each other is the schedulers' business; what happens to one call is
 * decided here, once.
 *
 * The order, fixed (DESIGN: "permission, then `onStart`, then `Started` and the handler"):
 *
 * 1. permission, when the tool declares it ({@link permission}): a refusal is the outcome and nothing below runs;
 * 2. the middleware (`Middleware`, {@link around}), the first installed outermost: each gets the call and `next`,
 *    stages 3 to 6; what the last of them gives is the outcome;
 * 3. `onStart`, the executor's option ({@link withOnStart}): a failure is the outcome and the handler never runs;
 * 4. `started`, the caller's hook: the executor's `Started` event, the moment the handler's running time starts;
 * 5. the handler ({@link runHandler}): in its call context, under its timeout (the built-in timeout stage), its
 *    failure or defect classified (the built-in recover stage) and its output mapped;
 * 6. the record ({@link recordDetails}): a result's recordable `details` written once more, phase `"end"`.
 *
 * All of it runs inside the span `Executor.call` when a tracer is installed. The metrics are counted by the
 * scheduler when the call is over ({@link finished}), because calls this pipeline never sees (an unknown tool,
 * invalid arguments, a call cancelled before its turn) count too.
 *
 * A call that needs none of 1, 2, 3, the span or 6 is "bare" ({@link isBare}): its handler function can be called
 * at once ({@link callHandler}) and an answer that is already a value needs no fiber; the schedulers take that
 * path themselves, with the same stage 5 pieces.
 *
 * Where a journal hooks in ({@link Journaling}, a journaled batch's only): around stages 2 to 6, outside every
 * middleware, so its dispatch is durable after the decision and before anything else runs, and its outcome is the
 * one the middleware gave; the decisions are the `Requester`'s answers and the records the `Recorder`'s (a journaled
 * batch wraps both, which is also how a decision on record is applied on a resumed run); the outcomes of calls this
 * pipeline never sees (an unknown tool, invalid arguments, a denial) are written by the journaled batch when it
 * ends. The idempotency key `Tool.currentCall` gives comes from the call's {@link Keys}: the journal's, or a random
 * one minted when first read.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import { identity } from "effect/Function"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricKey from "effect/MetricKey"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { randomUUID } from "node:crypto"
import type { Outcome, ToolCall } from "../Executor.js"
import * as Middleware from "../Middleware.js"
import { Requester } from "../Permission.js"
import * as Recorder from "../Recorder.js"
import type * as Tool from "../Tool.js"
import type { ToolError } from "../ToolError.js"
import { PermissionDenied, ToolDefect, ToolTimeout } from "../ToolError.js"
import type { CallContext, Keys, Progress } from "./context.js"
import { currentCall, FreshKeys, nativeTracer } from "./context.js"
import { reasonOf } from "./reason.js"
import type { Kernel } from "./tool.js"
import { classify, defect, interruptedOutcome, makeError, prepare } from "./tool.js"

// ---------------------------------------------------------------------------------------------------------------
// what wraps the calls of one batch or one scheduler
// ---------------------------------------------------------------------------------------------------------------

/** What is around every call run from one place (a batch, a scheduler, one `Tool.execute`); read once. */
export interface Pipeline {
  /** The timeout of calls whose tool sets none. */
  readonly timeout: Duration.Duration | undefined
  /** The executor's `onStart`. */
  readonly onStart: ((call: ToolCall) => Effect.Effect<void, unknown, any>) | undefined
  /** The installed middleware and the batch's own, outermost first; undefined for none. */
  readonly middleware: ReadonlyArray<Middleware.Middleware<any>> | undefined
  /** A tracer other than Effect's built-in one (which exports nowhere) is installed: each call is a span. */
  readonly traced: boolean
  /** A `Recorder` is installed: each result is looked at for details to record. */
  readonly recording: boolean
  /** The clock running times are read from (`TestClock` in tests). */
  readonly clock: Clock.Clock
  /** A journaled batch's: the calls' keys, and what is written around each call. */
  readonly journal: Journaling | undefined
}

/**
 * What a journaled batch adds to each of its calls (see `internal/journal/run.ts`): the idempotency keys, and the
 * writes around stages 2 to 6 of call `index` (its dispatch before, its outcome after). `around` never fails: a
 * write that fails stops the call (interruption) and the batch with it.
 */
export interface Journaling {
  readonly keys: Keys
  readonly around: (
    index: number,
    tool: Tool.Any,
    call: ToolCall,
    body: Effect.Effect<Outcome, never, any>
  ) => Effect.Effect<Outcome, never, any>
}

/**
 * The pipeline for calls running with these services. Spans cost about as much as a no-op call, so they are made
 * only when a tracer of its own is installed. The middleware installed in the context (`Middleware.layer`) is
 * around the batch's own (`options.middleware`).
 */
export const make = (
  context: Context.Context<never>,
  defaultServices: Context.Context<DefaultServices.DefaultServices>,
  options: {
    readonly timeout?: Duration.Duration | undefined
    readonly onStart?: ((call: ToolCall) => Effect.Effect<void, unknown, any>) | undefined
    readonly middleware?: ReadonlyArray<Middleware.Middleware<any>> | undefined
    readonly journal?: Journaling | undefined
  }
): Pipeline => ({
  timeout: options.timeout,
  onStart: options.onStart,
  middleware: stack(Context.get(context, Middleware.Installed), options.middleware),
  traced: Context.get(defaultServices, Tracer.Tracer) !== nativeTracer,
  // the default recorder records nothing: only another one makes results worth looking at
  recording: Context.get(context, Recorder.Recorder) !== Recorder.Recorder.defaultValue(),
  clock: Context.get(defaultServices, Clock.Clock),
  journal: options.journal
})

/** {@link make} for the services of the fiber that runs it. */
export const current = (options: {
  readonly timeout?: Duration.Duration | undefined
}): Effect.Effect<Pipeline> =>
  Effect.withFiberRuntime((fiber) =>
    Effect.succeed(make(fiber.currentContext, fiber.getFiberRef(DefaultServices.currentServices), options))
  )

const stack = (
  installed: ReadonlyArray<Middleware.Middleware<any>>,
  own: ReadonlyArray<Middleware.Middleware<any>> | undefined
): ReadonlyArray<Middleware.Middleware<any>> | undefined => {
  if (own === undefined || own.length === 0) return installed.length === 0 ? undefined : installed
  return installed.length === 0 ? own : [...installed, ...own]
}

/**
 * Whether a call of this tool needs nothing around its handler: nothing to ask before it (permission, `onStart`),
 * nothing wrapping it (middleware), nothing observing it (a span), nothing recording its result. Such a call may
 * start without an Effect around it.
 */
export const isBare = (pipeline: Pipeline, kernel: Kernel): boolean =>
  kernel.permission === undefined && pipeline.onStart === undefined && pipeline.middleware === undefined &&
  !pipeline.traced && !pipeline.recording && pipeline.journal === undefined

// ---------------------------------------------------------------------------------------------------------------
// one call
// ---------------------------------------------------------------------------------------------------------------

/** What the scheduler running a call wants to know of it. */
export interface Hooks {
  /** Where the call's `Tool.progress` reports go. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  /** Where the last `partial` progress output is kept, so an interruption from outside can still report it. */
  readonly partial?: { value: unknown } | undefined
  /** Stage 3: the handler is about to run. */
  readonly started?: (() => void) | undefined
  /** The call's resource keys, for its span. */
  readonly keys?: ReadonlyArray<string> | undefined
  /** Where the call's idempotency key comes from (default: a random one for this call), and its place there. */
  readonly idempotencyKeys?: Keys | undefined
  readonly index?: number | undefined
}

/**
 * Runs a checked call (its tool found, its arguments decoded into `params`) through stages 1 to 6, in a span when
 * traced. Never fails; interruption from outside propagates (the scheduler decides what it answers). `kernel` is
 * `tool`'s, or a copy of it that observes the handler (`Tool.call`); middleware sees `tool`.
 */
export const run = (
  pipeline: Pipeline,
  tool: Tool.Any,
  kernel: Kernel,
  call: ToolCall,
  params: unknown,
  hooks: Hooks
): Effect.Effect<Outcome, never, any> => {
  const index = hooks.index ?? 0
  const options: HandlerOptions = {
    timeout: pipeline.timeout,
    onProgress: hooks.onProgress,
    partial: hooks.partial,
    // one per call, not per run of its handler: a middleware that runs it again gets the same key
    keys: hooks.idempotencyKeys ?? new FreshKeys(),
    index
  }
  let body: Effect.Effect<Outcome, never, any> = runHandler(kernel, call.id, params, options, hooks.started)
  if (pipeline.onStart !== undefined) body = withOnStart(pipeline.onStart, kernel, call, body)
  if (pipeline.recording) body = Effect.tap(body, (outcome) => recordDetails(call.id, kernel.name, outcome))
  if (pipeline.middleware !== undefined) {
    const seen: Middleware.Call = {
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      parameters: params,
      tool
    }
    body = around(pipeline.middleware, seen, kernel, body)
  }
  if (pipeline.journal !== undefined) body = pipeline.journal.around(index, tool, call, body)
  if (kernel.permission !== undefined) {
    const allowed = body
    body = Effect.flatMap(
      permission(kernel, call.id, params),
      (refused) => refused === undefined ? allowed : Effect.succeed(Either.left(refused))
    )
  }
  return pipeline.traced ? inSpan(body, kernel.name, call.id, hooks.keys ?? noKeys) : body
}

const noKeys: ReadonlyArray<string> = []

/**
 * Stage 2: the middleware around `inner`, the first outermost. Each one's `next` is the rest, and never fails:
 * what a middleware fails or dies with is classified where it happens, as `onStart`'s failure is, so the one
 * around it sees an outcome.
 */
export const around = (
  middleware: ReadonlyArray<Middleware.Middleware<any>>,
  call: Middleware.Call,
  kernel: Kernel,
  inner: Effect.Effect<Outcome, never, any>
): Effect.Effect<Outcome, never, any> => {
  let next = inner
  for (let i = middleware.length - 1; i >= 0; i--) {
    const wrap = middleware[i]
    const rest = next
    // `next` needs what the handler needs: the call's fiber has it, as it has what the middleware needs
    const give = () => wrap(call, rest as Effect.Effect<Outcome>)
    next = Effect.flatMap(Effect.exit(Effect.suspend(give)), (exit) => settle(kernel, exit))
  }
  return next
}

/** Stage 3: `onStart` first; its failure is the call's outcome (a `ToolError` as is, anything else a failure). */
const withOnStart = (
  onStart: (call: ToolCall) => Effect.Effect<void, unknown, any>,
  kernel: Kernel,
  call: ToolCall,
  handler: Effect.Effect<Outcome, never, any>
): Effect.Effect<Outcome, never, any> =>
  Effect.flatMap(
    Effect.exit(Effect.suspend(() => onStart(call))),
    (exit) => Exit.isSuccess(exit) ? handler : settle(kernel, exit)
  )

/**
 * How host code around a call ended (`onStart`, a middleware), as the call's outcome: the outcome a middleware
 * gave; a failure as a handler's is (a `ToolError` as itself, anything else a `ToolFailure`); a defect, or a
 * middleware giving something that is not an outcome, as the call's `ToolDefect`. Interruption propagates.
 */
const settle = (kernel: Kernel, exit: Exit.Exit<unknown, unknown>): Effect.Effect<Outcome> => {
  if (Exit.isSuccess(exit)) {
    return Effect.succeed(
      Either.isEither(exit.value)
        ? exit.value as Outcome
        : Either.left(defect(kernel.name, "a middleware gave something that is not an outcome", exit.value))
    )
  }
  if (Cause.isInterruptedOnly(exit.cause)) return Effect.interrupt
  return Effect.succeed(classify(kernel, exit, noPartial))
}

const outcomeTag = (outcome: Outcome): string => (Either.isRight(outcome) ? "Success" : outcome.left._tag)

const inSpan = (
  body: Effect.Effect<Outcome, never, any>,
  tool: string,
  callId: string,
  keys: ReadonlyArray<string>
): Effect.Effect<Outcome, never, any> =>
  Effect.withSpan(
    body.pipe(
      Effect.tap((outcome) => Effect.annotateCurrentSpan("tool.outcome", outcomeTag(outcome))),
      // stopped from outside (cancel, the consumer leaving): the outcome is decided after the span, say it here
      Effect.onInterrupt(() => Effect.annotateCurrentSpan("tool.outcome", "ToolInterrupted"))
    ),
    "Executor.call",
    {
      attributes: { "tool.name": tool, "tool.call_id": callId, "tool.resource_keys": keys.join(",") },
      // a stack trace per call costs more than the call itself; the span's name and attributes locate it
      captureStackTrace: false
    }
  )

/** When a call's handler started, once it has (-1 before): for its running time. */
export interface Timing {
  startedAt: number
}

/** A {@link Timing} to pass as `started`: the handler starts now (the first time, for a middleware that retries). */
export const startTiming = (pipeline: Pipeline, timing: Timing) => (): void => {
  if (timing.startedAt < 0) timing.startedAt = pipeline.clock.unsafeCurrentTimeMillis()
}

/**
 * `self`, a call, counted in the metrics once it is over, however it ends: its outcome, or `ToolInterrupted` when
 * it was interrupted (waiting or running). For the schedulers that hand interruption to their caller; the executor
 * counts in its own `finish`, which every call reaches.
 */
export const counted = (
  pipeline: Pipeline,
  tool: string,
  timing: Timing,
  self: Effect.Effect<Outcome, never, any>
): Effect.Effect<Outcome, never, any> => {
  const count = (outcome: Outcome) =>
    finished(
      tool,
      outcome,
      timing.startedAt < 0 ? undefined : pipeline.clock.unsafeCurrentTimeMillis() - timing.startedAt
    )
  // `Effect.onExit` without its second step (it runs the count as an effect of its own, then matches its exit)
  return Effect.uninterruptibleMask((restore) =>
    Effect.matchCauseEffect(restore(self), {
      onFailure: (cause) =>
        Effect.suspend(() => {
          count(Either.left(interruptedOutcome(tool, undefined)))
          return Effect.failCause(cause)
        }),
      onSuccess: (outcome) =>
        Effect.sync(() => {
          count(outcome)
          return outcome
        })
    })
  )
}

/**
 * One call on its own, as `Tool.execute` runs it: checked, run through the pipeline with the services of the fiber
 * running it, and counted. Never fails; interruption propagates.
 */
export const execute = (
  tool: Tool.Any,
  kernel: Kernel,
  call: ToolCall,
  options: {
    readonly timeout?: Duration.Duration | undefined
    readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  }
): Effect.Effect<Outcome, never, any> =>
  Effect.withFiberRuntime((fiber) => {
    const checked = prepare(kernel, call.arguments)
    if (Either.isLeft(checked)) {
      const refused: Outcome = Either.left(checked.left)
      finished(kernel.name, refused, undefined)
      return Effect.succeed(refused)
    }
    const pipeline = make(fiber.currentContext, fiber.getFiberRef(DefaultServices.currentServices), options)
    if (isBare(pipeline, kernel) && kernel.timeout === undefined && options.timeout === undefined) {
      return countedHandler(pipeline, kernel, call.id, checked.right, options.onProgress)
    }
    const timing: Timing = { startedAt: -1 }
    const body = run(pipeline, tool, kernel, call, checked.right, {
      onProgress: options.onProgress,
      started: startTiming(pipeline, timing)
    })
    return counted(pipeline, kernel.name, timing, body)
  })

/**
 * {@link counted} around {@link runHandler}, for a bare call without a timeout (`Tool.execute`'s usual case), in
 * one interruption mask where there were two: the handler called and its call context swapped in, and once it
 * ends the context set back and the outcome made and counted in one step. The handler runs as interruptible as
 * the caller; an interruption from outside while it runs is counted as `ToolInterrupted` and propagates. 28 Effect
 * operations an MCP client call instead of 38 (row 5b: the client's own work, 28-31 µs a call before, 24.5-26 after).
 */
const countedHandler = (
  pipeline: Pipeline,
  kernel: Kernel,
  callId: string,
  params: unknown,
  onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined
): Effect.Effect<Outcome, never, any> =>
  // the mask's function is called each time the effect runs, as a suspend's is
  Effect.uninterruptibleMask((restore) => {
    const clock = pipeline.clock
    const startedAt = clock.unsafeCurrentTimeMillis()
    const count = (outcome: Outcome): Outcome => {
      finished(kernel.name, outcome, clock.unsafeCurrentTimeMillis() - startedAt)
      return outcome
    }
    const handler = callHandler(kernel, params)
    if (Exit.isExit(handler)) return Effect.succeed(count(classify(kernel, handler, noPartial)))
    const partial = { value: undefined as unknown }
    const lastPartial = () => partial.value
    const context = callContext(kernel, callId, partial, onProgress, new FreshKeys(), 0)
    return swapIn(restore, handler, context, (exit) => count(classify(kernel, exit, lastPartial)))
  })

/**
 * `Tool.call`: a program's call, typed. The parameters are encoded as a model would send them and the call runs
 * as {@link execute} runs it (checked, permission, timeout, output mapping, record, span, metrics); then its
 * outcome is read back the program's way: the handler's own value for a success, and the handler's (or its
 * permission preview's) typed error as itself for a `ToolFailure` made of it. Any other `ToolError` is the error.
 *
 * The handler and the preview are observed through a copy of the kernel made for this call, so nothing is added
 * to the path every other call takes.
 */
export const callTyped = (
  tool: Tool.Any,
  kernel: Kernel,
  parameters: unknown,
  options: {
    readonly id?: string | undefined
    readonly timeout?: Duration.Duration | undefined
    readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  }
): Effect.Effect<unknown, unknown, any> =>
  Effect.suspend(() => {
    let value: Option.Option<unknown> = Option.none()
    let failure: Option.Option<unknown> = Option.none()
    const observe = <A, E, R>(effect: Effect.Effect<A, E, R>, keep: boolean): Effect.Effect<A, E, R> =>
      Effect.onExit(effect, (exit) =>
        Effect.sync(() => {
          if (Exit.isSuccess(exit)) {
            if (keep) value = Option.some(exit.value)
          } else {
            failure = Cause.failureOption(exit.cause)
          }
        }))
    const spec = kernel.permission
    const observed: Kernel = {
      ...kernel,
      handle: (params) => observe(kernel.handle(params), true),
      permission: spec?.preview === undefined ? spec : {
        ...spec,
        preview: (params) => observe(spec.preview!(params), false)
      }
    }
    const call: ToolCall = {
      id: options.id ?? `call_${randomUUID()}`,
      name: kernel.name,
      arguments: kernel.encode(parameters)
    }
    return Effect.flatMap(execute(tool, observed, call, options), (outcome) => {
      if (Either.isRight(outcome)) return Effect.succeed(Option.getOrElse(value, () => outcome.right))
      const error = outcome.left
      if (error._tag === "ToolFailure" && Option.isSome(failure) && failure.value === error.error) {
        return Effect.fail(error.error)
      }
      return Effect.fail(error)
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// stage 1: permission
// ---------------------------------------------------------------------------------------------------------------

/** Asks permission for a call whose tool declares it. `undefined` means go ahead. */
export const permission = (
  kernel: Kernel,
  callId: string,
  params: unknown
): Effect.Effect<ToolError | undefined, never, any> => {
  const spec = kernel.permission
  if (spec === undefined) return Effect.succeed(undefined)
  return Effect.flatMap(Requester, (requester) => {
    // the default requester allows everything: nothing to describe, no preview to compute
    if (requester === Requester.defaultValue()) return Effect.succeed(undefined)
    return Effect.gen(function*() {
      let description: string
      let path: string | undefined
      let confined: string | undefined
      try {
        description = spec.describe === undefined ? `${kernel.name} (${spec.action})` : spec.describe(params)
        path = spec.path === undefined ? undefined : spec.path(params)
        confined = kernel.confined === undefined ? undefined : kernel.confined(params)
      } catch (error) {
        return defect(kernel.name, `describing the call for permission failed: ${reasonOf(error)}`, error)
      }
      let preview: string | undefined
      if (spec.preview !== undefined) {
        const exit = yield* Effect.exit(Effect.suspend(() => spec.preview!(params)))
        if (Exit.isFailure(exit)) {
          const outcome = classify(kernel, exit, noPartial)
          return Either.isLeft(outcome) ? outcome.left : undefined
        }
        preview = exit.value
      }
      const asked = yield* Effect.exit(Effect.suspend(() =>
        requester.request({
          callId,
          tool: kernel.name,
          action: spec.action,
          description,
          path,
          parameters: params,
          annotations: kernel.annotations,
          preview,
          confined
        })
      ))
      if (Exit.isFailure(asked)) {
        // a requester that dies (a prompt that crashed) fails this call, never the caller: `execute` never dies
        const died = Cause.dieOption(asked.cause)
        if (Option.isSome(died)) {
          const reason = `asking for permission failed: ${reasonOf(died.value)}`
          return makeError(ToolDefect, { tool: kernel.name, reason, cause: asked.cause })
        }
        const outcome = classify(kernel, asked, noPartial)
        return Either.isLeft(outcome) ? outcome.left : undefined
      }
      const decision = asked.value
      if (decision._tag === "Allow") return undefined
      return makeError(PermissionDenied, {
        tool: kernel.name,
        description,
        ...(decision.reason === undefined ? {} : { reason: decision.reason })
      })
    })
  })
}

// ---------------------------------------------------------------------------------------------------------------
// stage 5: the handler
// ---------------------------------------------------------------------------------------------------------------

/** The context a handler runs in: what `Tool.progress` and `Tool.currentCall` read. */
export const callContext = (
  kernel: Kernel,
  callId: string,
  partial: { value: unknown },
  onProgress: ((progress: Progress) => Effect.Effect<void>) | undefined,
  keys: Keys,
  index: number
): CallContext => ({
  id: callId,
  name: kernel.name,
  annotations: kernel.annotations,
  report: (progress) => {
    if (progress.partial !== undefined) partial.value = progress.partial
    return onProgress === undefined ? Effect.void : onProgress(progress)
  },
  keys,
  index
})

/**
 * Calls the handler function with a checked call's parameters. What it returns may already be the outcome: an
 * `Effect.succeed`, `Effect.void` or `Effect.fail` value *is* an `Exit`, and needs no fiber to run; a function that
 * throws gives the same defect `Effect.suspend` would. A function cannot read the call context (a `FiberRef`)
 * while it builds its effect, only the effect when it runs, so calling it outside the context changes nothing.
 */
export const callHandler = (kernel: Kernel, params: unknown): Effect.Effect<unknown, unknown, any> => {
  try {
    return kernel.handle(params)
  } catch (error) {
    return Exit.die(error)
  }
}

/** A value no handler can produce: identity tells a timeout apart from any exit. */
const timedOut: Exit.Exit<unknown, unknown> = Exit.die(Symbol.for("effect-agent-tools/timedOut"))

/** A handler's effect under a timeout: it gives the handler's exit, or `timedOut` once the time is up. */
export const underTimeout = (
  handler: Effect.Effect<unknown, unknown, any>,
  timeout: Duration.Duration
): Effect.Effect<Exit.Exit<unknown, unknown>, never, any> =>
  Effect.timeoutTo(Effect.exit(handler), {
    duration: timeout,
    onSuccess: (exit) => exit,
    onTimeout: () => timedOut
  })

/** The outcome of a handler run {@link underTimeout}. */
export const timedOutcome = (
  kernel: Kernel,
  exit: Exit.Exit<unknown, unknown>,
  timeout: Duration.Duration,
  partial: () => unknown
): Outcome =>
  exit === timedOut
    ? Either.left(makeError(ToolTimeout, { tool: kernel.name, timeout }))
    : classify(kernel, exit, partial)

interface HandlerOptions {
  readonly timeout?: Duration.Duration | undefined
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  /** Where the last `partial` output is kept, so an interruption from outside can still report it. */
  readonly partial?: { value: unknown } | undefined
  /** Where the call's idempotency key comes from (default: a random one), and its place there. */
  readonly keys?: Keys | undefined
  readonly index?: number | undefined
}

/**
 * Runs a checked call's handler in its call context, under its timeout (the tool's, else `options.timeout`), and
 * classifies the outcome. Interruption of the handler by itself becomes `ToolInterrupted`; interruption from
 * outside propagates (the executor turns it into the call's `ToolInterrupted` with the last partial output). A
 * handler that answers with a value (see {@link callHandler}) is classified at once, with no context to set and no
 * timeout to race. `started` is told as the handler is about to run (each time, for a middleware that runs it again).
 */
export const runHandler = (
  kernel: Kernel,
  callId: string,
  params: unknown,
  options: HandlerOptions,
  started?: (() => void) | undefined
): Effect.Effect<Outcome, never, any> =>
  Effect.suspend(() => {
    started?.()
    const handler = callHandler(kernel, params)
    if (Exit.isExit(handler)) return Effect.succeed(classify(kernel, handler, noPartial))
    return continueHandler(kernel, callId, handler, options)
  })

/** The rest of {@link runHandler} for a handler whose effect must run: its context, its timeout, its outcome. */
export const continueHandler = (
  kernel: Kernel,
  callId: string,
  handler: Effect.Effect<unknown, unknown, any>,
  options: HandlerOptions
): Effect.Effect<Outcome, never, any> => {
  const partial = options.partial ?? { value: undefined }
  const context = callContext(
    kernel,
    callId,
    partial,
    options.onProgress,
    options.keys ?? new FreshKeys(),
    options.index ?? 0
  )
  const lastPartial = () => partial.value
  const timeout = kernel.timeout ?? options.timeout
  if (timeout === undefined) return inCallContext(handler, context, (exit) => classify(kernel, exit, lastPartial))
  return Effect.map(
    underTimeout(Effect.flatten(inCallContext(handler, context, identity)), timeout),
    (exit) => timedOutcome(kernel, exit, timeout, lastPartial)
  )
}

export const noPartial = (): unknown => undefined

/**
 * `handler` run with `Tool.currentCall` set to `context`, set back however it ends, and its exit as `end` makes it
 * (the call's outcome, made in the step that sets the context back: `end` must not throw): `Effect.locally`
 * without its `acquireUseRelease` (a get and a set as two effects, then the bracket's own steps), and `Effect.exit`
 * without a step of its own; together 5% of an MCP client's call over stdio (row 5). The value is swapped, and set
 * back, with interruption masked (one mask: an `onExit` inside would be a second), so an interruption cannot come
 * between the swap and the handler's end; the handler itself runs as interruptible as the caller.
 */
const inCallContext = <A, E, R, B>(
  handler: Effect.Effect<A, E, R>,
  context: CallContext,
  end: (exit: Exit.Exit<A, E>) => B
): Effect.Effect<B, never, R> => Effect.uninterruptibleMask((restore) => swapIn(restore, handler, context, end))

/** {@link inCallContext} inside a mask of the caller's own, whose `restore` runs the handler. */
const swapIn = <A, E, R, B>(
  restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>,
  handler: Effect.Effect<A, E, R>,
  context: CallContext,
  end: (exit: Exit.Exit<A, E>) => B
): Effect.Effect<B, never, R> =>
  Effect.flatMap(FiberRef.getAndSet(currentCall, context), (before) => {
    const back = (exit: Exit.Exit<A, E>) =>
      FiberRef.modify(currentCall, (): [B, CallContext | undefined] => [end(exit), before])
    return Effect.matchCauseEffect(restore(handler), {
      onFailure: (cause) => back(Exit.failCause(cause)),
      onSuccess: (value) => back(Exit.succeed(value))
    })
  })

// ---------------------------------------------------------------------------------------------------------------
// stage 6: the record
// ---------------------------------------------------------------------------------------------------------------

/**
 * Records a successful result's recordable `details` once more as the call ends (phase `"end"`). The side effect
 * has happened: a record that cannot be written is logged, and the call stays a success the model will not retry.
 */
export const recordDetails = (callId: string, tool: string, outcome: Outcome): Effect.Effect<void> => {
  if (Either.isLeft(outcome) || !Recorder.isRecordable(outcome.right.details)) return Effect.void
  const record = outcome.right.details
  return Effect.flatMap(Recorder.Recorder, (recorder) =>
    recorder.write({ callId, tool, phase: "end", record }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`recording the result of call ${callId} failed: ${error.message}`))
    ))
}

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

/**
 * Counts a call that is over, however it ended: `agent_tools_calls_total{tool, outcome}`, and, for a call whose
 * handler ran (`durationMillis` not undefined), `agent_tools_call_duration_ms{tool}`.
 */
export const finished = (tool: string, outcome: Outcome, durationMillis: number | undefined): void => {
  if (Either.isLeft(outcome) && outcome.left._tag === "ToolNotFound") tool = UNKNOWN_TOOL
  const metrics = metricsFor(tool)
  const tag = outcomeTag(outcome)
  let counter = metrics.calls.get(tag)
  if (counter === undefined) {
    counter = Metric.fromMetricKey(MetricKey.tagged(MetricKey.tagged(callsTotal, "tool", tool), "outcome", tag))
    metrics.calls.set(tag, counter)
  }
  counter.unsafeUpdate(1, noTags)
  if (durationMillis !== undefined) metrics.duration.unsafeUpdate(durationMillis, noTags)
}

/** `agent_tools_resource_wait_ms{tool}`: how long a call that is starting waited for its resource keys. */
export const waited = (tool: string, millis: number): void => {
  metricsFor(tool).wait.unsafeUpdate(millis, noTags)
}
