/**
 * A result's content as the provider modules see it, and the text they use where a provider has no slot for a part.
 *
 * Every provider module walks a result the same way: `pieces` turns MCP-shaped content into text, images, audio,
 * embedded files (a resource's blob) and embedded documents (a resource's text), in order; the module then places
 * each piece where its provider takes it, or writes the piece's text note. The texts below are what a model reads,
 * so they are the same for every provider: a resource as its uri and text, a link as its name and uri, a part the
 * provider cannot take as one bracketed line saying what it was and why it is not shown.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type { ToolError } from "../../ToolError.js"
import { toModelText } from "../../ToolError.js"
import type { Content, ToolResult } from "../../ToolResult.js"
import type { Outcome, ToolCall } from "../executor.js"

export type Piece =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Image"; readonly data: string; readonly mimeType: string }
  | { readonly _tag: "Audio"; readonly data: string; readonly mimeType: string }
  /** An embedded resource's base64 blob. */
  | { readonly _tag: "File"; readonly uri: string; readonly data: string; readonly mimeType: string | undefined }
  /** An embedded resource's text. */
  | { readonly _tag: "Document"; readonly uri: string; readonly text: string; readonly mimeType: string | undefined }

/** The pieces a provider may place as media: images, audio, embedded files. */
export type Media = Extract<Piece, { readonly _tag: "Image" | "Audio" | "File" }>

/** An embedded text resource. */
export type Document = Extract<Piece, { readonly _tag: "Document" }>

const mimeSuffix = (mimeType: string | undefined): string => (mimeType === undefined ? "" : ` (${mimeType})`)

/** A resource's text where the provider has no document slot: `[resource <uri> (<mime>)]` and the text. */
export const documentText = (
  piece: { readonly uri: string; readonly text: string; readonly mimeType?: string | undefined }
): string => `[resource ${piece.uri}${mimeSuffix(piece.mimeType)}]\n${piece.text}`

const linkText = (part: Extract<Content, { type: "resource_link" }>): string =>
  `[resource link ${part.name}: ${part.uri}${mimeSuffix(part.mimeType)}${
    part.description === undefined ? "" : ` - ${part.description}`
  }]`

const pieceOf = (part: Content): Piece => {
  switch (part.type) {
    case "text":
      return { _tag: "Text", text: part.text }
    case "image":
      return { _tag: "Image", data: part.data, mimeType: part.mimeType }
    case "audio":
      return { _tag: "Audio", data: part.data, mimeType: part.mimeType }
    case "resource": {
      const { blob, mimeType, text, uri } = part.resource
      if (text !== undefined) return { _tag: "Document", uri, text, mimeType }
      if (blob !== undefined) return { _tag: "File", uri, data: blob, mimeType }
      return { _tag: "Text", text: `[resource ${uri}${mimeSuffix(mimeType)}]` }
    }
    case "resource_link":
      return { _tag: "Text", text: linkText(part) }
  }
}

/** A result's content in order, as pieces. `details` and `structured` are not content and never appear. */
export const pieces = (result: ToolResult): ReadonlyArray<Piece> => result.content.map(pieceOf)

/** What a piece was, for a note: `image (image/svg+xml)`, `resource file:///a.zip (application/zip)`. */
const whatItWas = (piece: Media | Document): string => {
  switch (piece._tag) {
    case "Image":
      return `image${mimeSuffix(piece.mimeType)}`
    case "Audio":
      return `audio${mimeSuffix(piece.mimeType)}`
    default:
      return `resource ${piece.uri}${mimeSuffix(piece.mimeType)}`
  }
}

/** The note a model reads in place of a part its provider cannot take: `[audio (audio/ogg) not shown: <why>]`. */
export const notShown = (piece: Media | Document, why: string): string => `[${whatItWas(piece)} not shown: ${why}]`

/** `data:<mime>;base64,<data>`: how OpenAI takes inline media. */
export const dataUrl = (mimeType: string, data: string): string => `data:${mimeType};base64,${data}`

/** A file name for an embedded file: the last segment of its uri, or `file` when it has none. */
export const fileName = (uri: string): string => {
  const last = uri.replace(/[?#].*$/, "").split("/").filter((segment) => segment !== "").pop()
  return last === undefined || /^[a-z][a-z0-9+.-]*:$/i.test(last) ? "file" : last
}

/** The one file type every provider takes inline. */
export const PDF = "application/pdf"

/** The image types OpenAI takes (chat and Responses alike). */
export const OPENAI_IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])

/** The one outcome of each call, in call order. A length mismatch is a programmer error. */
export const paired = (
  calls: ReadonlyArray<ToolCall>,
  outcomes: ReadonlyArray<Outcome>
): ReadonlyArray<readonly [ToolCall, Outcome]> => {
  if (calls.length !== outcomes.length) {
    throw new Error(
      `results: ${calls.length} calls but ${outcomes.length} outcomes; pass the calls and what Executor.run gave for them`
    )
  }
  return calls.map((call, index) => [call, outcomes[index]] as const)
}

/**
 * Walks a result's pieces in order with one provider's decisions. `text` receives what the model reads as text:
 * text parts, resource links, embedded text resources (unless `document` places them) and the note of each
 * medium the provider cannot take. `media` is offered each image, audio and file, and answers `true` when it
 * placed it, or why it cannot (the note's reason).
 */
export const walk = (
  pieces: ReadonlyArray<Piece>,
  text: (text: string) => void,
  place: {
    readonly media: (piece: Media) => true | string
    readonly document?: ((piece: Document) => void) | undefined
  }
): void => {
  for (const piece of pieces) {
    switch (piece._tag) {
      case "Text":
        text(piece.text)
        break
      case "Document":
        if (place.document === undefined) text(documentText(piece))
        else place.document(piece)
        break
      default: {
        const placed = place.media(piece)
        if (placed !== true) text(notShown(piece, placed))
      }
    }
  }
}

/** One outcome as a provider writes it: from the error's one `Error: ...` line, or from the result's pieces. */
export const foldOutcome = <A>(
  outcome: Outcome,
  onError: (text: string, error: ToolError) => A,
  onResult: (pieces: ReadonlyArray<Piece>, result: ToolResult) => A
): A =>
  Either.isLeft(outcome)
    ? onError(toModelText(outcome.left), outcome.left)
    : onResult(pieces(outcome.right), outcome.right)
