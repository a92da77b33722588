/**
 * OpenAI's Chat Completions API, from a response to the next request: the tool definitions for the request, the
 * model's tool calls out of its answer, and the messages that carry the outcomes back.
 *
 * The types below are the API's own JSON, as documented in the
 * [Chat Completions reference](https://platform.openai.com/docs/api-reference/chat/create) (only the fields this
 * module reads or writes are spelled out; the rest pass through untouched).
 *
 * What a result can carry here: a `role: "tool"` message takes text only, so a call's text goes there (an error as
 * its one `Error: ...` line; the chat API has no error flag); its images (png, jpeg, gif, webp), audio (wav, mp3)
 * and PDF files follow, after all the tool messages, in one `role: "user"` message where each call's media come
 * after a text part `[call <id>]`. Embedded text resources and resource links are text (`[resource <uri>]` and the
 * text; `[resource link <name>: <uri>]`); other media types are a one-line note in the tool message.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import type * as Executor from "./Executor.js"
import * as Internal from "./internal/providers/openAiChat.js"
import type { ProviderFormatError } from "./ProviderFormat.js"
import type * as Tool from "./Tool.js"
import type * as ToolDefinition from "./ToolDefinition.js"
import * as Toolkit from "./Toolkit.js"

/**
 * A function tool call in an assistant message: `arguments` is the JSON text the model wrote (not always valid
 * JSON).
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

/**
 * A call of a custom (free-form) tool. This module never declares custom tools, so `calls` refuses one with a
 * `ProviderFormatError`: the host that declared it answers it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CustomToolCall {
  readonly id: string
  readonly type: "custom"
  readonly custom: { readonly name: string; readonly input: string }
}

/**
 * A text content part.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextPart {
  readonly type: "text"
  readonly text: string
}

/**
 * A refusal content part of an assistant message.
 *
 * @since 0.1.0
 * @category models
 */
export interface RefusalPart {
  readonly type: "refusal"
  readonly refusal: string
}

/**
 * An image content part of a user message: `url` is an `https:` URL or a `data:` URL.
 *
 * @since 0.1.0
 * @category models
 */
export interface ImagePart {
  readonly type: "image_url"
  readonly image_url: { readonly url: string; readonly detail?: "auto" | "low" | "high" }
}

/**
 * An audio content part of a user message: base64 data in one of the two formats the API takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface AudioPart {
  readonly type: "input_audio"
  readonly input_audio: { readonly data: string; readonly format: "wav" | "mp3" }
}

/**
 * A file content part of a user message (a PDF): `file_data` is a `data:` URL.
 *
 * @since 0.1.0
 * @category models
 */
export interface FilePart {
  readonly type: "file"
  readonly file: { readonly file_data?: string; readonly file_id?: string; readonly filename?: string }
}

/**
 * A content part of a user message.
 *
 * @since 0.1.0
 * @category models
 */
export type UserContentPart = TextPart | ImagePart | AudioPart | FilePart

/**
 * A system message.
 *
 * @since 0.1.0
 * @category models
 */
export interface SystemMessage {
  readonly role: "system"
  readonly content: string | ReadonlyArray<TextPart>
  readonly name?: string
}

/**
 * A developer message (what newer models take in place of a system message).
 *
 * @since 0.1.0
 * @category models
 */
export interface DeveloperMessage {
  readonly role: "developer"
  readonly content: string | ReadonlyArray<TextPart>
  readonly name?: string
}

/**
 * A user message.
 *
 * @since 0.1.0
 * @category models
 */
export interface UserMessage {
  readonly role: "user"
  readonly content: string | ReadonlyArray<UserContentPart>
  readonly name?: string
}

/**
 * An assistant message: the model's answer, and what goes back into the transcript as it came.
 *
 * @since 0.1.0
 * @category models
 */
