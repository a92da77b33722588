/**
 * OpenAI chat completions: reading calls out of an assistant message, writing tool (and user) messages back.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type {
  AssistantMessage,
  ChatCompletion,
  TextPart,
  ToolMessage,
  UserContentPart,
  UserMessage
} from "../../OpenAiChat.js"
import type { ProviderFormatError } from "../../ProviderFormat.js"
import type { Outcome, ToolCall } from "../executor.js"
import { dataUrl, fileName, foldOutcome, OPENAI_IMAGE_TYPES, paired, PDF, walk } from "./content.js"
import { at, collect, isRecord, optionalArrayAt, reader, stringAt } from "./shape.js"

const read = reader("openAiChat")

/** The audio the chat API takes (`input_audio.format`), by MIME type. */
const AUDIO_FORMATS: ReadonlyMap<string, "wav" | "mp3"> = new Map([
  ["audio/wav", "wav"],
  ["audio/x-wav", "wav"],
  ["audio/wave", "wav"],
  ["audio/mpeg", "mp3"],
  ["audio/mp3", "mp3"]
])

const toolCall = (item: unknown, path: string): Either.Either<ToolCall, ProviderFormatError> =>
  Either.gen(function*() {
    if (!isRecord(item)) return yield* read.fail(path, "a tool call object", item)
    if (item.type !== undefined && item.type !== "function") {
      return yield* read.fail(
        at(path, "type"),
        "\"function\" (a custom tool call is answered by the host that declared the custom tool)",
        item.type
      )
    }
    const id = yield* stringAt(read, at(path, "id"), item.id)
    const fn = item.function
    if (!isRecord(fn)) return yield* read.fail(at(path, "function"), "an object with name and arguments", fn)
    const name = yield* stringAt(read, at(path, "function.name"), fn.name)
    if (fn.arguments === undefined) {
      return yield* read.fail(at(path, "function.arguments"), "the arguments' JSON text", fn.arguments)
    }
    return { id, name, arguments: fn.arguments }
  })

const messageCalls = (message: unknown, path: string): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    if (!isRecord(message)) return yield* read.fail(path, "an assistant message", message)
    if (message.role !== "assistant") {
      return yield* read.fail(
        at(path, "role"),
        path === "" ? "\"assistant\" (an assistant message, or a completion with `choices`)" : "\"assistant\"",
        message.role
      )
    }
    // an array content of other parts is another provider's message (an Anthropic one has this role too)
    if (Array.isArray(message.content)) {
      const content = message.content
      for (let index = 0; index < content.length; index++) {
        const part: unknown = content[index]
        const type = isRecord(part) ? part.type : undefined
        if (type !== "text" && type !== "refusal") {
          return yield* read.fail(at(at(path, "content"), index), "a text or refusal part", part)
        }
      }
    }
    const base = at(path, "tool_calls")
    const items = yield* optionalArrayAt(read, base, message.tool_calls, "an array of tool calls")
    return yield* collect(items, (item, index) => toolCall(item, at(base, index)))
  })

export const calls = (
  response: ChatCompletion | AssistantMessage
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    const value: unknown = response
    if (!isRecord(value)) return yield* read.fail("", "a chat completion or an assistant message", value)
    if (value.choices === undefined) return yield* messageCalls(value, "")
    if (!Array.isArray(value.choices) || value.choices.length === 0) {
      return yield* read.fail("choices", "a non-empty array of choices", value.choices)
    }
    const choice: unknown = value.choices[0]
    if (!isRecord(choice)) return yield* read.fail("choices[0]", "a choice object", choice)
    return yield* messageCalls(choice.message, "choices[0].message")
  })

/** One result as the tool message's text and the media that follow in the user message. */
const placed = (outcome: Outcome): { readonly text: string; readonly media: ReadonlyArray<UserContentPart> } =>
  foldOutcome(outcome, (text) => ({ text, media: [] }), (pieces) => {
    const texts: Array<string> = []
    const media: Array<UserContentPart> = []
    walk(pieces, (text) => texts.push(text), {
      media: (piece) => {
        switch (piece._tag) {
          case "Image":
            if (!OPENAI_IMAGE_TYPES.has(piece.mimeType)) return "OpenAI chat takes png, jpeg, gif or webp images"
            media.push({ type: "image_url", image_url: { url: dataUrl(piece.mimeType, piece.data) } })
            return true
          case "Audio": {
            const format = AUDIO_FORMATS.get(piece.mimeType)
            if (format === undefined) return "OpenAI chat takes wav or mp3 audio"
            media.push({ type: "input_audio", input_audio: { data: piece.data, format } })
            return true
          }
          case "File":
            if (piece.mimeType !== PDF) return "OpenAI chat takes PDF files"
            media.push({ type: "file", file: { filename: fileName(piece.uri), file_data: dataUrl(PDF, piece.data) } })
            return true
        }
      }
    })
    return { text: texts.join("\n"), media }
  })

export const results = (
  calls: ReadonlyArray<ToolCall>,
  outcomes: ReadonlyArray<Outcome>
): ReadonlyArray<ToolMessage | UserMessage> => {
  const messages: Array<ToolMessage | UserMessage> = []
  const media: Array<UserContentPart> = []
  for (const [call, outcome] of paired(calls, outcomes)) {
    const one = placed(outcome)
    messages.push({ role: "tool", tool_call_id: call.id, content: one.text })
    if (one.media.length > 0) media.push({ type: "text", text: `[call ${call.id}]` } satisfies TextPart, ...one.media)
  }
  if (media.length > 0) messages.push({ role: "user", content: media })
  return messages
}
