/**
 * OpenAI Responses: reading `function_call` items out of a response, writing `function_call_output` items back.
 *
 * @internal
 */
import type * as Either from "effect/Either"
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
import { dataUrl, fileName, foldOutcome, OPENAI_IMAGE_TYPES, paired, PDF, walk } from "./content.js"
import { listCalls, reader } from "./shape.js"

const read = reader("openAiResponses")

export const calls: (
  response: Response | ReadonlyArray<OutputItem>
) => Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> = listCalls(read, {
  whole: "a response",
  field: "output",
  item: "output item",
  type: "function_call",
  id: "call_id",
  arguments: "arguments",
  argumentsExpected: "the arguments' JSON text"
})

type Part = InputText | InputImage | InputFile

const output = (outcome: Outcome): FunctionCallOutput["output"] =>
  foldOutcome(outcome, (text) => text, (pieces) => {
    const parts: Array<Part> = []
    let media = false
    walk(pieces, (text) => parts.push({ type: "input_text", text }), {
      media: (piece) => {
        switch (piece._tag) {
          case "Image":
            if (!OPENAI_IMAGE_TYPES.has(piece.mimeType)) return "OpenAI takes png, jpeg, gif or webp images"
            parts.push({ type: "input_image", image_url: dataUrl(piece.mimeType, piece.data), detail: "auto" })
            media = true
            return true
          case "Audio":
            return "an OpenAI function call output cannot carry audio"
          case "File":
            if (piece.mimeType !== PDF) return "OpenAI takes PDF files"
            parts.push({ type: "input_file", filename: fileName(piece.uri), file_data: dataUrl(PDF, piece.data) })
            media = true
            return true
        }
      }
    })
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
