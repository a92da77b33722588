/**
 * The agent loop: ask the model, run its calls through the executor, append the outcomes, and ask again, until
 * the model answers without calls, a stop condition holds, or the run is interrupted.
 *
 * ```text
 * Agent.run({ toolkit, prompt, model?, maxSteps?, stopWhen?, ... })    Effect<Result, AgentError, R>
 * Agent.stream({ ... })                                                Stream<Event, AgentError, R>
 * ```
 *
 * A run is a sequence of steps. A step is one model request and what came of it: the model's {@link Response}
 * (its text, its calls, its usage, the assistant message it adds to the transcript) and the outcome of each of
 * its calls, run as one batch by the executor (per-resource order and locks, `maxParallel`, timeouts, permission,
 * records). Invalid arguments, unknown tools and failures are outcomes the model reads as its `Error: ...` line
 * and corrects; the loop never fails for them. The run stops when a step has no calls (`NoCalls`), after
 * `maxSteps` steps (`MaxSteps`), when `stopWhen` holds over the steps so far (`StopWhen`), or when every outcome
 * of a batch asks to stop (`Terminated`, see `Executor.shouldTerminate`). A model that fails, or does not answer
 * within `modelTimeout`, fails the run with an {@link AgentError} carrying the steps so far.
 *
 * The transcript is @effect/ai's `Prompt` in its encoded form: plain `{ role, content }` messages
 * ({@link Message}), so `Prompt.make(transcript)` takes it unchanged, while this module itself never loads
 * @effect/ai. It is always the prompt followed, per step, by the model's assistant message and the tool message
 * of that step's outcomes (what `EffectAi.results` gives, as data), so a run's transcript is a function of its
 * prompt and its steps.
 *
 * A run with a `runId` and a `Journal` provided is durable: journaled as it goes, and resumed from the journal by
 * the same call after its process died (the steps it has are not asked for again; the interrupted step's calls are
 * finished by their tools' `replay`), see the `runId` option and the durable runs guide.
 *
 * The model is a plain function from the transcript to the next assistant {@link Turn} ({@link Model}), so the
 * loop is tied to no client; without one, {@link languageModel}: the @effect/ai `LanguageModel` service from the
 * environment (loaded only then: @effect/ai is an optional peer dependency).
 *
 * @since 0.1.0
 */
import type * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Duration from "effect/Duration"
import * as DurationValue from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type * as Executor from "./Executor.js"
import * as Internal from "./internal/agent.js"
import { reasonOf } from "./internal/reason.js"
import type * as Permission from "./Permission.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

// ---------------------------------------------------------------------------------------------------------------
// the transcript
// ---------------------------------------------------------------------------------------------------------------

/**
 * Per-provider options on a message or a part, as @effect/ai carries them (`{ openai: { ... } }`).
 *
 * @since 0.1.0
 * @category transcript
 */
export type ProviderOptions = { readonly [provider: string]: { readonly [key: string]: unknown } | undefined }

/**
 * Text, in any message.
 *
 * @since 0.1.0
 * @category transcript
 */
export interface TextPart {
  readonly type: "text"
  readonly text: string
  readonly options?: ProviderOptions | undefined
}

/**
 * The model's reasoning, in an assistant message.
 *
 * @since 0.1.0
 * @category transcript
 */
export interface ReasoningPart {
  readonly type: "reasoning"
  readonly text: string
  readonly options?: ProviderOptions | undefined
}

/**
 * A file: an image, a PDF. `data` is the bytes, a URL, or a provider's file id.
 *
 * @since 0.1.0
 * @category transcript
 */
export interface FilePart {
  readonly type: "file"
  readonly mediaType: string
  readonly fileName?: string | undefined
  readonly data: string | Uint8Array | URL
  readonly options?: ProviderOptions | undefined
}

/**
 * A call the model made, in its assistant message. `params` are the arguments as the model sent them.
 *
 * @since 0.1.0
 * @category transcript
 */
export interface ToolCallPart {
  readonly type: "tool-call"
  readonly id: string
  readonly name: string
  readonly params: unknown
  readonly providerExecuted?: boolean | undefined
  readonly options?: ProviderOptions | undefined
}

/**
 * A call's outcome as the model reads it: the result's text (or its `structured` value when the text is exactly
 * its JSON), or, with `isFailure`, the error's one `Error: ...` line.
 *
 * @since 0.1.0
 * @category transcript
 */
