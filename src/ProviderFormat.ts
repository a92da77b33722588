/**
 * What the provider modules (`OpenAiChat`, `OpenAiResponses`, `Anthropic`, `Gemini`, and `EffectAi`) share: the
 * three functions each one has, and the one error they give for a response that is not in their provider's shape.
 *
 * Each provider module works on that provider's own JSON, so a host that talks to a provider over plain HTTP goes
 * from a response to the next request in three steps:
 *
 * 1. `tools(toolkit)`: the tool definitions to send with the request;
 * 2. `calls(response)`: the model's tool calls out of its answer, as `Executor.ToolCall`s in the model's order;
 * 3. `results(calls, outcomes)`: after `Executor.run`, the message(s) to append to the transcript, in call order.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Executor from "./Executor.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-agent-tools/ProviderFormat")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The provider modules, named as in `ProviderFormatError.provider`.
 *
 * @since 0.1.0
 * @category models
 */
export const Provider = Schema.Literal("openAiChat", "openAiResponses", "anthropic", "gemini", "effectAi")

/**
 * The provider modules, named as in `ProviderFormatError.provider`.
 *
 * @since 0.1.0
 * @category models
 */
export type Provider = typeof Provider.Type

const providerNames: Record<Provider, string> = {
  openAiChat: "an OpenAI chat completions",
  openAiResponses: "an OpenAI Responses",
  anthropic: "an Anthropic Messages",
  gemini: "a Gemini generateContent",
  effectAi: "an @effect/ai generateText"
}

/**
 * What `calls` gives for a value that is not in its provider's shape: which provider, where in the value
 * (`path`, dotted with `[i]` for array items, empty for the value itself), what was expected there and a bounded
 * description of what came (never the value itself: a response can be large, and its text is the model's).
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { OpenAiChat } from "effect-agent-tools"
 *
 * const calls = OpenAiChat.calls({ role: "user", content: "hi" } as never)
 * if (Either.isLeft(calls)) console.log(calls.left.message)
 * // not an OpenAI chat completions response: role: expected "assistant" (an assistant message, or a completion
 * // with `choices`), got a string "user"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderFormatError extends Schema.TaggedError<ProviderFormatError>(
  "effect-agent-tools/ProviderFormatError"
)("ProviderFormatError", {
  provider: Provider,
  path: Schema.String,
  expected: Schema.String,
  got: Schema.String
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return `not ${providerNames[this.provider]} response: ${
      this.path === "" ? "" : `${this.path}: `
    }expected ${this.expected}, got ${this.got}`
  }
}

/**
 * Whether a value is a `ProviderFormatError`.
 *
 * @example
 * ```ts
 * import { ProviderFormat } from "effect-agent-tools"
 *
 * const error = new ProviderFormat.ProviderFormatError({ provider: "gemini", path: "", expected: "x", got: "y" })
 * console.log(ProviderFormat.isProviderFormatError(error)) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isProviderFormatError = (u: unknown): u is ProviderFormatError => Predicate.hasProperty(u, TypeId)

/**
 * The three functions every provider module has, over that provider's tool definitions, responses and messages.
 * `import * as OpenAiChat from "effect-agent-tools/OpenAiChat"` is itself one, so a loop can be written once for
 * any provider.
 *
 * - `tools`: what `Toolkit.definitions(toolkit, format)` gives for that provider.
 * - `calls`: the model's calls in its order; an empty array when it made none; a `ProviderFormatError` for a value
 *   that is not that provider's response. An `Either`, which in Effect 3 is also an `Effect`, so it is `yield*`ed
 *   in a loop as it is and read synchronously anywhere else.
 * - `results`: the messages to append, carrying each outcome in call order (`calls` and `outcomes` as
 *   `Executor.run` pairs them; a length mismatch is a programmer error and throws).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { ProviderFormat, Tool, Toolkit } from "effect-agent-tools"
 * import { Anthropic, Executor } from "effect-agent-tools"
 *
 * // one step, written once for any provider module
 * const step = <D, Res, M, T extends Tool.Any>(
 *   format: ProviderFormat.Format<D, Res, M>,
 *   toolkit: Toolkit.Toolkit<T>,
 *   response: Res
 * ) =>
 *   Effect.gen(function*() {
 *     const calls = yield* format.calls(response)
 *     return format.results(calls, yield* Executor.run(toolkit, calls))
 *   })
 *
 * const anthropicStep = <T extends Tool.Any>(toolkit: Toolkit.Toolkit<T>, message: Anthropic.Message) =>
 *   step(Anthropic, toolkit, message)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Format<out Definition, in Response, out Message> {
  readonly tools: (toolkit: Toolkit.Toolkit<Tool.Any>) => ReadonlyArray<Definition>
  readonly calls: (response: Response) => Either.Either<ReadonlyArray<Executor.ToolCall>, ProviderFormatError>
  readonly results: (
    calls: ReadonlyArray<Executor.ToolCall>,
    outcomes: ReadonlyArray<Executor.Outcome>
  ) => ReadonlyArray<Message>
}
