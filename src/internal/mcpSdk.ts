/**
 * What the MCP client takes from the MCP SDK, in one place: the SDK's `Client`, the Streamable HTTP transport, the
 * message schemas it registers handlers with, and the rules for reading the SDK's errors. The rest of the client
 * (`mcpClient.ts`) names none of the SDK's modules, so moving to the SDK's v2 packages
 * (`@modelcontextprotocol/client`) changes this file and the few types the public module re-exports.
 *
 * @internal
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { reasonOf } from "./reason.js"

export { Client } from "@modelcontextprotocol/sdk/client/index.js"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
export { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
export type { ClientCapabilities, JSONRPCMessage, Tool } from "@modelcontextprotocol/sdk/types.js"
export {
  ElicitRequestSchema,
  JSONRPCMessageSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"

/** The JSON-RPC error code of an error the SDK gives for a request, if it is one (a server's answer, a timeout). */
export const errorCode = (error: unknown): number | undefined => error instanceof McpError ? error.code : undefined

/** The `data` of a JSON-RPC error the SDK gives for a request. */
export const errorData = (error: unknown): unknown => error instanceof McpError ? error.data : undefined

/** Whether the SDK gave up waiting for the answer (its own timeout, or the total cap). */
export const isTimeout = (error: unknown): boolean => errorCode(error) === ErrorCode.RequestTimeout

/** The SDK's message of a JSON-RPC error, as it reads: `MCP error -32602: <the server's message>`. */
export const errorMessage = (error: unknown): string | undefined =>
  error instanceof McpError ? error.message : undefined

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
 * What is wrong with a result the server did send, when the SDK refused it for not following MCP's schema (a
 * text part whose `text` is a number): the first problem in one line (`content[0].text: expected string,
 * received number`), with the count of the others; `undefined` for any other error.
 */
export const malformedResult = (error: unknown): string | undefined => {
  if (!(error instanceof Error)) return undefined
  const issues = (error as { readonly issues?: unknown }).issues
  if (!Array.isArray(issues) || issues.length === 0) return undefined
  const first = reasonOf(describeIssue(issues[0] as Issue, []))
  return issues.length === 1
    ? first
    : `${first} (and ${issues.length - 1} more ${issues.length === 2 ? "problem" : "problems"})`
}