export interface ToolResultPart {
  readonly type: "tool-result"
  readonly id: string
  readonly name: string
  readonly isFailure: boolean
  readonly result: unknown
  readonly providerExecuted: boolean
  readonly options?: ProviderOptions | undefined
}

/**
 * @since 0.1.0
 * @category transcript
 */
export interface SystemMessage {
  readonly role: "system"
  readonly content: string
  readonly options?: ProviderOptions | undefined
}

/**
 * @since 0.1.0
 * @category transcript
 */
export interface UserMessage {
  readonly role: "user"
  readonly content: string | ReadonlyArray<TextPart | FilePart>
  readonly options?: ProviderOptions | undefined
}

/**
 * @since 0.1.0
 * @category transcript
 */
export interface AssistantMessage {
  readonly role: "assistant"
  readonly content: string | ReadonlyArray<TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart>
  readonly options?: ProviderOptions | undefined
}

/**
 * @since 0.1.0
 * @category transcript
 */
export interface ToolMessage {
  readonly role: "tool"
  readonly content: ReadonlyArray<ToolResultPart>
  readonly options?: ProviderOptions | undefined
}

/**
 * One message of the transcript: @effect/ai's `Prompt.MessageEncoded`, the same fields, so a transcript is what
 * `Prompt.make` takes, and a `Prompt`'s own messages are messages here.
 *
 * @example
 * ```ts
 * import type { Agent } from "effect-agent-tools"
 *
 * const transcript: ReadonlyArray<Agent.Message> = [
 *   { role: "system", content: "You are terse." },
 *   { role: "user", content: "What is in README.md?" }
 * ]
 * ```
 *
 * @since 0.1.0
 * @category transcript
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage

/**
 * What a run starts from, as @effect/ai's `Prompt.make` takes it: a string (one user message), messages, or a
 * `Prompt` (anything with `content` messages).
 *
 * @since 0.1.0
 * @category transcript
 */
export type PromptInput = string | ReadonlyArray<Message> | { readonly content: ReadonlyArray<Message> }

// ---------------------------------------------------------------------------------------------------------------
// the model
// ---------------------------------------------------------------------------------------------------------------

/**
 * Tokens a model reports for a request; a field the model does not report is absent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Usage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

/**
 * What a {@link Model} answers for one step: its text, its calls (in the model's order; none ends the run), the
 * tokens it used, and optionally the assistant message to append (by default one is made of the text and the
 * calls) and `raw`, the provider's own answer, kept on the step for a model that builds its next request from
 * the steps.
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  readonly text?: string | undefined
  readonly calls?: ReadonlyArray<Executor.ToolCall> | undefined
  readonly usage?: Usage | undefined
  readonly message?: AssistantMessage | undefined
  readonly raw?: unknown
}

/**
 * What a model is told besides the transcript: the step's index (from 0), the steps so far, the toolkit (for its
 * tool definitions: `OpenAiChat.tools(context.toolkit)`), and `textDelta`, which reports the answer's text as it
 * streams (an event of `Agent.stream`; `streaming` says whether anyone receives them, false under `Agent.run`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelContext {
  readonly step: number
  readonly steps: ReadonlyArray<Step>
  readonly toolkit: Toolkit.Toolkit<Tool.Any>
  readonly streaming: boolean
  readonly textDelta: (delta: string) => Effect.Effect<void>
}

/**
 * A model: from the transcript to the next assistant turn. Its failure fails the run with an {@link AgentError}
 * (`ModelFailed`); interrupting the run interrupts it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Agent } from "effect-agent-tools"
 *
 * // calls `now` once, then answers with the tool's result
 * const model: Agent.Model = (transcript) => {
 *   const last = transcript[transcript.length - 1]
 *   return last.role === "tool"
 *     ? Effect.succeed({ text: `It is ${String(last.content[0].result)}.` })
 *     : Effect.succeed({ calls: [{ id: "call_1", name: "now", arguments: "{}" }] })
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Model<R = never> = (
  transcript: ReadonlyArray<Message>,
  context: ModelContext
) => Effect.Effect<Turn, unknown, R>

/**
 * Options of {@link languageModel}. `stream`: ask for a streamed answer (`LanguageModel.streamText`, whose text
 * becomes `TextDelta` events) or a whole one (`generateText`); by default streamed when the run's events are
 * consumed (`Agent.stream`), whole under `Agent.run`.
 *
 * @since 0.1.0
 * @category models
 */
