/**
 * Runs a batch of the model's tool calls: a `Stream` of events over fibers, with a bound on parallelism and a
 * lock per resource key.
 *
 * The rules, each pinned by a test:
 * - exactly one `Finished` per call, also for a call that never ran (unknown tool, bad arguments, denied,
 *   cancelled before its turn); `Started` only for calls whose handler runs; nothing for a call after its
 *   `Finished` (late progress is dropped);
 * - events arrive one at a time, completions in completion order; `run` returns outcomes in call order;
 * - arguments are checked before a call waits for anything;
 * - calls whose resource keys overlap run one after another in the model's order; the rest run alongside; a call
 *   naming several keys waits for all of them, without deadlock;
 * - at most `maxParallel` handlers run at once, and a call waiting for its keys does not hold a slot;
 * - a `sequential` tool anywhere in the batch, or `options.sequential`, runs the whole batch one call at a time;
 * - before a call runs: permission (when its tool declares it), then the middleware, then `onStart`, then `Started`
 *   and the handler;
 * - stopping the consumer, interrupting `run`, or `cancel(callId)` interrupts the affected handlers, and their
 *   finalizers have run before the stream ends, `run` returns, or `cancel` returns;
 * - a defect in one handler is that call's `ToolDefect`; the rest of the batch carries on;
 * - the executor closes nothing a host built and never retries;
 * - a slow consumer back-pressures the batch (events are never buffered without bound, `Finished` never dropped).
 *
 * {@link plan} gives the chains a batch will run in without running it: the executor's own scan, for a harness that
 * dispatches calls itself.
 *
 * A batch run with a `runId` ({@link run}, {@link JournaledOptions}) is journaled by the `Journal` service, each
 * call's dispatch durable before it runs, and {@link resume} finishes one whose process died.
 *
 * Each call runs in a span `Executor.call` (attributes `tool.name`, `tool.call_id`, `tool.resource_keys`,
 * `tool.outcome`) and counts in the metrics `agent_tools_calls_total` (by tool and outcome),
 * `agent_tools_call_duration_ms` and `agent_tools_resource_wait_ms`.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Progress } from "./internal/context.js"
import * as Internal from "./internal/executor.js"
import * as Durable from "./internal/journal/run.js"
import { requireNames } from "./internal/toolkit.js"
import type * as Journal from "./Journal.js"
import type * as Middleware from "./Middleware.js"
import type * as Tool from "./Tool.js"
import type { ToolError, ToolFailure } from "./ToolError.js"
import type * as Toolkit from "./Toolkit.js"
import type { ToolResult } from "./ToolResult.js"

/**
 * One call as the model wrote it. `arguments` is the raw JSON string (empty means `{}`) or an already-parsed value.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

/**
 * How a call ended: its result, or the error the model will see as `Error: ...`.
 *
 * Typed by the tools it can be the outcome of: `Outcome<T>` for a call of the tool (or union of tools) `T` has
 * results whose `structured` is `Tool.Structured<T>` and `ToolFailure`s whose `error` is `Tool.Failure<T>`, or the
 * error of the batch's `onStart` (`E`). `Outcome` alone is an outcome of any tool. `Executor.run` gives the outcomes
 * of its toolkit's tools; {@link isOutcomeOf} narrows one to the tool its call named.
 *
 * @example
 * ```ts
 * import { Effect, Either, Schema } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Measure = Tool.make("measure", {
 *   description: "Measure a text",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed({ length: text.length })
 * })
 *
 * const program = Effect.map(
 *   Executor.run(Toolkit.make(Measure), [{ id: "1", name: "measure", arguments: { text: "four" } }]),
 *   // Outcome<typeof Measure>: `structured` is { length: number }
 *   ([outcome]) => Either.isRight(outcome) ? outcome.right.structured.length : -1
 * )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome<T extends Tool.Any = Tool.Any, E = never> = Either.Either<
  ToolResult<Tool.Structured<T>>,
  Exclude<ToolError, ToolFailure> | ToolFailure<Tool.Failure<T> | E>
>

/**
 * The call's handler is about to run (after its turn, its slot, permission and `onStart`).
 *
 * @since 0.1.0
 * @category events
 */
export interface Started {
  readonly _tag: "Started"
  readonly index: number
  readonly call: ToolCall
}

/**
 * The call reported progress (`Tool.progress`).
 *
 * @since 0.1.0
 * @category events
 */
export interface ProgressEvent {
  readonly _tag: "Progress"
  readonly index: number
  readonly call: ToolCall
  readonly progress: Progress
}

/**
 * The call ended; exactly one per call. `durationMillis` is the handler's running time (0 if it never ran).
 *
 * @since 0.1.0
 * @category events
 */
