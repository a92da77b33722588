/**
 * Anthropic Messages: reading `tool_use` blocks out of a message, writing one user message of `tool_result`
 * blocks back.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type {
  ContentBlock,
  DocumentBlockParam,
  ImageBlockParam,
  Message,
  MessageParam,
  TextBlock,
  ToolResultBlockParam
} from "../../Anthropic.js"
import type { ProviderFormatError } from "../../ProviderFormat.js"
import type { Outcome, ToolCall } from "../executor.js"
import { foldOutcome, notShown, paired, PDF } from "./content.js"
import { at, collect, isRecord, reader, stringAt } from "./shape.js"

const read = reader("anthropic")

type ImageType = Extract<ImageBlockParam["source"], { type: "base64" }>["media_type"]

const IMAGE_TYPES: ReadonlySet<string> = new Set<ImageType>(["image/jpeg", "image/png", "image/gif", "image/webp"])

const block = (value: unknown, path: string): Either.Either<ToolCall | undefined, ProviderFormatError> =>
  Either.gen(function*() {
    if (!isRecord(value)) return yield* read.fail(path, "a content block object", value)
    const type = yield* stringAt(read, at(path, "type"), value.type, "a block type")
    if (type !== "tool_use") return undefined
    const id = yield* stringAt(read, at(path, "id"), value.id)
    const name = yield* stringAt(read, at(path, "name"), value.name)
    if (value.input === undefined) return yield* read.fail(at(path, "input"), "the arguments object", value.input)
    return { id, name, arguments: value.input }
  })

export const calls = (
  response: Message | ReadonlyArray<ContentBlock>
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    const value: unknown = response
    if (Array.isArray(value)) return yield* collect(value, (each, index) => block(each, at("", index)))
    if (!isRecord(value)) return yield* read.fail("", "a message or its content array", value)
    if (value.role !== undefined && value.role !== "assistant") {
      return yield* read.fail("role", "\"assistant\"", value.role)
    }
    if (!Array.isArray(value.content)) {
      return yield* read.fail("content", "an array of content blocks (a message, or its content array)", value.content)
    }
    return yield* collect(value.content, (each, index) => block(each, at("content", index)))
  })

type ResultBlock = TextBlock | ImageBlockParam | DocumentBlockParam

const toolResult = (call: ToolCall, outcome: Outcome): ToolResultBlockParam =>
  foldOutcome(
    outcome,
    (text): ToolResultBlockParam => ({ type: "tool_result", tool_use_id: call.id, content: text, is_error: true }),
    (pieces): ToolResultBlockParam => {
      const blocks: Array<ResultBlock> = []
      let media = false
      const text = (text: string) => blocks.push({ type: "text", text })
      for (const piece of pieces) {
        switch (piece._tag) {
          case "Text":
            text(piece.text)
            break
          case "Document":
            media = true
            blocks.push({
              type: "document",
              source: { type: "text", media_type: "text/plain", data: piece.text },
              title: piece.uri
            })
            break
          case "Image":
            if (IMAGE_TYPES.has(piece.mimeType)) {
              media = true
              blocks.push({
                type: "image",
                source: { type: "base64", media_type: piece.mimeType as ImageType, data: piece.data }
              })
            } else {
              text(notShown(piece, "Anthropic takes jpeg, png, gif or webp images"))
            }
            break
          case "Audio":
            text(notShown(piece, "an Anthropic tool result cannot carry audio"))
            break
          case "File":
            if (piece.mimeType === PDF) {
              media = true
              blocks.push({
                type: "document",
                source: { type: "base64", media_type: PDF, data: piece.data },
                title: piece.uri
              })
            } else {
              text(notShown(piece, "Anthropic takes PDF documents"))
            }
            break
        }
      }
      if (media) {
        const content = blocks.filter((block) => block.type !== "text" || block.text !== "")
        return { type: "tool_result", tool_use_id: call.id, content }
      }
      const joined = blocks.map((block) => (block as TextBlock).text).join("\n")
      return joined === ""
        ? { type: "tool_result", tool_use_id: call.id }
        : { type: "tool_result", tool_use_id: call.id, content: joined }
    }
  )

export const results = (
  calls: ReadonlyArray<ToolCall>,
  outcomes: ReadonlyArray<Outcome>
): ReadonlyArray<MessageParam> => {
  const content = paired(calls, outcomes).map(([call, outcome]) => toolResult(call, outcome))
  return content.length === 0 ? [] : [{ role: "user", content }]
}
