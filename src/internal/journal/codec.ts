/**
 * How a journal turns values into the text it stores and back: JSON that survives a cycle or a `BigInt`, the
 * executor's outcome as a Schema, the idempotency key of a call and the fingerprint of a toolkit. Nothing here
 * touches a database or imports `Journal.ts`, so the public module can load it eagerly.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as ToolError from "../../ToolError.js"
import * as ToolResult from "../../ToolResult.js"

/**
 * JSON text of any value, never throwing: the plain `JSON.stringify` first (the common case, and the fast one);
 * when that fails (a cycle, a `BigInt`), again with a replacer that writes a `BigInt` as its decimal string and a
 * repeated object as `"[Circular]"`. An `Error` without its own `toJSON` keeps its `name` and `message` (plain
 * JSON would give `{}`). `undefined` and functions give `null` at the top.
 */
export const toJson = (value: unknown): string => {
  try {
    const text = JSON.stringify(value, errorReplacer)
    return text === undefined ? "null" : text
  } catch {
    const seen = new WeakSet<object>()
    const text = JSON.stringify(value, function(key, v: unknown) {
      if (typeof v === "bigint") return v.toString()
      const replaced = errorReplacer.call(this, key, v)
      if (typeof replaced === "object" && replaced !== null) {
        if (seen.has(replaced)) return "[Circular]"
        seen.add(replaced)
      }
      return replaced
    })
    return text === undefined ? "null" : text
  }
}

function errorReplacer(this: unknown, _key: string, value: unknown): unknown {
  if (value instanceof Error && !("toJSON" in value && typeof value.toJSON === "function")) {
    return { name: value.name, message: value.message }
  }
  return value
}

/** A `ToolResult` as JSON: its fields, without the prototype. */
export const ToolResultFromJson: Schema.Schema<
  ToolResult.ToolResult,
  {
    readonly content: ReadonlyArray<typeof ToolResult.Content.Encoded>
    readonly structured?: unknown
    readonly details?: unknown
    readonly terminate: boolean
  }
> = Schema.transform(
  Schema.Struct({
    content: Schema.Array(ToolResult.Content),
    structured: Schema.optional(Schema.Unknown),
    details: Schema.optional(Schema.Unknown),
    terminate: Schema.Boolean
  }),
  Schema.declare(ToolResult.isToolResult, { identifier: "ToolResult" }),
  {
    strict: true,
    decode: (fields) => ToolResult.make(fields),
    encode: (result) => ({
      content: result.content,
      ...(result.structured === undefined ? {} : { structured: result.structured }),
      ...(result.details === undefined ? {} : { details: result.details }),
      terminate: result.terminate
    })
  }
)

/**
 * A call's outcome as the journal stores it: `{ _tag: "Right", right: <result> }` or
 * `{ _tag: "Left", left: <ToolError> }`, the error in the union's own encoding (`ToolError.ToolError`), so every
 * member of the union (and any member added to it later) round-trips.
 */
export const Outcome = Schema.Either({ right: ToolResultFromJson, left: ToolError.ToolError })

/** What {@link Outcome} decodes to: the executor's `Either<ToolResult, ToolError>`. */
export type Outcome = Either.Either<ToolResult.ToolResult, ToolError.ToolError>

const encodeOutcomeEither = Schema.encodeEither(Outcome)

/**
 * The outcome as JSON text; fails when a part of it does not encode (a content part not in MCP's shapes). A result
 * of plain text parts and nothing else (most results) is written directly, as the schema would encode it: the
 * schema's encoder costs more than the rest of an outcome's write. A test holds the two to the same text.
 */
export const encodeOutcome = (outcome: Outcome): Either.Either<string, ParseResult.ParseError> => {
  if (Either.isRight(outcome)) {
    const plain = plainText(outcome.right)
    if (plain !== undefined) return Either.right(plain)
  }
  return Either.map(encodeOutcomeEither(outcome), toJson)
}

/** The JSON of a result with only `{ type: "text", text }` parts, no `structured`, no `details`; else undefined. */
const plainText = (result: ToolResult.ToolResult): string | undefined => {
  if (result.structured !== undefined || result.details !== undefined) return undefined
  let content = ""
  for (const part of result.content) {
    if (part.type !== "text" || typeof part.text !== "string") return undefined
    let keys = 0
    for (const _ in part) keys++
    if (keys !== 2) return undefined
    content += (content === "" ? "" : ",") + `{"type":"text","text":${JSON.stringify(part.text)}}`
  }
  return `{"_tag":"Right","right":{"content":[${content}],"terminate":${result.terminate ? "true" : "false"}}}`
}

/**
 * The idempotency key of one model call: a UUID (RFC 9562 version 8, name-based on SHA-256, the construction of
 * its appendix B.2) of the run id, the step and the call id. The same call gets the same key in every process and
 * on every re-run, without the key being stored first, and the key has the one shape (a UUID) that every API
 * taking idempotency keys accepts. The fields are length-prefixed, so `("a:b", 1, "c")` and `("a", 1, "b:c")`
 * cannot collide.
 */
export const idempotencyKey = (call: {
  readonly runId: string
  readonly step: number
  readonly callId: string
}): string => {
  const digest = createHash("sha256")
    .update(`effect-agent-tools/idempotency-key\n${call.runId.length}:${call.runId}\n${call.step}\n${call.callId}`)
    .digest()
  digest[6] = (digest[6] & 0x0f) | 0x80
  digest[8] = (digest[8] & 0x3f) | 0x80
  const hex = digest.subarray(0, 16).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The JSON text of a value with every object's keys sorted: two equal definitions give the same text. */
export const canonicalJson = (value: unknown): string => toJson(sortKeys(value))

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key])
  return out
}

/** SHA-256 of a text, in hex. */
export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/**
 * The fingerprint of a set of tool definitions: the hash of each tool's canonical definition, by name, and one
 * hash over them all. A resumed run compares both: the first says *which* tool changed.
 */
export const fingerprint = (
  definitions: ReadonlyArray<{ readonly name: string }>
): { readonly definitionsHash: string; readonly tools: Readonly<Record<string, string>> } => {
  const tools: Record<string, string> = {}
  for (const definition of definitions) tools[definition.name] = sha256(canonicalJson(definition))
  return { definitionsHash: sha256(canonicalJson(tools)), tools }
}