export interface Finished<T extends Tool.Any = Tool.Any, E = never> {
  readonly _tag: "Finished"
  readonly index: number
  readonly call: ToolCall
  readonly outcome: Outcome<T, E>
  readonly durationMillis: number
}

/**
 * What a batch reports, one event at a time, `index` being the call's position in the batch. Typed, like
 * {@link Outcome}, by the tools of the batch's toolkit and the error of its `onStart`.
 *
 * @since 0.1.0
 * @category events
 */
export type ToolEvent<T extends Tool.Any = Tool.Any, E = never> = Started | ProgressEvent | Finished<T, E>

/**
 * Batch options.
 *
 * - `maxParallel`: handlers running at once (default {@link DEFAULT_MAX_PARALLEL}).
 * - `sequential`: run the batch one call at a time, in order.
 * - `timeout`: the timeout of calls whose tool sets none.
 * - `onStart`: run the moment a call is handed to its tool (after permission and middleware); a failure there
 *   completes the call with that error and the tool never runs. For writing a durable dispatch record before a
 *   side effect.
 * - `middleware`: around each call of this batch (after permission), the first outermost, inside the middleware
 *   installed in the context (`Middleware.layer`). See `Middleware`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<RS = never, ES = unknown> {
  readonly maxParallel?: number | undefined
  readonly sequential?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly onStart?: ((call: ToolCall) => Effect.Effect<void, ES, RS>) | undefined
  readonly middleware?: ReadonlyArray<Middleware.Middleware<RS>> | undefined
}

/**
 * The options of a journaled batch (see {@link run}): the executor's, and the id of the run its journal keeps the
 * batch under.
 *
 * @since 0.1.0
 * @category models
 */
export interface JournaledOptions<RS = never, ES = unknown> extends Options<RS, ES> {
  readonly runId: string
}

/**
 * A running batch: its events (consume them once) and a way to cancel one call.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handle<T extends Tool.Any = Tool.Any, E = never> {
  readonly events: Stream.Stream<ToolEvent<T, E>>
  readonly cancel: (callId: string) => Effect.Effect<void>
}

/**
 * The chains a batch runs in, as {@link plan} gives them: one entry per call, in batch order, and whether the batch
 * runs one call at a time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly calls: ReadonlyArray<PlannedCall>
  /** A `sequential` tool is in the batch, or `options.sequential` was given: the batch is one chain in order. */
  readonly sequential: boolean
}

/**
 * One call of a {@link Plan}.
 *
 * - `index`: the call's position in the batch.
 * - `waitsFor`: the earlier calls it waits for, by index, ascending: per resource key, the latest earlier call
 *   naming that key (in a sequential batch, the previous call that runs). A call starts once each of these has
 *   finished; waiting on them transitively, it runs after every earlier call it shares a key with.
 * - `keys`: its resource keys (empty for none, and for a call that never runs).
 * - `refused`: the error it finishes with without running (an unknown tool, invalid arguments, a resource
 *   function that threw); such a call waits for nothing and nothing waits for it. Undefined for a call that runs
 *   (it may still be denied permission, or cancelled, once the batch runs).
 *
 * @since 0.1.0
 * @category models
 */
export interface PlannedCall {
  readonly index: number
  readonly call: ToolCall
  readonly waitsFor: ReadonlyArray<number>
  readonly keys: ReadonlyArray<string>
  readonly refused: ToolError | undefined
}