export interface AssistantMessage {
  readonly role: "assistant"
  readonly content?: string | ReadonlyArray<TextPart | RefusalPart> | null
  readonly refusal?: string | null
  readonly tool_calls?: ReadonlyArray<FunctionToolCall | CustomToolCall>
  readonly name?: string
}

/**
 * A tool message: one call's output, as text.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolMessage {
  readonly role: "tool"
  readonly tool_call_id: string
  readonly content: string | ReadonlyArray<TextPart>
}

/**
 * A message of a request's `messages`.
 *
 * @since 0.1.0
 * @category models
 */
export type Message = SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolMessage

/**
 * One choice of a completion.
 *
 * @since 0.1.0
 * @category models
 */
export interface Choice {
  readonly index: number
  readonly message: AssistantMessage
  readonly finish_reason: "stop" | "length" | "tool_calls" | "content_filter" | "function_call" | null
}

/**
 * A chat completion (`object: "chat.completion"`), the response of `POST /v1/chat/completions`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatCompletion {
  readonly id: string
  readonly object: "chat.completion"
  readonly created: number
  readonly model: string
  readonly choices: ReadonlyArray<Choice>
  readonly usage?: {
    readonly prompt_tokens: number
    readonly completion_tokens: number
    readonly total_tokens: number
  }
}

/**
 * The request's `tools`: each tool as `{ type: "function", function: { name, description, parameters, strict? } }`
 * (what `Toolkit.definitions(toolkit, "openAiChat")` gives).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { OpenAiChat, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 * const request = { model: "gpt-4.1", messages: [], tools: OpenAiChat.tools(Toolkit.make(Upper)) }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const tools = (toolkit: Toolkit.Toolkit<Tool.Any>): ReadonlyArray<ToolDefinition.OpenAiChat> =>
  Toolkit.definitions(toolkit, "openAiChat")

/**
 * The model's function calls, in its order, from an assistant message or a whole completion (its first choice's
 * message). `arguments` stay the JSON text the model wrote, so a malformed one reaches the executor and becomes
 * that call's `InvalidArguments`. No `tool_calls` gives an empty array; a value that is not a completion or an
 * assistant message, or a custom tool call, gives a `ProviderFormatError`.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { OpenAiChat } from "effect-agent-tools"
 *
 * const calls = OpenAiChat.calls({
 *   role: "assistant",
 *   content: null,
 *   tool_calls: [{ id: "call_1", type: "function", function: { name: "upper", arguments: "{\"text\":\"a\"}" } }]
 * })
 * console.log(calls) // Right([{ id: "call_1", name: "upper", arguments: "{\"text\":\"a\"}" }])
 * ```
 *
 * @since 0.1.0
 * @category calls
 */
export const calls: (
  response: ChatCompletion | AssistantMessage
) => Either.Either<ReadonlyArray<Executor.ToolCall>, ProviderFormatError> = Internal.calls

/**
 * The messages to append after the assistant message: one `role: "tool"` message per call, in call order (its
 * text, or its error's `Error: ...` line), then, when any result has images, audio or PDF files, one `role: "user"`
 * message carrying them, each call's media after a text part `[call <id>]`. A result's `details` never appears.
 * Throws when `calls` and `outcomes` differ in length (pass what `Executor.run` gave for those calls).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Executor, OpenAiChat, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 * const calls = [{ id: "call_1", name: "upper", arguments: "{\"text\":\"a\"}" }]
 *
 * const program = Effect.map(Executor.run(Toolkit.make(Upper), calls), (outcomes) =>
 *   OpenAiChat.results(calls, outcomes))
 * // [{ role: "tool", tool_call_id: "call_1", content: "A" }]
 * ```
 *
 * @since 0.1.0
 * @category results
 */
export const results: (
  calls: ReadonlyArray<Executor.ToolCall>,
  outcomes: ReadonlyArray<Executor.Outcome>
) => ReadonlyArray<ToolMessage | UserMessage> = Internal.results
