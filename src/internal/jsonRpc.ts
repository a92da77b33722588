/**
 * Our check of every message a client sends the MCP server, before the SDK sees it: what is not a JSON-RPC
 * message, or not the MCP shape the server can serve, is answered at once with a JSON-RPC error of one line,
 * instead of being dropped by the SDK's schema (which answers nothing) or failing in a handler with a zod dump
 * (`-32603`, where the client sent bad params).
 *
 * The rules (JSON-RPC 2.0, and MCP 2025-11-25 on top of it):
 * - a batch (an array) is `-32600`: MCP removed batches in 2025-06-18, and no client of the current revision
 *   sends one;
 * - not an object, `jsonrpc` other than `"2.0"`, a `method` that is not a string, an `id` that is not a string or
 *   an integer, or a member JSON-RPC does not define: `-32600`, with the request's id when it has a valid one;
 * - `params` that are not an object, `_meta` that is not an object, a `progressToken` that is neither a string nor
 *   an integer: `-32602`;
 * - the params of the methods this server answers on the 2025 era (`initialize`, `ping`, `logging/setLevel`,
 *   `tools/list`, `tools/call`) checked as MCP defines them (a 2026 request, whose `_meta` names its revision, is
 *   the SDK's to check): `-32602` saying which member is wrong (`params.name must be a
 *   string, got 123`). A tool call's `arguments` are not checked here: they are the model's, and answered as an
 *   `isError` result it can read;
 * - a notification or a response that is malformed is never answered (JSON-RPC answers neither): the caller logs
 *   it.
 *
 * What passes is exactly what the SDK's own message schema takes, so the SDK never refuses it again. Every text
 * echoes the client's input through `preview`, bounded.
 *
 * @internal
 */
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId } from "@modelcontextprotocol/server"
import { preview } from "./argumentProblems.js"

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const INVALID_PARAMS = -32602

/** A message refused, and what to answer: `id` undefined means nothing is answered (a notification, a response). */
export interface Refusal {
  readonly id: RequestId | null | undefined
  readonly code: number
  readonly message: string
}

export type Checked =
  | { readonly _tag: "Message"; readonly message: JSONRPCMessage }
  | { readonly _tag: "Refused"; readonly refusal: Refusal }

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const isRequestId = (u: unknown): u is RequestId => typeof u === "string" || Number.isSafeInteger(u)

