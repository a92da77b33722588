/**
 * Gemini generateContent: reading `functionCall` parts out of a response, writing `functionResponse` parts back.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type { Blob, Candidate, Content, FunctionResponse, GenerateContentResponse, Part } from "../../Gemini.js"
import type { ProviderFormatError } from "../../ProviderFormat.js"
import type { Outcome, ToolCall } from "../executor.js"
import { foldOutcome, paired, PDF, walk } from "./content.js"
import { at, collect, isRecord, optionalArrayAt, reader, stringAt } from "./shape.js"

const read = reader("gemini")

/** The media a function response takes in its `parts` (Gemini's multimodal function responses). */
const MEDIA_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/webp", PDF])

/** The id of a call the model sent without one, from its position: `gemini-call-<candidate>-<part>`. */
export const mintedId = (candidate: number, part: number): string => `gemini-call-${candidate}-${part}`

const MINTED = /^gemini-call-\d+-\d+$/

const indexOf = (candidate: Readonly<Record<string, unknown>>): number =>
  typeof candidate.index === "number" && Number.isSafeInteger(candidate.index) && candidate.index >= 0
    ? candidate.index
    : 0

const contentCalls = (
  content: unknown,
  path: string,
  candidate: number
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    if (!isRecord(content)) return yield* read.fail(path, "a content object", content)
    if (content.role !== undefined && content.role !== "model") {
      return yield* read.fail(at(path, "role"), "\"model\" (the model's content)", content.role)
    }
    const base = at(path, "parts")
    const parts = yield* optionalArrayAt(read, base, content.parts, "an array of parts")
    return yield* collect(parts, (part, index) =>
      Either.gen(function*() {
        const partPath = at(base, index)
        if (!isRecord(part)) return yield* read.fail(partPath, "a part object", part)
        const call = part.functionCall
        if (call === undefined) return undefined
        const callPath = at(partPath, "functionCall")
        if (!isRecord(call)) return yield* read.fail(callPath, "a function call object", call)
        const name = yield* stringAt(read, at(callPath, "name"), call.name)
        const id = call.id === undefined
          ? mintedId(candidate, index)
          : yield* stringAt(read, at(callPath, "id"), call.id)
        // a function without parameters may come with no `args` at all
        return { id, name, arguments: call.args ?? {} }
      }))
  })

const candidateCalls = (
  candidate: unknown,
  path: string
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    if (!isRecord(candidate)) return yield* read.fail(path, "a candidate object", candidate)
    // a candidate stopped for safety, or for a malformed call, has no content
    if (candidate.content === undefined) return []
    return yield* contentCalls(candidate.content, at(path, "content"), indexOf(candidate))
  })

export const calls = (
  response: GenerateContentResponse | Candidate | Content
): Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> =>
  Either.gen(function*() {
    const value: unknown = response
    if (!isRecord(value)) return yield* read.fail("", "a response, a candidate or a content", value)
    if ("candidates" in value || "promptFeedback" in value || "usageMetadata" in value) {
      const candidates = yield* optionalArrayAt(read, "candidates", value.candidates, "an array of candidates")
      return candidates.length === 0 ? [] : yield* candidateCalls(candidates[0], "candidates[0]")
    }
    if ("parts" in value || "role" in value) return yield* contentCalls(value, "", 0)
    if ("content" in value || "finishReason" in value) return yield* candidateCalls(value, "")
    return yield* read.fail(
      "",
      "a response (with candidates), a candidate (with content) or a content (with parts)",
      value
    )
  })

const functionResponse = (call: ToolCall, outcome: Outcome): FunctionResponse => {
  const id = MINTED.test(call.id) ? {} : { id: call.id }
  return foldOutcome(
    outcome,
    (text): FunctionResponse => ({ ...id, name: call.name, response: { error: text } }),
    (pieces): FunctionResponse => {
      const texts: Array<string> = []
      const media: Array<{ readonly inlineData: Blob }> = []
      walk(pieces, (text) => texts.push(text), {
        media: (piece) => {
          if (piece._tag === "Audio") return "a Gemini function response cannot carry audio"
          if (piece.mimeType === undefined || !MEDIA_TYPES.has(piece.mimeType)) {
            return "a Gemini function response takes png, jpeg or webp images and PDF files"
          }
          media.push({ inlineData: { mimeType: piece.mimeType, data: piece.data } })
          return true
        }
      })
      const output = { ...id, name: call.name, response: { output: texts.join("\n") } }
      return media.length === 0 ? output : { ...output, parts: media }
    }
  )
}

export const results = (
  calls: ReadonlyArray<ToolCall>,
  outcomes: ReadonlyArray<Outcome>
): ReadonlyArray<Content & { readonly role: "user"; readonly parts: ReadonlyArray<Part> }> => {
  const parts = paired(calls, outcomes).map(([call, outcome]) => ({
    functionResponse: functionResponse(call, outcome)
  }))
  return parts.length === 0 ? [] : [{ role: "user", parts }]
}
