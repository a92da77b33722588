/**
 * Anthropic's Messages API, from a response to the next request: the tool definitions for the request, the
 * model's `tool_use` blocks out of its message, and the `tool_result` blocks that carry the outcomes back.
 *
 * The types below are the API's own JSON, as documented in the
 * [Messages reference](https://docs.anthropic.com/en/api/messages) and the
 * [tool use guide](https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use) (only the
 * fields this module reads or writes are spelled out).
 *
 * What a result can carry here: everything but audio. All the outcomes go back in one `role: "user"` message of
 * `tool_result` blocks, in call order; an error has `is_error: true` and its one `Error: ...` line; a text-only
 * result is a string; a result with media is an array of `text`, `image` (jpeg, png, gif, webp) and `document`
 * blocks (a PDF, or an embedded text resource as a plain-text document titled with its uri). Resource links are
 * text; audio and other media types are a one-line note.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import type * as Executor from "./Executor.js"
import * as Internal from "./internal/providers/anthropic.js"
import type { ProviderFormatError } from "./ProviderFormat.js"
import type * as Tool from "./Tool.js"
import type * as ToolDefinition from "./ToolDefinition.js"
import * as Toolkit from "./Toolkit.js"

/**
 * A text block.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextBlock {
  readonly type: "text"
  readonly text: string
}

/**
 * A tool call the model made: `input` is the arguments as a JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolUseBlock {
  readonly type: "tool_use"
  readonly id: string
  readonly name: string
  readonly input: unknown
}

/**
 * The model's extended thinking, sent back as it came.
 *
 * @since 0.1.0
 * @category models
 */
export interface ThinkingBlock {
  readonly type: "thinking"
  readonly thinking: string
  readonly signature: string
}

/**
 * Any other block of the model's message (a server tool's use or result, redacted thinking): `calls` skips it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OtherBlock {
  readonly type: string
}

/**
 * A block of the model's message.
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = TextBlock | ToolUseBlock | ThinkingBlock | OtherBlock

/**
 * A message (`type: "message"`), what `POST /v1/messages` gives.
 *
 * @since 0.1.0
 * @category models
 */
export interface Message {
  readonly id: string
  readonly type: "message"
  readonly role: "assistant"
  readonly model: string
  readonly content: ReadonlyArray<ContentBlock>
  readonly stop_reason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn" | "refusal" | null
  readonly stop_sequence?: string | null
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number }
}

/**
 * An image block: base64 data of one of the four types the API takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface ImageBlockParam {
  readonly type: "image"
  readonly source:
    | {
      readonly type: "base64"
      readonly media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp"
      readonly data: string
    }
    | { readonly type: "url"; readonly url: string }
}

/**
 * A document block: a base64 PDF, or plain text.
 *
 * @since 0.1.0
 * @category models
 */
export interface DocumentBlockParam {
  readonly type: "document"
  readonly source:
    | { readonly type: "base64"; readonly media_type: "application/pdf"; readonly data: string }
    | { readonly type: "text"; readonly media_type: "text/plain"; readonly data: string }
  readonly title?: string
}

/**
 * One call's outcome: `tool_use_id` answers the call; `is_error` marks an error.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResultBlockParam {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content?: string | ReadonlyArray<TextBlock | ImageBlockParam | DocumentBlockParam>
  readonly is_error?: boolean
}

/**
 * A block of a request message.
 *
 * @since 0.1.0
 * @category models
 */
export type ContentBlockParam = ContentBlock | ImageBlockParam | DocumentBlockParam | ToolResultBlockParam

/**
 * A message of a request's `messages`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MessageParam {
  readonly role: "user" | "assistant"
  readonly content: string | ReadonlyArray<ContentBlockParam>
}

/**
 * The request's `tools`: each tool as `{ name, description, input_schema }` (what
 * `Toolkit.definitions(toolkit, "anthropic")` gives).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Anthropic, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const request = { model: "claude-sonnet-4-5", max_tokens: 1024, messages: [], tools: Anthropic.tools(Toolkit.make(Now)) }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const tools = (toolkit: Toolkit.Toolkit<Tool.Any>): ReadonlyArray<ToolDefinition.Anthropic> =>
  Toolkit.definitions(toolkit, "anthropic")

/**
 * The model's tool calls, in its order, from a message or its `content` array: each `tool_use` block as
 * `{ id, name, arguments: input }`, other blocks skipped. The input reaches the executor as the model sent it, so
 * one that does not match the tool's parameters becomes that call's `InvalidArguments`. No calls gives an empty
 * array; a value that is not an assistant message or a content array gives a `ProviderFormatError`.
 *
 * @example
 * ```ts
 * import { Anthropic } from "effect-agent-tools"
 *
 * const calls = Anthropic.calls([
 *   { type: "text", text: "Let me check." },
 *   { type: "tool_use", id: "toolu_1", name: "now", input: {} }
 * ])
 * console.log(calls) // Right([{ id: "toolu_1", name: "now", arguments: {} }])
 * ```
 *
 * @since 0.1.0
 * @category calls
 */
export const calls: (
  response: Message | ReadonlyArray<ContentBlock>
) => Either.Either<ReadonlyArray<Executor.ToolCall>, ProviderFormatError> = Internal.calls

/**
 * The message to append after the model's: one `role: "user"` message of `tool_result` blocks, in call order
 * (none for no calls, since the API refuses an empty message). A result's `details` never appears. Throws when
 * `calls` and `outcomes` differ in length.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Anthropic, Executor, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const calls = [{ id: "toolu_1", name: "now", arguments: {} }]
 *
 * const program = Effect.map(Executor.run(Toolkit.make(Now), calls), (outcomes) =>
 *   Anthropic.results(calls, outcomes))
 * // [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "noon" }] }]
 * ```
 *
 * @since 0.1.0
 * @category results
 */
export const results: (
  calls: ReadonlyArray<Executor.ToolCall>,
  outcomes: ReadonlyArray<Executor.Outcome>
) => ReadonlyArray<MessageParam> = Internal.results