/**
 * The default bound on handlers running at once.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_PARALLEL: number = Internal.DEFAULT_MAX_PARALLEL

/**
 * Starts a batch in the current scope and gives its events and `cancel(callId)`. Closing the scope interrupts
 * whatever still runs and waits for its finalizers. `cancel` interrupts the call (running or waiting for its
 * turn), which then finishes with `ToolInterrupted`; it returns once the call's finalizers have run.
 *
 * @example
 * ```ts
 * import { Effect, Schema, Stream } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Sleep = Tool.make("sleep", {
 *   description: "Sleep for a while",
 *   parameters: { ms: Schema.Int },
 *   handler: ({ ms }) => Effect.sleep(ms)
 * })
 * const kit = Toolkit.make(Sleep)
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const batch = yield* Executor.start(kit, [
 *     { id: "a", name: "sleep", arguments: "{\"ms\": 10}" },
 *     { id: "b", name: "sleep", arguments: "{\"ms\": 60000}" }
 *   ])
 *   yield* Effect.fork(Effect.delay(batch.cancel("b"), "50 millis"))
 *   return yield* Stream.runCollect(batch.events)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const start = <Tools extends Tool.Any, RS = never, ES = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options?: Options<RS, ES>
): Effect.Effect<Handle<Tools, Exclude<ES, ToolError>>, never, Scope.Scope | RS | Tool.Requirements<Tools>> =>
  Internal.start(toolkit, calls, options) as Effect.Effect<
    Handle<Tools, Exclude<ES, ToolError>>,
    never,
    Scope.Scope | RS | Tool.Requirements<Tools>
  >

/**
 * The batch as a stream of events. The stream ends after the last `Finished`; stopping early (`Stream.take`,
 * interruption) interrupts the calls still running and ends once their finalizers have run.
 *
 * @example
 * ```ts
 * import { Effect, Schema, Stream } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * const program = Executor.stream(Toolkit.make(Upper), [
 *   { id: "1", name: "upper", arguments: "{\"text\":\"a\"}" },
 *   { id: "2", name: "lower", arguments: "{}" }
 * ]).pipe(
 *   Stream.runForEach((event) => Effect.log(event._tag, event.index))
 * )
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const stream = <Tools extends Tool.Any, RS = never, ES = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options?: Options<RS, ES>
): Stream.Stream<ToolEvent<Tools, Exclude<ES, ToolError>>, never, RS | Tool.Requirements<Tools>> =>
  Stream.unwrapScoped(Effect.map(start(toolkit, calls, options), (handle) => handle.events))

/**
 * Runs the batch and gives the outcomes in call order. Interrupting the fiber running it interrupts the handlers
 * and waits for their finalizers.
 *
 * With a `runId` ({@link JournaledOptions}) the batch is journaled by the `Journal` service, as a run of its own:
 * the calls are recorded before any runs, each call's dispatch (with its idempotency key) is durable before its
 * handler runs, each permission decision, record and outcome as it happens (see the durable runs guide). The run is
 * leased for as long as the batch runs. If the run exists already it is resumed ({@link resume}): the calls given
 * must be the ones it was begun with. A journal write that fails stops the batch (its running calls interrupted,
 * nothing more dispatched) and fails it with the `JournalError`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Executor, Tool, ToolError, ToolResult, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * const program = Effect.gen(function*() {
 *   const outcomes = yield* Executor.run(Toolkit.make(Upper), [
 *     { id: "1", name: "upper", arguments: "{\"text\":\"a\"}" },
 *     { id: "2", name: "upper", arguments: "{}" }
 *   ])
 *   // what goes back to the model, in call order
 *   return outcomes.map((o) => o._tag === "Right" ? ToolResult.toText(o.right) : ToolError.toModelText(o.left))
 *   // ["A", "Error: invalid arguments: text: missing required property, expected a string"]
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run: {
  <Tools extends Tool.Any, RS = never, ES = never>(
    toolkit: Toolkit.Toolkit<Tools>,
    calls: ReadonlyArray<ToolCall>,
    options: JournaledOptions<RS, ES>
  ): Effect.Effect<
    ReadonlyArray<Outcome<Tools, Exclude<ES, ToolError>>>,
    Journal.JournalError,
    RS | Tool.Requirements<Tools> | Journal.Journal
  >
  <Tools extends Tool.Any, RS = never, ES = never>(
    toolkit: Toolkit.Toolkit<Tools>,
    calls: ReadonlyArray<ToolCall>,
    options?: Options<RS, ES>
  ): Effect.Effect<ReadonlyArray<Outcome<Tools, Exclude<ES, ToolError>>>, never, RS | Tool.Requirements<Tools>>
} = (
  toolkit: Toolkit.Toolkit<Tool.Any>,
  calls: ReadonlyArray<ToolCall>,
  options?: Options<any, any> | JournaledOptions<any, any>
): Effect.Effect<ReadonlyArray<Outcome>, never, any> =>
  options !== undefined && "runId" in options && typeof options.runId === "string"
    ? Durable.runBatch(toolkit, calls, options.runId, options) as Effect.Effect<ReadonlyArray<Outcome>, never, any>
    : Internal.run(toolkit, calls, options)

/**
 * Resumes a journaled batch (one run with a `runId` by {@link run}) whose process stopped before it ended, from the
 * `Journal`: the calls it recorded run as the journal says (a finished call keeps its outcome, a call that was
 * running runs again if its tool's `replay` allows it and ends `ToolOutcomeUnknown` if not, a call that never
 * started runs; permission decisions on record are applied), and the outcomes of all its calls are given in call
 * order. Fails `UnknownRun` for a run never begun, `Conflict` while another host holds its lease.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Executor, Journal, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   replay: "safe",
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * // in a new process, after the one that ran batch-7 died
 * const outcomes = Executor.resume(Toolkit.make(Upper), "batch-7").pipe(
 *   Effect.provide(Journal.layerSqlite({ filename: "agent-journal.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const resume = <Tools extends Tool.Any, RS = never, ES = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  runId: string,
  options?: Options<RS, ES>
): Effect.Effect<
  ReadonlyArray<Outcome<Tools, Exclude<ES, ToolError>>>,
  Journal.JournalError,
  RS | Tool.Requirements<Tools> | Journal.Journal
> => Durable.runBatch(toolkit, undefined, runId, options) as Effect.Effect<any, any, any>

/**
 * The chains a batch will run in, without running it: for each call, the earlier calls it waits for. It is the
 * executor's own rule (the executor plans every batch with it): calls whose resource keys overlap run one after
 * another in model order, a call with several keys waits for each, a sequential batch is one chain, and a call that
 * never runs (unknown tool, invalid arguments) waits for nothing. Arguments are parsed and decoded, and resource
 * functions called, as the executor would; nothing runs.
 *
 * For a harness that dispatches calls itself: settle every call in `waitsFor` before dispatching a call, and the
 * calls keep the order the executor would give them.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Write = Tool.make("write_file", {
 *   description: "Write a file",
 *   parameters: { path: Schema.String, text: Schema.String },
 *   resource: ({ path }) => "file:" + path,
 *   handler: () => Effect.void
 * })
 *
 * const plan = Executor.plan(Toolkit.make(Write), [
 *   { id: "1", name: "write_file", arguments: { path: "a", text: "x" } },
 *   { id: "2", name: "write_file", arguments: { path: "b", text: "y" } },
 *   { id: "3", name: "write_file", arguments: { path: "a", text: "z" } },
 *   { id: "4", name: "read_file", arguments: { path: "a" } }
 * ])
 * console.log(plan.calls.map((call) => call.waitsFor)) // [[], [], [0], []]
 * console.log(plan.calls[3].refused?._tag) // "ToolNotFound"
 * ```
 *
 * @since 0.1.0
 * @category planning
 */
