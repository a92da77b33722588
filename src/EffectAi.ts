/**
 * `@effect/ai` (0.37) both ways: our toolkit for its `LanguageModel`, its responses as our calls, our outcomes as
 * its prompt, and its toolkit through our executor.
 *
 * A subpath only: `import * as EffectAi from "effect-agent-tools/EffectAi"`. `@effect/ai` is an optional peer
 * dependency, and this is the one module that imports it, so the root `effect-agent-tools` never loads it (an
 * `export * as EffectAi` in the root index would, for every user, with or without @effect/ai installed).
 *
 * Two ways to let an @effect/ai model call our tools:
 *
 * - {@link toolkit}: hand `LanguageModel.generateText({ toolkit })` our tools and let @effect/ai resolve the calls.
 *   Each call runs through `Tool.execute` (validation, permission, the tool's timeout, recording), and an error
 *   reaches the model as its one `Error: ...` line, so it can correct itself. What that path loses: @effect/ai
 *   hands the calls over one at a time (`Effect.forEach`, sequential unless `concurrency` is set), so there is no
 *   batch: no per-resource ordering or locks across calls, no `maxParallel`, no `onStart`, no event stream, no
 *   `cancel(callId)`, and no model call id (each call gets a minted `effect-ai-call-<n>`, which is what
 *   `Tool.currentCall`, permission requests and records see). Arguments that are not JSON fail the whole turn in
 *   the provider package (it parses them before @effect/ai sees the call), and a call of a tool the toolkit lacks
 *   fails it in @effect/ai's decoding of the response.
 * - {@link calls} and {@link results}: the path that keeps everything. Ask with
 *   `generateText({ toolkit: EffectAi.toolkit(kit), disableToolCallResolution: true })`, run `calls(response)`
 *   through `Executor.run` or `Executor.stream`, and append `results(calls, outcomes)` to the prompt.
 *
 * And the other way, {@link fromToolkit}: an @effect/ai toolkit (with its handlers) as our `Toolkit`, so locks,
 * timeouts, permission, records and the event stream apply to @effect/ai tools too.
 *
 * What a result can carry back to @effect/ai: its `Prompt` tool-result part holds one JSON value that the provider
 * packages send as JSON text, so a result is the text the model reads (or its `structured` value when the text is
 * exactly that value's JSON, so it is not encoded twice); an error has `isFailure: true` and its one `Error: ...`
 * line. Images (png, jpeg, gif, webp) and PDF files follow in one user message of file parts, each call's after a
 * text part `[call <id>]`; audio and other media types are a one-line note.
 *
 * @since 0.1.0
 */
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import type * as AiTool from "@effect/ai/Tool"
import type * as AiToolkit from "@effect/ai/Toolkit"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import type * as Executor from "./Executor.js"
import * as Internal from "./internal/providers/effectAi.js"
import type * as Permission from "./Permission.js"
import type { ProviderFormatError } from "./ProviderFormat.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * The parameters schema of the @effect/ai tools {@link toolkit} makes: `Schema.Struct({})`, which decodes any
 * value but null as it is, served with our tool's JSON Schema. @effect/ai decodes a call's parameters with its
 * tool's schema, and a failure there fails the whole turn; passing them through lets our tool check them and
 * answer `InvalidArguments` the model can correct.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = Schema.Struct<{}>

/**
 * The @effect/ai tool made for one of our tools: same name, description and annotations; the failure is the
 * `Error: ...` text, returned to the model (`failureMode: "return"`), never failing the turn.
 *
 * @since 0.1.0
 * @category models
 */
export type AiToolFor<T> = T extends Tool.Any ? AiTool.Tool<Tool.Name<T>, {
    readonly parameters: Parameters
    readonly success: typeof Schema.Unknown
    readonly failure: typeof Schema.String
    readonly failureMode: "return"
  }, Tool.Requirements<T>>
  : never

/**
 * The @effect/ai tools made for a toolkit's tools, by name.
 *
 * @since 0.1.0
 * @category models
 */
