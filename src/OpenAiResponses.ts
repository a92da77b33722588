/**
 * OpenAI's Responses API, from a response to the next request: the tool definitions for the request, the model's
 * `function_call` items out of its output, and the `function_call_output` items that carry the outcomes back.
 *
 * The types below are the API's own JSON, as documented in the
 * [Responses reference](https://platform.openai.com/docs/api-reference/responses) (only the fields this module
 * reads or writes are spelled out).
 *
 * What a result can carry here: a `function_call_output`'s `output` is a string when the result is text only (an
 * error is its one `Error: ...` line; the API has no error flag), else an array of `input_text`, `input_image`
 * (png, jpeg, gif, webp, as a `data:` URL) and `input_file` (PDF) parts in the result's order. Embedded text
 * resources and resource links are text; audio, which a function call output cannot take, and other media types
 * are a one-line note.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import type * as Executor from "./Executor.js"
import * as Internal from "./internal/providers/openAiResponses.js"
import type { ProviderFormatError } from "./ProviderFormat.js"
import type * as Tool from "./Tool.js"
import type * as ToolDefinition from "./ToolDefinition.js"
import * as Toolkit from "./Toolkit.js"

/**
 * A function call the model made: `call_id` is what the output answers; `arguments` is the JSON text the model
 * wrote (not always valid JSON).
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionCall {
  readonly type: "function_call"
  readonly id?: string
  readonly call_id: string
  readonly name: string
  readonly arguments: string
  readonly status?: "in_progress" | "completed" | "incomplete"
}

/**
 * A text part of the model's message.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutputText {
  readonly type: "output_text"
  readonly text: string
  readonly annotations?: ReadonlyArray<unknown>
}

/**
 * The model's message.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutputMessage {
  readonly type: "message"
  readonly id: string
  readonly role: "assistant"
  readonly status?: "in_progress" | "completed" | "incomplete"
  readonly content: ReadonlyArray<OutputText | { readonly type: "refusal"; readonly refusal: string }>
}

/**
 * Any other output item (reasoning, a built-in tool's call): `calls` skips it, and it goes back into the next
 * request's `input` as it came.
 *
 * @since 0.1.0
 * @category models
 */
export interface OtherItem {
  readonly type: string
  readonly id?: string
}

/**
 * One item of a response's `output`.
 *
 * @since 0.1.0
 * @category models
 */
export type OutputItem = FunctionCall | OutputMessage | OtherItem

/**
 * A response (`object: "response"`), what `POST /v1/responses` gives.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly id: string
  readonly object: "response"
  readonly created_at: number
  readonly model: string
  readonly status?: "completed" | "failed" | "in_progress" | "cancelled" | "queued" | "incomplete"
  readonly output: ReadonlyArray<OutputItem>
}

/**
 * A text part of an input.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputText {
  readonly type: "input_text"
  readonly text: string
}

/**
 * An image part of an input: `image_url` is an `https:` URL or a `data:` URL.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputImage {
  readonly type: "input_image"
  readonly image_url?: string
  readonly file_id?: string
  readonly detail: "low" | "high" | "auto"
}

/**
 * A file part of an input: `file_data` is a `data:` URL.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputFile {
  readonly type: "input_file"
  readonly file_data?: string
  readonly file_id?: string
  readonly file_url?: string
  readonly filename?: string
}

/**
 * A function call's output, an item of the next request's `input`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FunctionCallOutput {
  readonly type: "function_call_output"
  readonly call_id: string
  readonly output: string | ReadonlyArray<InputText | InputImage | InputFile>
}

/**
 * A message of a request's `input`.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputMessage {
  readonly type?: "message"
  readonly role: "user" | "assistant" | "system" | "developer"
  readonly content: string | ReadonlyArray<InputText | InputImage | InputFile>
}

/**
 * One item of a request's `input`: a message, an output item of an earlier response as it came, or a function
 * call's output.
 *
 * @since 0.1.0
 * @category models
 */
export type InputItem = InputMessage | OutputItem | FunctionCallOutput

/**
 * The request's `tools`: each tool as `{ type: "function", name, description, parameters, strict? }` (what
 * `Toolkit.definitions(toolkit, "openAiResponses")` gives).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OpenAiResponses, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const request = { model: "gpt-4.1", input: "What time is it?", tools: OpenAiResponses.tools(Toolkit.make(Now)) }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const tools = (toolkit: Toolkit.Toolkit<Tool.Any>): ReadonlyArray<ToolDefinition.OpenAiResponses> =>
  Toolkit.definitions(toolkit, "openAiResponses")

/**
 * The model's function calls, in output order, from a response or its `output` array: each `function_call` item
 * as `{ id: call_id, name, arguments }`, other items skipped. `arguments` stay the JSON text the model wrote, so a
 * malformed one reaches the executor and becomes that call's `InvalidArguments`. No calls gives an empty array; a
 * value that is not a response or an output array gives a `ProviderFormatError`.
 *
 * @example
 * ```ts
 * import { OpenAiResponses } from "effect-agent-tools"
 *
 * const calls = OpenAiResponses.calls([
 *   { type: "reasoning", id: "rs_1" },
 *   { type: "function_call", id: "fc_1", call_id: "call_1", name: "now", arguments: "{}" }
 * ])
 * console.log(calls) // Right([{ id: "call_1", name: "now", arguments: "{}" }])
 * ```
 *
 * @since 0.1.0
 * @category calls
 */
export const calls: (
  response: Response | ReadonlyArray<OutputItem>
) => Either.Either<ReadonlyArray<Executor.ToolCall>, ProviderFormatError> = Internal.calls

/**
 * The items to append to the next request's `input` (after the response's output items): one
 * `function_call_output` per call, in call order. A result's `details` never appears. Throws when `calls` and
 * `outcomes` differ in length.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Executor, OpenAiResponses, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const calls = [{ id: "call_1", name: "now", arguments: "{}" }]
 *
 * const program = Effect.map(Executor.run(Toolkit.make(Now), calls), (outcomes) =>
 *   OpenAiResponses.results(calls, outcomes))
 * // [{ type: "function_call_output", call_id: "call_1", output: "noon" }]
 * ```
 *
 * @since 0.1.0
 * @category results
 */
export const results: (
  calls: ReadonlyArray<Executor.ToolCall>,
  outcomes: ReadonlyArray<Executor.Outcome>
) => ReadonlyArray<FunctionCallOutput> = Internal.results