/** Whether a member is there: one holding `undefined` is not (an in-memory transport passes such objects on). */
const has = (o: Record<string, unknown>, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(o, key) && o[key] !== undefined

const REQUEST_MEMBERS = new Set(["jsonrpc", "id", "method", "params"])
const RESULT_MEMBERS = new Set(["jsonrpc", "id", "result"])
const ERROR_MEMBERS = new Set(["jsonrpc", "id", "error"])

const RELATED_TASK = "io.modelcontextprotocol/related-task"

const LOG_LEVELS = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"])

/** A member name as a message quotes it: JSON, cut short. */
const member = (name: string): string => JSON.stringify(name.length <= 32 ? name : `${name.slice(0, 32)}…`)

const unexpectedMember = (value: Record<string, unknown>, allowed: ReadonlySet<string>): string | undefined => {
  for (const key of Object.keys(value)) if (!allowed.has(key) && value[key] !== undefined) return key
  return undefined
}

const refused = (id: RequestId | null | undefined, code: number, message: string): Checked => ({
  _tag: "Refused",
  refusal: { id, code, message }
})

/** `params.x must be ..., got ...`: what the check of one member found wrong, or undefined. */
type ParamsCheck = (params: Record<string, unknown>) => string | undefined

const got = (u: unknown): string => (u === undefined ? "nothing" : preview(u))

const string = (params: Record<string, unknown>, key: string, optional = false): string | undefined => {
  const value = params[key]
  if (optional && value === undefined) return undefined
  return typeof value === "string" ? undefined : `params.${key} must be a string, got ${got(value)}`
}

const object = (params: Record<string, unknown>, key: string): string | undefined =>
  isObject(params[key]) ? undefined : `params.${key} must be an object, got ${got(params[key])}`

/** The params of the requests this server answers, as MCP defines them (only what the SDK would refuse). */
const requestParams: ReadonlyMap<string, ParamsCheck> = new Map<string, ParamsCheck>([
  ["initialize", (params) => {
    const wrong = string(params, "protocolVersion") ?? object(params, "capabilities") ?? object(params, "clientInfo")
    if (wrong !== undefined) return wrong
    const info = params.clientInfo as Record<string, unknown>
    if (typeof info.name !== "string") return `params.clientInfo.name must be a string, got ${got(info.name)}`
    if (typeof info.version !== "string") return `params.clientInfo.version must be a string, got ${got(info.version)}`
    return undefined
  }],
  ["logging/setLevel", (params) =>
    typeof params.level === "string" && LOG_LEVELS.has(params.level)
      ? undefined
      : `params.level must be one of ${[...LOG_LEVELS].map((l) => JSON.stringify(l)).join(", ")}, got ${
        got(params.level)
      }`],
  ["tools/list", (params) => string(params, "cursor", true)],
  ["tools/call", (params) => string(params, "name")]
])

/** `params._meta`, shared by requests and notifications. */
const metaProblem = (params: Record<string, unknown>): string | undefined => {
  if (!has(params, "_meta")) return undefined
  const meta = params._meta
  if (!isObject(meta)) return `params._meta must be an object, got ${got(meta)}`
  if (has(meta, "progressToken") && !isRequestId(meta.progressToken)) {
    return `params._meta.progressToken must be a string or an integer, got ${got(meta.progressToken)}`
  }
  if (has(meta, RELATED_TASK)) {
    const task = meta[RELATED_TASK]
    if (!isObject(task) || typeof task.taskId !== "string") {
      return `params._meta[${JSON.stringify(RELATED_TASK)}] must be an object with a string taskId, got ${got(task)}`
    }
  }
  return undefined
}

/** Checks one parsed JSON value as a message from a client. */
export const check = (value: unknown): Checked => {
  if (Array.isArray(value)) {
    return refused(null, INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported; send one message")
  }
  if (!isObject(value)) {
    return refused(null, INVALID_REQUEST, `Invalid Request: a message is a JSON object, got ${got(value)}`)
  }
  const hasId = has(value, "id")
  const id = isRequestId(value.id) ? value.id : null
  if (value.jsonrpc !== "2.0") {
    return refused(hasId ? id : undefined, INVALID_REQUEST, `Invalid Request: "jsonrpc" must be "2.0"`)
  }
  if (has(value, "method")) {
    // a request (with an id) or a notification (without one); only a request is answered
    const answer = hasId ? id : undefined
    if (typeof value.method !== "string") {
      return refused(answer, INVALID_REQUEST, `Invalid Request: "method" must be a string, got ${got(value.method)}`)
    }
    if (hasId && id === null) {
      return refused(
        null,
        INVALID_REQUEST,
        `Invalid Request: "id" must be a string or an integer, got ${got(value.id)}`
      )
    }
    const extra = unexpectedMember(value, REQUEST_MEMBERS)
    if (extra !== undefined) return refused(answer, INVALID_REQUEST, `Invalid Request: unknown member ${member(extra)}`)
    const wrong = paramsProblem(value, hasId)
    if (wrong !== undefined) return refused(answer, INVALID_PARAMS, `Invalid params: ${wrong}`)
    return { _tag: "Message", message: value as unknown as JSONRPCMessage }
  }
  // a response to one of our requests: never answered, only taken when it has the shape we read
  if (!isRequestId(value.id)) return refused(undefined, INVALID_REQUEST, "Invalid response: no valid id")
  if (has(value, "result")) {
    if (unexpectedMember(value, RESULT_MEMBERS) !== undefined || !isObject(value.result)) {
      return refused(undefined, INVALID_REQUEST, "Invalid response: a result is an object and nothing else")
    }
    const meta = metaProblem(value.result)
    if (meta !== undefined) {
      return refused(undefined, INVALID_REQUEST, `Invalid response: ${meta.replace("params", "result")}`)
    }
    return { _tag: "Message", message: value as unknown as JSONRPCMessage }
  }
  const error = value.error
  if (
    unexpectedMember(value, ERROR_MEMBERS) !== undefined || !isObject(error) || !Number.isSafeInteger(error.code) ||
    typeof error.message !== "string"
  ) {
    return refused(
      undefined,
      INVALID_REQUEST,
      "Invalid response: neither a result nor an error with a code and a message"
    )
  }
  return { _tag: "Message", message: value as unknown as JSONRPCMessage }
}

const paramsProblem = (value: Record<string, unknown>, isRequest: boolean): string | undefined => {
  const method = value.method as string
  const own = isRequest ? requestParams.get(method) : undefined
  if (!has(value, "params")) return own?.({})
  const params = value.params
  if (!isObject(params)) return `params must be an object, got ${Array.isArray(params) ? "an array" : got(params)}`
  // a 2026 request (its `_meta` names its revision) is the SDK's to check: its methods and params differ
  return metaProblem(params) ?? (isModernClaim(params) ? undefined : own?.(params))
}

/** The key of the protocol revision in a 2026 request's `_meta` envelope. */
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

const isModernClaim = (params: Record<string, unknown>): boolean =>
  isObject(params._meta) && has(params._meta, PROTOCOL_VERSION_KEY)

/**
 * The JSON-RPC error response for a refusal that is answered. Without an id when the request had none that could
 * be read: MCP's schema makes the id of an error response optional for that case (JSON-RPC 2.0 wrote `null`, which
 * MCP's schema, and so the SDK's, refuses).
 */
export const errorResponse = (refusal: Refusal): JSONRPCMessage =>
  (refusal.id === null || refusal.id === undefined
    ? { jsonrpc: "2.0", error: { code: refusal.code, message: refusal.message } }
    : { jsonrpc: "2.0", id: refusal.id, error: { code: refusal.code, message: refusal.message } }) as JSONRPCMessage

/** A message that is not JSON: `-32700`, with no id (there is no knowing which request it was). */
export const parseError = (reason: string): Refusal => ({
  id: null,
  code: PARSE_ERROR,
  message: `Parse error: ${reason.length <= 200 ? reason : `${reason.slice(0, 200)}…`}`
})

// ---------------------------------------------------------------------------------------------------------------
// shapes of checked messages
// ---------------------------------------------------------------------------------------------------------------

/*
 * What a message is, by its shape, once it has passed {@link check}. The SDK's `isJSONRPCRequest` and its siblings
 * check it again with zod, which costs more than a no-op call through the server (benchmark row 4).
 */

export const isRequest = (message: JSONRPCMessage): message is JSONRPCRequest => "method" in message && "id" in message

export const isNotification = (message: JSONRPCMessage): message is JSONRPCNotification =>
  "method" in message && !("id" in message)

/** A response or an error response, with the id it answers when it has one. */
export const answeredId = (message: JSONRPCMessage): RequestId | undefined =>
  "method" in message ? undefined : (message as { readonly id?: RequestId }).id ?? undefined