export type AiToolsFor<T extends Tool.Any> = { readonly [K in T as Tool.Name<K>]: AiToolFor<K> }

/**
 * Our tool made for an @effect/ai tool: same name, the same parameters, success and failure types (from its
 * schemas; `structured` is the success encoded through its success schema); its services are what the tool's
 * `handle` needs.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolFor<T> = T extends AiTool.Tool.ProviderDefinedProto ? never
  : T extends AiTool.Tool<infer Name, infer _Config, infer _R> ? Tool.Tool<
      Name,
      AiTool.Parameters<T>,
      AiTool.Success<T>,
      AiTool.Failure<T>,
      AiTool.Requirements<T>,
      Tool.StructuredOf<AiTool.SuccessEncoded<T>>
    >
  : never

/**
 * Our tools made for an @effect/ai toolkit's user-defined tools (provider-defined ones run at the provider).
 *
 * @since 0.1.0
 * @category models
 */
export type ToolsFor<Tools extends Record<string, AiTool.Any>> = ToolFor<Tools[keyof Tools]>

/**
 * Options of {@link toolkit}: `timeout` is the timeout of calls whose tool sets none (the executor's `timeout`
 * option, for the one-call-at-a-time path).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolkitOptions {
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Our toolkit as what `LanguageModel.generateText({ toolkit })` takes: real @effect/ai `Tool`s (our names,
 * descriptions, JSON Schema and annotations) with a `handle` that runs each call through `Tool.execute`. A tool
 * with `strict: true` is served its OpenAI strict schema; note that `@effect/ai-openai` sends every tool as strict
 * unless its config says `strict: false`. See the module's documentation for what this path loses against
 * {@link calls} + `Executor.run` + {@link results}.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 * import * as EffectAi from "effect-agent-tools/EffectAi"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * const program = LanguageModel.generateText({
 *   prompt: "Shout 'hello'",
 *   toolkit: EffectAi.toolkit(Toolkit.make(Upper))
 * })
 * ```
 *
 * @since 0.1.0
 * @category @effect/ai models
 */
export const toolkit: <T extends Tool.Any>(
  kit: Toolkit.Toolkit<T>,
  options?: ToolkitOptions
) => AiToolkit.WithHandler<AiToolsFor<T>> = Internal.toolkit

/**
 * The tool calls of a `generateText(..., { disableToolCallResolution: true })` response (or its `content`), in
 * the model's order, as `{ id, name, arguments: params }`; calls the provider ran itself are skipped. A value that
 * is not a response's content gives a `ProviderFormatError`.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 * import * as EffectAi from "effect-agent-tools/EffectAi"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const kit = Toolkit.make(Now)
 *
 * const step = Effect.gen(function*() {
 *   const response = yield* LanguageModel.generateText({
 *     prompt: "What time is it?",
 *     toolkit: EffectAi.toolkit(kit),
 *     disableToolCallResolution: true
 *   })
 *   const calls = yield* EffectAi.calls(response)
 *   const outcomes = yield* Executor.run(kit, calls)
 *   return EffectAi.results(calls, outcomes)
 * })
 * ```
 *
 * @since 0.1.0
 * @category calls
 */
export const calls: (
  response: { readonly content: ReadonlyArray<Response.AnyPart> } | ReadonlyArray<Response.AnyPart>
) => Either.Either<ReadonlyArray<Executor.ToolCall>, ProviderFormatError> = Internal.calls

/**
 * The prompt to append for the next request (`Prompt.merge(prompt, results)`, after the model's own turn,
 * `Prompt.fromResponseParts(response.content)`): one `tool` message of tool-result parts in call order, then,
 * when any result has images or PDF files, one `user` message of file parts, each call's after a text part
 * `[call <id>]`. A result's `details` never appears. Throws when `calls` and `outcomes` differ in length.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Executor, Tool, Toolkit } from "effect-agent-tools"
 * import * as EffectAi from "effect-agent-tools/EffectAi"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const calls = [{ id: "call_1", name: "now", arguments: {} }]
 *
 * const program = Effect.map(Executor.run(Toolkit.make(Now), calls), (outcomes) =>
 *   EffectAi.results(calls, outcomes))
 * // a Prompt of one tool message: [{ type: "tool-result", id: "call_1", name: "now", isFailure: false, result: "noon" }]
 * ```
 *
 * @since 0.1.0
 * @category results
 */