export interface LanguageModelOptions {
  readonly stream?: boolean | undefined
}

/**
 * The @effect/ai `LanguageModel` service from the environment as a {@link Model}, the default when a run is given
 * none. Each step asks with the transcript as a `Prompt`, the toolkit as `EffectAi.toolkit` and
 * `disableToolCallResolution: true`, so the calls come back to the loop and run as one batch. The assistant
 * message is the response's (`Prompt.fromResponseParts`). An @effect/ai error (`AiError`) fails the run as
 * `ModelFailed`; note that @effect/ai fails a response that calls a tool the toolkit lacks, or (in the provider
 * packages) whose arguments are not JSON, where the loop would have let the model correct itself. @effect/ai
 * (and `effect-agent-tools/EffectAi`) is loaded when the model is first asked, not before.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 *
 * // needs a LanguageModel layer, e.g. OpenAiLanguageModel.layer({ model: "gpt-4.1" })
 * const program = Agent.run({
 *   toolkit: Toolkit.make(Now),
 *   prompt: "What time is it?",
 *   model: Agent.languageModel({ stream: true })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const languageModel: (options?: LanguageModelOptions) => Model<LanguageModel.LanguageModel> =
  Internal.languageModel

// ---------------------------------------------------------------------------------------------------------------
// steps and results
// ---------------------------------------------------------------------------------------------------------------

/**
 * The model's answer for one step, as the loop keeps it: `text` (empty when none), `calls` in the model's order,
 * `usage` when the model reported it, the assistant `message` appended to the transcript, and `raw` when the
 * model gave its provider's own answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly text: string
  readonly calls: ReadonlyArray<Executor.ToolCall>
  readonly usage: Usage | undefined
  readonly message: AssistantMessage
  readonly raw: unknown
}

/**
 * One step of a run: its index (from 0), the model's response, and the outcome of each of its calls in call
 * order (empty for the step without calls that ends a run).
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly index: number
  readonly response: Response
  readonly outcomes: ReadonlyArray<Executor.Outcome>
}

/**
 * Why a run stopped:
 * - `NoCalls`: the model answered without calls;
 * - `MaxSteps`: `maxSteps` steps ran (the last one's outcomes are in the transcript, the model has not seen them);
 * - `StopWhen`: `stopWhen` held after a step;
 * - `Terminated`: every outcome of the last batch asked to stop (`Executor.shouldTerminate`).
 *
 * @since 0.1.0
 * @category models
 */
export type StopReason = "NoCalls" | "MaxSteps" | "StopWhen" | "Terminated"

/**
 * A finished run: why it stopped, the last response's text, the transcript (the prompt, then each step's
 * assistant message and outcomes: a follow-up run can start from it), the steps, the tokens used over all steps
 * (a field summed over the steps that reported it), and the `runId` it was given.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly runId: string | undefined
  readonly reason: StopReason
  readonly text: string
  readonly transcript: ReadonlyArray<Message>
  readonly steps: ReadonlyArray<Step>
  readonly usage: Usage
}

// ---------------------------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------------------------

/**
 * A step begins: the model is about to be asked.
 *
 * @since 0.1.0
 * @category events
 */
export interface StepStarted {
  readonly _tag: "StepStarted"
  readonly step: number
}

/**
 * A piece of the model's text, as it streams.
 *
 * @since 0.1.0
 * @category events
 */
export interface TextDelta {
  readonly _tag: "TextDelta"
  readonly step: number
  readonly delta: string
}

/**
 * The model answered; its calls are about to run.
 *
 * @since 0.1.0
 * @category events
 */
export interface ModelResponded {
  readonly _tag: "ModelResponded"
  readonly step: number
  readonly response: Response
}

/**
 * A call asks permission and waits for the answer (only when a `Permission.Requester` is installed: with none,
 * nothing is asked). `index` is the call's place in the step's batch.
 *
 * @since 0.1.0
 * @category events
 */
export interface PermissionRequested {
  readonly _tag: "PermissionRequested"
  readonly step: number
  readonly index: number
  readonly request: Permission.PermissionRequest
}