export const plan = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options?: { readonly sequential?: boolean | undefined }
): Plan => Internal.plan(toolkit, calls, options?.sequential === true)

/**
 * Whether the loop should stop after this batch instead of calling the model again: true only when every outcome
 * is a success whose result sets `terminate` (some but not all is a partial batch, for the host's policy).
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Executor, ToolResult } from "effect-agent-tools"
 *
 * const done = ToolResult.withTerminate(ToolResult.text("answered"))
 * console.log(Executor.shouldTerminate([Either.right(done)])) // true
 * console.log(Executor.shouldTerminate([Either.right(done), Either.right(ToolResult.text("x"))])) // false
 * ```
 *
 * @since 0.1.0
 * @category utilities
 */
export const shouldTerminate: (outcomes: ReadonlyArray<Outcome>) => boolean = Internal.shouldTerminate

/**
 * A guard that narrows the outcome of a call to the types of the tool the call named: for `call` naming `name`,
 * `outcome` is an `Outcome` of that tool, so its result's `structured` is that tool's `Tool.Structured` and its
 * `ToolFailure`'s `error` that tool's `Tool.Failure` (or the batch's `onStart` error). For the outcomes of a batch
 * of `toolkit` (`run`'s, paired with their calls, or a `Finished` event's `call` and `outcome`); the check is the
 * call's name, the one thing that ties an outcome to a tool. Throws for a name the toolkit does not have (one that
 * came through `any`: the types refuse any other), since such a guard could never hold.
 *
 * @example
 * ```ts
 * import { Effect, Either, Schema } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Stat = Tool.make("stat", {
 *   description: "Size of a file",
 *   parameters: { path: Schema.String },
 *   success: Schema.Struct({ size: Schema.Int }),
 *   handler: () => Effect.succeed({ size: 12 })
 * })
 * const Echo = Tool.make("echo", {
 *   description: "Echo a text",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const kit = Toolkit.make(Stat, Echo)
 * const isStat = Executor.isOutcomeOf(kit, "stat")
 *
 * const calls = [
 *   { id: "1", name: "echo", arguments: { text: "hi" } },
 *   { id: "2", name: "stat", arguments: { path: "a.txt" } }
 * ]
 * const sizes = Effect.map(Executor.run(kit, calls), (outcomes) =>
 *   outcomes.flatMap((outcome, i) =>
 *     isStat(calls[i], outcome) && Either.isRight(outcome) ? [outcome.right.structured.size] : []
 *   )) // [12]
 * ```
 *
 * @since 0.1.0
 * @category utilities
 */
export const isOutcomeOf = <Tools extends Tool.Any, const N extends Tool.Name<Tools>>(
  toolkit: Toolkit.Toolkit<Tools>,
  name: N
): <E = never>(call: ToolCall, outcome: Outcome<Tools, E>) => outcome is Outcome<Toolkit.ToolNamed<Tools, N>, E> => {
  // a name from `any` that is not the toolkit's is found here, not as a guard that never holds
  requireNames(toolkit, [name])
  return <E>(call: ToolCall, _outcome: Outcome<Tools, E>): _outcome is Outcome<Toolkit.ToolNamed<Tools, N>, E> =>
    call.name === name
}
