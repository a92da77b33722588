/**
 * What the MCP client takes from the MCP SDK (`@modelcontextprotocol/client`, the SDK's v2 line), in one place: the
 * SDK's `Client`, the Streamable HTTP transport, the message check, and the rules for reading the SDK's errors. The
 * rest of the client (`mcpClient.ts`) names none of the SDK's modules.
 *
 * @internal
 */
import {
  parseJSONRPCMessage,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  specTypeSchemas
} from "@modelcontextprotocol/client"
import type { CallToolResult, JSONRPCMessage, StandardSchemaV1 } from "@modelcontextprotocol/client"
import { reasonOf } from "./reason.js"

export {
  Client,
  IssuerMismatchError,
  LOG_LEVEL_META_KEY,
  OAuthClientFlowError,
  OAuthError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  serializeMessage,
  StreamableHTTPClientTransport,
  UnauthorizedError
} from "@modelcontextprotocol/client"
export type {
  ClientCapabilities,
  JSONRPCMessage,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  SamplingContent,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
  Tool,
  Transport,
  VersionNegotiationMode
} from "@modelcontextprotocol/client"

/** A parsed JSON value as a JSON-RPC message, or undefined when it is not one (the SDK's own schema decides). */
export const asMessage = (json: unknown): JSONRPCMessage | undefined => {
  try {
    return parseJSONRPCMessage(json)
  } catch {
    return undefined
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A text part with nothing else in it: what the schema gives back unchanged (it drops keys it does not know). */
const isPlainText = (part: unknown): boolean => {
  if (!isRecord(part) || part.type !== "text" || typeof part.text !== "string") return false
  let keys = 0
  for (const _ in part) keys++
  return keys === 2
}

/** The keys of other result families: a body with one of them and no `content` is not a call's empty success. */
const FOREIGN_KEYS = ["task", "inputRequests", "requestState"] as const

/** Problems as the SDK words them for a result that fails its schema: zod's issues as JSON, in one message. */
const refused = (issues: ReadonlyArray<unknown>): StandardSchemaV1.FailureResult => ({
  issues: [{ message: JSON.stringify(issues, null, 2) }]
})

const checkSlowly = (value: unknown): StandardSchemaV1.Result<CallToolResult> => {
  if (isRecord(value)) {
    const foreign = value.content === undefined ? FOREIGN_KEYS.find((key) => key in value) : undefined
    if (foreign !== undefined) {
      return refused([{
        code: "custom",
        message: `content is required when the body carries '${foreign}' — another result family cannot default ` +
          `into an empty tools/call success`,
        path: []
      }])
    }
    const structured = value.structuredContent
    if (structured !== undefined && !isRecord(structured)) {
      const received = structured === null ? "null" : Array.isArray(structured) ? "array" : typeof structured
      return refused([{
        expected: "record",
        code: "invalid_type",
        path: ["structuredContent"],
        message: `Invalid input: expected record, received ${received}`
      }])
    }
  }
  const checked = specTypeSchemas.CallToolResult["~standard"].validate(value)
  // the SDK's schemas have no asynchronous refinements
  if (checked instanceof Promise) throw new TypeError("the SDK's CallToolResult schema answered asynchronously")
  return checked.issues === undefined ? checked : refused(checked.issues)
}

/**
 * The check of a `tools/call` result in a session of the 2025 revisions, for `Client.request`: the rules the SDK's
 * `callTool` applies there (its schema of the era: a result without `content` has none, unless it carries another
 * family's keys; `structuredContent` is an object), with the same words when a result breaks them
 * ({@link malformedResult} reads them). A result of text parts and nothing the schema would change is taken as it
 * is: the SDK's own check of a call's result, run through its era table, cost a fifth of a call to a local server.
 */
export const legacyCallToolResult: StandardSchemaV1<unknown, CallToolResult> = {
  "~standard": {
    version: 1,
    vendor: "effect-agent-tools",
    validate: (value) => {
      if (
        isRecord(value) && value._meta === undefined && Array.isArray(value.content) &&
        (value.isError === undefined || typeof value.isError === "boolean") &&
        (value.structuredContent === undefined || isRecord(value.structuredContent)) &&
        value.content.every(isPlainText)
      ) return { value: value as CallToolResult }
      return checkSlowly(value)
    }
  }
}

/** The JSON-RPC error code of an error the SDK gives for a request, if it is one (a server's answer). */
export const errorCode = (error: unknown): number | undefined => error instanceof ProtocolError ? error.code : undefined

/** The `data` of an error the SDK gives for a request: a server's error data, or the SDK's own (a timeout's). */
export const errorData = (error: unknown): unknown =>
  error instanceof ProtocolError || error instanceof SdkError || error instanceof SdkHttpError ? error.data : undefined

/** The body an HTTP server sent with an error status, as the SDK keeps it (one line, at most 200 characters). */
export const httpErrorText = (error: unknown): string | undefined => {
  const text = (errorData(error) as { readonly text?: unknown } | undefined)?.text
  if (typeof text !== "string") return undefined
  const line = text.replace(/\s+/g, " ").trim()
  return line === "" ? undefined : line.length > 200 ? `${line.slice(0, 200)}…` : line
}

/** Whether the SDK gave up waiting for the answer (its own timeout, or the total cap). */
export const isTimeout = (error: unknown): boolean =>
  error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout

/** The message of a JSON-RPC error the server answered a request with, as the SDK gives it. */
export const errorMessage = (error: unknown): string | undefined =>
  error instanceof ProtocolError ? error.message : undefined

/** One problem as the SDK's schema library (zod) reports it. */
interface Issue {
  readonly code?: string | undefined
  readonly path?: ReadonlyArray<PropertyKey> | undefined
  readonly message?: string | undefined
  /** For a value that matches no branch of a union: each branch's problems. */
  readonly errors?: ReadonlyArray<ReadonlyArray<Issue>> | undefined
}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

/**
 * One problem in one line. Of a union's branches, the one with the fewest problems is the one the value was meant
 * to be (`{"type":"text","text":42}` is a text part whose `text` is wrong, not an image missing its `data`).
 */
const describeIssue = (issue: Issue, prefix: ReadonlyArray<PropertyKey>): string => {
  const path = [...prefix, ...(issue.path ?? [])]
  if (issue.code === "invalid_union" && issue.errors !== undefined && issue.errors.length > 0) {
    const branch = issue.errors.reduce((best, each) => (each.length < best.length ? each : best))
    if (branch.length > 0) return describeIssue(branch[0], path)
  }
  const what = (issue.message ?? "not what MCP's schema allows").replace(/^Invalid input: /, "")
  return path.length === 0 ? what : `${formatPath(path)}: ${what}`
}

/**
 * The problems zod found in a result, as the SDK reports them: its `SdkError` of code `InvalidResult` says
 * `Invalid result for <method>: ` followed by zod's issues as JSON.
 */
const issuesOf = (error: unknown): ReadonlyArray<unknown> | undefined => {
  if (!(error instanceof SdkError) || error.code !== SdkErrorCode.InvalidResult) return undefined
  const json = /^Invalid result for [^:]+: (\[[\s\S]*\])$/.exec(error.message)?.[1]
  if (json === undefined) return undefined
  try {
    const issues: unknown = JSON.parse(json)
    return Array.isArray(issues) ? issues : undefined
  } catch {
    return undefined
  }
}

/**
 * What is wrong with a result the server did send, when the SDK refused it for not following MCP's schema (a
 * text part whose `text` is a number): the first problem in one line (`content[0].text: expected string,
 * received number`), with the count of the others; `undefined` for any other error.
 */
export const malformedResult = (error: unknown): string | undefined => {
  const issues = issuesOf(error)
  if (issues === undefined || issues.length === 0) return undefined
  const first = reasonOf(describeIssue(issues[0] as Issue, []))
  return issues.length === 1
    ? first
    : `${first} (and ${issues.length - 1} more ${issues.length === 2 ? "problem" : "problems"})`
}