/**
 * The requester answered a {@link PermissionRequested}.
 *
 * @since 0.1.0
 * @category events
 */
export interface PermissionAnswered {
  readonly _tag: "PermissionAnswered"
  readonly step: number
  readonly index: number
  readonly request: Permission.PermissionRequest
  readonly decision: Permission.Decision
}

/**
 * The executor's `Started`, with its step.
 *
 * @since 0.1.0
 * @category events
 */
export interface Started extends Executor.Started {
  readonly step: number
}

/**
 * The executor's `Progress`, with its step.
 *
 * @since 0.1.0
 * @category events
 */
export interface Progress extends Executor.ProgressEvent {
  readonly step: number
}

/**
 * The executor's `Finished` (exactly one per call), with its step.
 *
 * @since 0.1.0
 * @category events
 */
export interface Finished extends Executor.Finished {
  readonly step: number
}

/**
 * A step is done: the model's response and every outcome.
 *
 * @since 0.1.0
 * @category events
 */
export interface StepFinished {
  readonly _tag: "StepFinished"
  readonly step: Step
}

/**
 * The run is done: the last event of the stream.
 *
 * @since 0.1.0
 * @category events
 */
export interface RunFinished {
  readonly _tag: "RunFinished"
  readonly result: Result
}

/**
 * What {@link stream} reports, in order: per step `StepStarted`, `TextDelta`s (when the model streams),
 * `ModelResponded`, then each call's `PermissionRequested` / `PermissionAnswered` (before its `Started`),
 * `Started`, `Progress`, `Finished`, then `StepFinished`; last `RunFinished`.
 *
 * @since 0.1.0
 * @category events
 */
export type Event =
  | StepStarted
  | TextDelta
  | ModelResponded
  | PermissionRequested
  | PermissionAnswered
  | Started
  | Progress
  | Finished
  | StepFinished
  | RunFinished

// ---------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/Agent")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

const Steps: Schema.Schema<ReadonlyArray<Step>> = Schema.Array(
  Schema.declare((u: unknown): u is Step => Predicate.hasProperty(u, "response"), { identifier: "Agent.Step" })
)

