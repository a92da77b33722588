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
 * - before a call runs: permission (when its tool declares it), then `onStart`, then `Started` and the handler;
 * - stopping the consumer, interrupting `run`, or `cancel(callId)` interrupts the affected handlers, and their
 *   finalizers have run before the stream ends, `run` returns, or `cancel` returns;
 * - a defect in one handler is that call's `ToolDefect`; the rest of the batch carries on;
 * - the executor closes nothing a host built and never retries;
 * - a slow consumer back-pressures the batch (events are never buffered without bound, `Finished` never dropped).
 *
 * Each call runs in a span `Executor.call` (attributes `tool.name`, `tool.call_id`, `tool.resource_keys`,
 * `tool.outcome`) and counts in the metrics `agent_tools_calls_total` (by tool and outcome),
 * `agent_tools_call_duration_ms` and `agent_tools_resource_wait_ms`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Internal from "./internal/executor.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * One call as the model wrote it. `arguments` is the raw JSON string (empty means `{}`) or an already-parsed value.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolCall = Internal.ToolCall

/**
 * How a call ended: its result, or the error the model will see as `Error: ...`.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = Internal.Outcome

/**
 * The call's handler is about to run (after its turn, its slot, permission and `onStart`).
 *
 * @since 0.1.0
 * @category events
 */
export type Started = Internal.Started

/**
 * The call reported progress (`Tool.progress`).
 *
 * @since 0.1.0
 * @category events
 */
export type ProgressEvent = Internal.ProgressEvent

/**
 * The call ended; exactly one per call. `durationMillis` is the handler's running time (0 if it never ran).
 *
 * @since 0.1.0
 * @category events
 */
export type Finished = Internal.Finished

/**
 * What a batch reports, one event at a time, `index` being the call's position in the batch.
 *
 * @since 0.1.0
 * @category events
 */
export type ToolEvent = Internal.ToolEvent

/**
 * Batch options.
 *
 * - `maxParallel`: handlers running at once (default {@link DEFAULT_MAX_PARALLEL}).
 * - `sequential`: run the batch one call at a time, in order.
 * - `timeout`: the timeout of calls whose tool sets none.
 * - `onStart`: run the moment a call is handed to its tool (after permission); a failure there completes the call
 *   with that error and the tool never runs. For writing a durable dispatch record before a side effect.
 *
 * @since 0.1.0
 * @category models
 */
export type Options<RS = never> = Internal.Options<RS>

/**
 * A running batch: its events (consume them once) and a way to cancel one call.
 *
 * @since 0.1.0
 * @category models
 */
export type Handle = Internal.Handle

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
export const start = <Tools extends Tool.Any, RS = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options?: Options<RS>
): Effect.Effect<Handle, never, Scope.Scope | RS | Tool.Requirements<Tools>> => Internal.start(toolkit, calls, options)

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
export const stream = <Tools extends Tool.Any, RS = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options?: Options<RS>
): Stream.Stream<ToolEvent, never, RS | Tool.Requirements<Tools>> =>
  Stream.unwrapScoped(Effect.map(Internal.start(toolkit, calls, options), (handle) => handle.events))

/**
 * Runs the batch and gives the outcomes in call order. Interrupting the fiber running it interrupts the handlers
 * and waits for their finalizers.
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
export const run = <Tools extends Tool.Any, RS = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options?: Options<RS>
): Effect.Effect<ReadonlyArray<Outcome>, never, RS | Tool.Requirements<Tools>> => Internal.run(toolkit, calls, options)

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
