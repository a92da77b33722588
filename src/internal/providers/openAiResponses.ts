/**
 * OpenAI Responses: reading `function_call` items out of a response, writing `function_call_output` items back.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type {
  FunctionCallOutput,
  InputFile,
  InputImage,
  InputText,
  OutputItem,
  Response
} from "../../OpenAiResponses.js"
import type { ProviderFormatError } from "../../ProviderFormat.js"
import type { Outcome, ToolCall } from "../executor.js"
import { dataUrl, documentText, fileName, foldOutcome, notShown, OPENAI_IMAGE_TYPES, paired, PDF } from "./content.js"
import { at, collect, isRecord, reader, stringAt } from "./shape.js"

const read = reader("openAiResponses")

const item = (value: unknown, path: string): Either.Either<ToolCall | undefined, ProviderFormatError> =>
  Either.gen(function*() {
    if (!isRecord(value)) return yield* read.fail(path, "an output item object", value)
    const type = yield* stringAt(read, at(path, "type"), value.type, "an item type")
    if (type !== "function_call") return undefined
    const id = yield* stringAt(read, at(path, "call_id"), value.call_id)
    const name = yield* stringAt(read, at(path, "name"), value.name)
    if (value.arguments === undefined) {
      return yield* read.fail(at(path, "arguments"), "the arguments' JSON text", value.arguments)
    }
    return { id, name, arguments: value.arguments }
  })

export const calls = (
  response: Response | ReadonlyArray<OutputItem>
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    const value: unknown = response
    if (Array.isArray(value)) return yield* collect(value, (each, index) => item(each, at("", index)))
    if (!isRecord(value)) return yield* read.fail("", "a response or its output array", value)
    if (!Array.isArray(value.output)) {
      return yield* read.fail("output", "an array of output items (a response, or its output array)", value.output)
    }
    return yield* collect(value.output, (each, index) => item(each, at("output", index)))
  })

type Part = InputText | InputImage | InputFile

const output = (outcome: Outcome): FunctionCallOutput["output"] =>
  foldOutcome(outcome, (text) => text, (pieces) => {
    const parts: Array<Part> = []
    let media = false
    const text = (text: string) => parts.push({ type: "input_text", text })
    for (const piece of pieces) {
      switch (piece._tag) {
        case "Text":
          text(piece.text)
          break
        case "Document":
          text(documentText(piece))
          break
        case "Image":
          if (OPENAI_IMAGE_TYPES.has(piece.mimeType)) {
            media = true
            parts.push({ type: "input_image", image_url: dataUrl(piece.mimeType, piece.data), detail: "auto" })
          } else {
            text(notShown(piece, "OpenAI takes png, jpeg, gif or webp images"))
          }
          break
        case "Audio":
          text(notShown(piece, "an OpenAI function call output cannot carry audio"))
          break
        case "File":
          if (piece.mimeType === PDF) {
            media = true
            parts.push({ type: "input_file", filename: fileName(piece.uri), file_data: dataUrl(PDF, piece.data) })
          } else {
            text(notShown(piece, "OpenAI takes PDF files"))
          }
          break
      }
    }
    if (media) return parts.filter((part) => part.type !== "input_text" || part.text !== "")
    return parts.map((part) => (part as InputText).text).join("\n")
  })

export const results = (
  calls: ReadonlyArray<ToolCall>,
  outcomes: ReadonlyArray<Outcome>
): ReadonlyArray<FunctionCallOutput> =>
  paired(calls, outcomes).map(([call, outcome]) => ({
    type: "function_call_output",
    call_id: call.id,
    output: output(outcome)
  }))