/**
 * The run failed because its model did: `ModelFailed` (the model's error is `cause`) or `ModelTimeout` (it did
 * not answer within `modelTimeout`); or, for a journaled run (a `runId` and a `Journal` provided), because its
 * journal did: `JournalFailed` (the `Journal.JournalError` is `cause`: the store went away or is full, or another
 * host holds the run's lease), before anything was dispatched that the journal had not recorded. `step` is the index
 * of the step that failed, `steps` the steps finished before it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 *
 * const program = Agent.run({
 *   toolkit: Toolkit.make(Now),
 *   prompt: "What time is it?",
 *   model: () => Effect.fail(new Error("rate limited"))
 * }).pipe(
 *   Effect.catchTag("AgentError", (error) => Effect.succeed(error.message))
 * )
 * // "the model failed at step 0: rate limited"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AgentError extends Schema.TaggedError<AgentError>("effect-agent-tools/AgentError")("AgentError", {
  reason: Schema.Literal("ModelFailed", "ModelTimeout", "JournalFailed"),
  step: Schema.Int,
  steps: Steps,
  runId: Schema.optional(Schema.String),
  timeout: Schema.optional(Schema.Duration),
  cause: Schema.optional(Schema.Unknown)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    switch (this.reason) {
      case "ModelTimeout":
        return `the model did not answer step ${this.step} within ${
          DurationValue.format(this.timeout ?? DurationValue.zero)
        }`
      case "ModelFailed":
        return `the model failed at step ${this.step}: ${reasonOf(this.cause)}`
      case "JournalFailed":
        return `the run's journal failed at step ${this.step}: ${reasonOf(this.cause)}`
    }
  }
}

/**
 * Whether a value is an {@link AgentError}.
 *
 * @example
 * ```ts
 * import { Agent } from "effect-agent-tools"
 *
 * console.log(Agent.isAgentError(new Error("x"))) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isAgentError = (u: unknown): u is AgentError => Predicate.hasProperty(u, TypeId)

// ---------------------------------------------------------------------------------------------------------------
// running
// ---------------------------------------------------------------------------------------------------------------

/**
 * The steps a run takes at most, unless `maxSteps` says otherwise: a model that never stops calling tools stops
 * there.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_STEPS: number = Internal.DEFAULT_MAX_STEPS

/**
 * A run's options.
 *
 * - `toolkit`: the tools the model is offered and its calls run in.
 * - `prompt`: what the run starts from ({@link PromptInput}).
 * - `model`: a {@link Model}; by default {@link languageModel}, the @effect/ai `LanguageModel` from the environment.
 * - `maxSteps`: model requests at most (default {@link DEFAULT_MAX_STEPS}, at least 1).
 * - `stopWhen`: checked after each step with calls, over the steps so far; true stops the run.
 * - `runId`: the run's id, kept on its result and errors. With a `Journal` provided (`Journal.layerSqlite`,
 *   `layerPg`, `layerMemory`), the run is journaled under it and resumable: a run by that id that exists is resumed
 *   (the steps the journal has are not asked again, the interrupted step's calls are finished by the replay rules,
 *   see the durable runs guide), and the run holds its lease while it runs. Without a `Journal`, a label.
 * - `modelTimeout`: how long one model request may take; past it the run fails with `ModelTimeout`.
 * - `maxParallel`, `sequential`, `timeout`, `onStart`: the executor's options, for every batch.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends Tool.Any, R = never, RS = never> {
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly prompt: PromptInput
  readonly model?: Model<R> | undefined
  readonly maxSteps?: number | undefined
  readonly stopWhen?: ((steps: ReadonlyArray<Step>) => boolean) | undefined
  readonly runId?: string | undefined
  readonly modelTimeout?: Duration.DurationInput | undefined
  readonly maxParallel?: number | undefined
  readonly sequential?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly onStart?: ((call: Executor.ToolCall) => Effect.Effect<void, unknown, RS>) | undefined
}

/**
 * Runs the loop and gives the {@link Result}. The same run as {@link stream}, without the events (and so, with the
 * default model, a whole answer per step instead of a streamed one). Interrupting it interrupts the model request
 * or the running calls, whose finalizers have run when it returns.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Agent, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Add = Tool.make("add", {
 *   description: "Add two numbers",
 *   parameters: { a: Schema.Number, b: Schema.Number },
 *   handler: ({ a, b }) => Effect.succeed(String(a + b))
 * })
 *
 * const program = Agent.run({
 *   toolkit: Toolkit.make(Add),
 *   prompt: "What is 2 + 3?",
 *   // a scripted model: one call, then the answer
 *   model: (transcript) =>
 *     Effect.succeed(
 *       transcript.length === 1
 *         ? { calls: [{ id: "1", name: "add", arguments: "{\"a\":2,\"b\":3}" }] }
 *         : { text: "5" }
 *     )
 * })
 * // Result: { reason: "NoCalls", text: "5", steps: [2 steps], transcript: [user, assistant, tool, assistant] }
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = <Tools extends Tool.Any, R = LanguageModel.LanguageModel, RS = never>(
  options: Options<Tools, R, RS>
): Effect.Effect<Result, AgentError, R | RS | Tool.Requirements<Tools>> => Internal.run(options)

/**
 * The loop as one stream of {@link Event}s for the whole run, ending with `RunFinished`. Stopping the stream early
 * (the consumer leaving, `Stream.take`, interruption) interrupts the model request and the running calls, and it
 * ends once their finalizers have run. A model failure fails the stream with an {@link AgentError}.
 *
 * @example
 * ```ts
 * import { Console, Effect, Stream } from "effect"
 * import { Agent, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 *
 * const program = Agent.stream({
 *   toolkit: Toolkit.make(Now),
 *   prompt: "What time is it?",
 *   model: (transcript, { textDelta }) =>
 *     transcript.length === 1
 *       ? Effect.succeed({ calls: [{ id: "1", name: "now", arguments: "{}" }] })
 *       : Effect.as(Effect.zipRight(textDelta("It is "), textDelta("noon.")), { text: "It is noon." })
 * }).pipe(
 *   Stream.runForEach((event) => Console.log(event._tag))
 * )
 * // StepStarted, ModelResponded, Started, Finished, StepFinished, StepStarted, TextDelta, TextDelta, ...
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const stream = <Tools extends Tool.Any, R = LanguageModel.LanguageModel, RS = never>(
  options: Options<Tools, R, RS>
): Stream.Stream<Event, AgentError, R | RS | Tool.Requirements<Tools>> => Internal.stream(options)