export const results: (
  calls: ReadonlyArray<Executor.ToolCall>,
  outcomes: ReadonlyArray<Executor.Outcome>
) => Prompt.Prompt = Internal.results

/**
 * What {@link fromToolkit} may add to the tool made for one @effect/ai tool, as `Tool.make` takes it: resource
 * keys (from the decoded parameters), `sequential`, a `timeout`, a `permission` to ask for, `strict`. An
 * @effect/ai tool declares none of these, so without them its calls run alongside each other, unasked.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOptions<P> {
  readonly resource?: Tool.Resource<P> | undefined
  readonly sequential?: boolean | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly permission?: Permission.Spec<P> | undefined
  readonly strict?: boolean | undefined
}

/**
 * {@link ToolOptions} by tool name, typed by each tool's parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type FromToolkitOptions<Tools extends Record<string, AiTool.Any>> = {
  readonly [Name in keyof Tools]?: ToolOptions<AiTool.Parameters<Tools[Name]>>
}

/**
 * An @effect/ai toolkit as our `Toolkit`: each user-defined tool becomes our tool with the same name,
 * description, parameters schema (so arguments are checked with our messages) and annotations, whose handler
 * calls the toolkit's `handle` (the @effect/ai handler, its result validated and encoded by @effect/ai). Run it
 * with `Executor`, and timeouts, records, cancellation and the event stream apply; `Tool.progress` inside an
 * @effect/ai handler reports progress; `options` adds, per tool, the resource keys that order and lock its calls,
 * a permission to ask for, a timeout. The handler's typed failure is the call's `ToolFailure`; a result that
 * fails its own success schema is a `ToolDefect`. Provider-defined tools are left out (the provider runs them).
 *
 * Give it what `generateText` takes as `toolkit`: a `WithHandler` gives the toolkit at once; an Effect of one (an
 * @effect/ai `Toolkit` itself, which reads its handlers from the context) gives an Effect of it. Throws, like
 * `Toolkit.make`, for a tool name outside `^[a-zA-Z0-9_-]{1,64}$` or parameters that cannot be JSON Schema.
 *
 * @example
 * ```ts
 * import { Tool as AiTool, Toolkit as AiToolkit } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 * import { Executor } from "effect-agent-tools"
 * import * as EffectAi from "effect-agent-tools/EffectAi"
 *
 * const Greet = AiTool.make("greet", {
 *   description: "Greet someone",
 *   parameters: { name: Schema.String },
 *   success: Schema.String
 * })
 * const Greetings = AiToolkit.make(Greet)
 * const handlers = Greetings.toLayer({ greet: ({ name }) => Effect.succeed(`hello ${name}`) })
 *
 * const program = Effect.gen(function*() {
 *   const kit = yield* EffectAi.fromToolkit(Greetings, { greet: { resource: ({ name }) => `person:${name}` } })
 *   return yield* Executor.run(kit, [{ id: "1", name: "greet", arguments: "{\"name\":\"Ada\"}" }])
 * }).pipe(Effect.provide(handlers))
 * ```
 *
 * @since 0.1.0
 * @category @effect/ai models
 */
export const fromToolkit: {
  <Tools extends Record<string, AiTool.Any>>(
    toolkit: AiToolkit.WithHandler<Tools>,
    options?: FromToolkitOptions<Tools>
  ): Toolkit.Toolkit<ToolsFor<Tools>>
  <Tools extends Record<string, AiTool.Any>, E, R>(
    toolkit: Effect.Effect<AiToolkit.WithHandler<Tools>, E, R>,
    options?: FromToolkitOptions<Tools>
  ): Effect.Effect<Toolkit.Toolkit<ToolsFor<Tools>>, E, R>
} = Internal.fromToolkit
