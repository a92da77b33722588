/**
 * The one mapping between our results and MCP's `CallToolResult`, used by both `McpServer` (out) and `McpClient`
 * (in), so the two sides cannot drift apart: a test round-trips every content type through both.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Recorder from "../Recorder.js"
import type { ToolError } from "../ToolError.js"
import { ToolFailure } from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"

/**
 * The `_meta` key under which a result's recordable `details` crosses MCP. The record's data travels as a JSON
 * *string*: MCP SDKs decode `_meta` into plain maps, which may reorder keys and round integers past 2^53.
 */
export const RECORDS_META_KEY = "dev.effect-agent-tools/records"

/** What the model reads when a remote tool failed without saying anything. */
export const EMPTY_FAILURE_MESSAGE = "tool call failed"

/**
 * The prefixes other MCP peers put before an error's text, peeled so the model reads `Error: ` once: a tool that
 * writes its own `Error: ` into an `isError` result, and a server on the SDK's 1.x line, whose JSON-RPC error
 * messages start `MCP error <code>: ` (a 1.x client then added a second one).
 */
const ERROR_PREFIX = /^(?:Error: |MCP error -?\d+: )+/

/** An error text from another MCP peer without the prefixes it carried (see {@link ERROR_PREFIX}). */
export const withoutErrorPrefix = (text: string): string => {
  const peeled = text.replace(ERROR_PREFIX, "")
  return peeled === "" ? text : peeled
}

/** MCP's `CallToolResult`, as far as we read and write it. */
export interface CallToolResult {
  readonly content: ReadonlyArray<unknown>
  readonly structuredContent?: Record<string, unknown> | undefined
  readonly isError?: boolean | undefined
  readonly _meta?: Record<string, unknown> | undefined
  readonly [key: string]: unknown
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * An outcome as an MCP result. Errors are `isError` results whose text is the message *without* `Error: `, so the
 * prefix is still applied once, at the far end's model boundary. `structuredContent` is sent when the tool
 * declares an output schema and the value is an object.
 */
export const toCallToolResult = (
  outcome: Either.Either<ToolResult.ToolResult, ToolError>,
  options: { readonly structured: boolean }
): CallToolResult => {
  if (Either.isLeft(outcome)) {
    return { content: [{ type: "text", text: outcome.left.message }], isError: true }
  }
  const result = outcome.right
  const out: { -readonly [K in keyof CallToolResult]: CallToolResult[K] } = { content: [...result.content] }
  if (options.structured && isObject(result.structured)) out.structuredContent = result.structured
  if (Recorder.isRecordable(result.details)) {
    const record = result.details
    let data: string
    try {
      data = JSON.stringify(record.data) ?? "null"
    } catch (error) {
      // the side effect has happened: serve the output, with the reason in the record's place
      data = JSON.stringify({ error: `the record could not be encoded: ${String(error)}` })
    }
    out._meta = { [RECORDS_META_KEY]: [{ namespace: record.namespace, data }] }
  }
  return out
}

/** The records our own server put in a result's `_meta`, decoded; anything malformed is skipped. */
export const recordsOf = (meta: unknown): ReadonlyArray<Recorder.Record> => {
  if (!isObject(meta)) return []
  const entries = meta[RECORDS_META_KEY]
  if (!Array.isArray(entries)) return []
  const out: Array<Recorder.Record> = []
  for (const entry of entries) {
    if (!isObject(entry) || typeof entry.namespace !== "string" || typeof entry.data !== "string") continue
    try {
      out.push(new Recorder.Record({ namespace: entry.namespace, data: JSON.parse(entry.data) }))
    } catch {
      // a record that is not JSON is not ours
    }
  }
  return out
}

/**
 * An MCP result as an outcome of ours: `isError` becomes a `ToolFailure` whose message is the joined text without
 * the `Error: ` a tool may have written before it (or {@link EMPTY_FAILURE_MESSAGE}); content parts are kept as
 * they are (every MCP content type is one of ours); `structuredContent` becomes `structured`; our own record in
 * `_meta` becomes `details`.
 */
export const fromCallToolResult = (
  tool: string,
  result: CallToolResult
): Either.Either<ToolResult.ToolResult, ToolError> => {
  const content = (Array.isArray(result.content) ? result.content : []) as ReadonlyArray<ToolResult.Content>
  if (result.isError === true) {
    const text = content.filter((part) => part.type === "text").map((part) => (part as { text: string }).text)
      .join("\n")
    return Either.left(
      new ToolFailure({ tool, message: text === "" ? EMPTY_FAILURE_MESSAGE : withoutErrorPrefix(text), error: result })
    )
  }
  const records = recordsOf(result._meta)
  return Either.right(ToolResult.make({
    content,
    structured: result.structuredContent,
    details: records.length === 0 ? undefined : records[0]
  }))
}
