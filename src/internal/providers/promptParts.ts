/**
 * An outcome as @effect/ai's `Prompt` carries it, as plain data: what `EffectAi.results` builds its parts from,
 * and what the agent loop appends to its transcript (the same parts in their encoded form), so both say the same
 * thing to the model. Imports nothing of @effect/ai: the loop must load without it.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import type { FilePart, Message, ToolResultPart, UserMessage } from "../../Agent.js"
import type { ToolResult } from "../../ToolResult.js"
import type { Outcome, ToolCall } from "../executor.js"
import { rendersStructured } from "../tool.js"
import { fileName, foldOutcome, OPENAI_IMAGE_TYPES, paired, PDF, walk } from "./content.js"

/**
 * What the model reads of a result, as the one JSON value a tool-result part holds: the structured value when the
 * content is exactly its JSON (a provider package sends the value as JSON text, so text would be encoded twice),
 * else the text.
 */
const resultValue = (result: ToolResult, text: string): unknown => rendersStructured(result) ? result.structured : text

/** What the model reads of an outcome, and the media that cannot be in a tool-result part. */
export interface Placed<F> {
  readonly isFailure: boolean
  readonly result: unknown
  readonly media: ReadonlyArray<F>
}

/** Makes one file part of media that follows the tool message. */
export type MakeFile<F> = (mediaType: string, data: Uint8Array, fileName: string | undefined) => F

/** Why a path without a user message for media shows none: @effect/ai resolves a call to one JSON value. */
const NO_MEDIA = "@effect/ai's own tool call resolution carries JSON only (EffectAi.results carries media)"

/**
 * An outcome as @effect/ai carries it. With `file`, images (png, jpeg, gif, webp) and PDF files become file parts
 * to follow in a user message; without it (no message can follow) every medium is a note.
 */
export const placed = <F>(outcome: Outcome, file: MakeFile<F> | undefined): Placed<F> =>
  foldOutcome(outcome, (text): Placed<F> => ({ isFailure: true, result: text, media: [] }), (pieces, result) => {
    const texts: Array<string> = []
    const media: Array<F> = []
    const place = (mediaType: string, data: string, name: string | undefined): true | string => {
      if (file === undefined) return NO_MEDIA
      const bytes = Encoding.decodeBase64(data)
      if (Either.isLeft(bytes)) return "its data is not base64"
      media.push(file(mediaType, bytes.right, name))
      return true
    }
    walk(pieces, (text) => texts.push(text), {
      media: (piece) => {
        switch (piece._tag) {
          case "Image":
            return OPENAI_IMAGE_TYPES.has(piece.mimeType)
              ? place(piece.mimeType, piece.data, undefined)
              : "@effect/ai's provider packages take png, jpeg, gif or webp images"
          case "Audio":
            return "@effect/ai's provider packages take images and PDF files"
          case "File":
            return piece.mimeType === PDF
              ? place(PDF, piece.data, fileName(piece.uri))
              : "@effect/ai's provider packages take PDF files"
        }
      }
    })
    const text = texts.join("\n")
    return { isFailure: false, result: resultValue(result, text), media }
  })

/** The label of a call's media in the user message that carries them. */
export const mediaLabel = (call: ToolCall): string => `[call ${call.id}]`

const plainFile: MakeFile<FilePart> = (mediaType, data, name) =>
  name === undefined ? { type: "file", mediaType, data } : { type: "file", mediaType, data, fileName: name }

/**
 * The messages carrying a batch's outcomes, as the transcript keeps them: one `tool` message of tool-result parts
 * in call order, then, when a result has images or PDF files, one `user` message of file parts, each call's after
 * a text part `[call <id>]`. `EffectAi.results` as data.
 */
export const toolMessages = (calls: ReadonlyArray<ToolCall>, outcomes: ReadonlyArray<Outcome>): Array<Message> => {
  const toolParts: Array<ToolResultPart> = []
  const userParts: Array<Exclude<UserMessage["content"], string>[number]> = []
  for (const [call, outcome] of paired(calls, outcomes)) {
    const { isFailure, media, result } = placed(outcome, plainFile)
    toolParts.push({ type: "tool-result", id: call.id, name: call.name, isFailure, result, providerExecuted: false })
    if (media.length > 0) userParts.push({ type: "text", text: mediaLabel(call) }, ...media)
  }
  const messages: Array<Message> = []
  if (toolParts.length > 0) messages.push({ role: "tool", content: toolParts })
  if (userParts.length > 0) messages.push({ role: "user", content: userParts })
  return messages
}
