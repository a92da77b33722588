/**
 * Google's Gemini API (`generateContent`), from a response to the next request: the function declarations for the
 * request, the model's `functionCall` parts out of its answer, and the `functionResponse` parts that carry the
 * outcomes back.
 *
 * The types below are the API's own JSON, as documented in the
 * [generateContent reference](https://ai.google.dev/api/generate-content) and the
 * [function calling guide](https://ai.google.dev/gemini-api/docs/function-calling) (only the fields this module
 * reads or writes are spelled out). Append the model's `content` to the transcript as it came: it carries the
 * thought signatures newer models need back.
 *
 * Call ids: a Gemini function call has no id in most API versions (newer ones may send `id`). `calls` keeps an id
 * the model sent and otherwise mints one from the call's position, `gemini-call-<candidate>-<part>` (the
 * candidate's index and the part's index in its content), stable for the same response. `results` answers in call
 * order with each call's `name`, which is how Gemini matches responses to calls, and sends `id` back only when the
 * model sent one.
 *
 * What a result can carry here: a `functionResponse`'s `response` is `{ output: <text> }`, or `{ error: "Error:
 * ..." }` for an error; images (png, jpeg, webp) and PDF files go in its `parts` as `inlineData` (the API's
 * multimodal function responses). Embedded text resources and resource links are text in `output`; audio and other
 * media types are a one-line note.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import type * as Executor from "./Executor.js"
import * as Internal from "./internal/providers/gemini.js"
import type { ProviderFormatError } from "./ProviderFormat.js"
import type * as Tool from "./Tool.js"
import type * as ToolDefinition from "./ToolDefinition.js"
import * as Toolkit from "./Toolkit.js"

/**
 * A function call the model made: `args` is the arguments object; `id` is sent by newer API versions only.
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionCall {
  readonly id?: string
  readonly name: string
  readonly args?: { readonly [key: string]: unknown }
}

/**
 * Inline base64 data.
 *
 * @since 0.1.0
 * @category models
 */
export interface Blob {
  readonly mimeType: string
  readonly data: string
}

/**
 * One call's outcome. `response` is a JSON object (`{ output }` or `{ error }` here); `parts` carries media.
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionResponse {
  readonly id?: string
  readonly name: string
  readonly response: { readonly [key: string]: unknown }
  readonly parts?: ReadonlyArray<{ readonly inlineData: Blob }>
}

/**
 * What every part may carry besides its data: whether it is a thought, and the model's thought signature.
 *
 * @since 0.1.0
 * @category models
 */
export interface PartMetadata {
  readonly thought?: boolean
  readonly thoughtSignature?: string
}

/**
 * A part of a content: text, inline data, a function call or a function response.
 *
 * @since 0.1.0
 * @category models
 */
export type Part =
  | PartMetadata & { readonly text: string }
  | PartMetadata & { readonly inlineData: Blob }
  | PartMetadata & { readonly functionCall: FunctionCall }
  | PartMetadata & { readonly functionResponse: FunctionResponse }

/**
 * A turn of the conversation: the user's (`role: "user"`, also for function responses) or the model's.
 *
 * @since 0.1.0
 * @category models
 */
export interface Content {
  readonly role?: "user" | "model"
  readonly parts?: ReadonlyArray<Part>
}

/**
 * One candidate answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Candidate {
  readonly content?: Content
  readonly finishReason?: string
  readonly index?: number
}

/**
 * What `generateContent` gives.
 *
 * @since 0.1.0
 * @category models
 */
export interface GenerateContentResponse {
  readonly candidates?: ReadonlyArray<Candidate>
  readonly promptFeedback?: unknown
  readonly usageMetadata?: {
    readonly promptTokenCount?: number
    readonly candidatesTokenCount?: number
    readonly totalTokenCount?: number
  }
  readonly modelVersion?: string
}

/**
 * The request's function declarations: each tool as `{ name, description, parameters? }` (what
 * `Toolkit.definitions(toolkit, "gemini")` gives); they go in the request as
 * `tools: [{ functionDeclarations }]`. Throws, like `ToolDefinition.gemini`, for a schema Gemini cannot take.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Gemini, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const request = { contents: [], tools: [{ functionDeclarations: Gemini.tools(Toolkit.make(Now)) }] }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const tools = (toolkit: Toolkit.Toolkit<Tool.Any>): ReadonlyArray<ToolDefinition.Gemini> =>
  Toolkit.definitions(toolkit, "gemini")

/**
 * The model's function calls, in its order, from a response (its first candidate), a candidate or a content: each
 * `functionCall` part as `{ id, name, arguments: args }`, other parts skipped; `id` is the model's, or
 * `gemini-call-<candidate>-<part>` when it sent none. No calls (also a candidate with no content, or a response
 * with no candidates) gives an empty array; a value that is none of the three gives a `ProviderFormatError`.
 *
 * @example
 * ```ts
 * import { Gemini } from "effect-agent-tools"
 *
 * const calls = Gemini.calls({ role: "model", parts: [{ functionCall: { name: "now", args: {} } }] })
 * console.log(calls) // Right([{ id: "gemini-call-0-0", name: "now", arguments: {} }])
 * ```
 *
 * @since 0.1.0
 * @category calls
 */
export const calls: (
  response: GenerateContentResponse | Candidate | Content
) => Either.Either<ReadonlyArray<Executor.ToolCall>, ProviderFormatError> = Internal.calls

/**
 * The content to append after the model's: one `role: "user"` content of `functionResponse` parts, in call order
 * (none for no calls). A result's `details` never appears. Throws when `calls` and `outcomes` differ in length.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Executor, Gemini, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const calls = [{ id: "gemini-call-0-0", name: "now", arguments: {} }]
 *
 * const program = Effect.map(Executor.run(Toolkit.make(Now), calls), (outcomes) => Gemini.results(calls, outcomes))
 * // [{ role: "user", parts: [{ functionResponse: { name: "now", response: { output: "noon" } } }] }]
 * ```
 *
 * @since 0.1.0
 * @category results
 */
export const results: (
  calls: ReadonlyArray<Executor.ToolCall>,
  outcomes: ReadonlyArray<Executor.Outcome>
) => ReadonlyArray<Content & { readonly role: "user"; readonly parts: ReadonlyArray<Part> }> = Internal.results
