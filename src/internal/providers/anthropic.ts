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
import { foldOutcome, paired, PDF, walk } from "./content.js"
import { listCalls, reader } from "./shape.js"

const read = reader("anthropic")

type ImageType = Extract<ImageBlockParam["source"], { type: "base64" }>["media_type"]

const IMAGE_TYPES: ReadonlySet<string> = new Set<ImageType>(["image/jpeg", "image/png", "image/gif", "image/webp"])

export const calls: (
  response: Message | ReadonlyArray<ContentBlock>
) => Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> = listCalls(read, {
  whole: "a message",
  field: "content",
  item: "content block",
  type: "tool_use",
  id: "id",
  arguments: "input",
  argumentsExpected: "the arguments object",
  check: (message) =>
    message.role === undefined || message.role === "assistant"
      ? Either.void
      : read.fail("role", "\"assistant\"", message.role)
})

type ResultBlock = TextBlock | ImageBlockParam | DocumentBlockParam

const toolResult = (call: ToolCall, outcome: Outcome): ToolResultBlockParam =>
  foldOutcome(
    outcome,
    (text): ToolResultBlockParam => ({ type: "tool_result", tool_use_id: call.id, content: text, is_error: true }),
    (pieces): ToolResultBlockParam => {
      const blocks: Array<ResultBlock> = []
      let media = false
      walk(pieces, (text) => blocks.push({ type: "text", text }), {
        document: (piece) => {
          media = true
          blocks.push({
            type: "document",
            source: { type: "text", media_type: "text/plain", data: piece.text },
            title: piece.uri
          })
        },
        media: (piece) => {
          switch (piece._tag) {
            case "Image":
              if (!IMAGE_TYPES.has(piece.mimeType)) return "Anthropic takes jpeg, png, gif or webp images"
              blocks.push({
                type: "image",
                source: { type: "base64", media_type: piece.mimeType as ImageType, data: piece.data }
              })
              media = true
              return true
            case "Audio":
              return "an Anthropic tool result cannot carry audio"
            case "File":
              if (piece.mimeType !== PDF) return "Anthropic takes PDF documents"
              blocks.push({
                type: "document",
                source: { type: "base64", media_type: PDF, data: piece.data },
                title: piece.uri
              })
              media = true
              return true
          }
        }
      })
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
