/**
 * A remote MCP server's tools as local tools.
 *
 * `connect` starts a session with a server (a command we spawn, a Streamable HTTP endpoint, or any SDK
 * `Transport`) for as long as the current `Scope` lives. The server's tools become ordinary `Tool`s built with
 * `Tool.fromJsonSchema`: the model's arguments are checked locally against the server's `inputSchema` (a bad call
 * never leaves the process), every content type comes back as it was sent, `isError` is a `ToolFailure`, progress
 * notifications are `Progress` events, and interrupting a call cancels it on the server. The client keeps a
 * snapshot of the server's tools and refreshes it when the server says its list changed.
 *
 * What a server says about its tools is a claim: annotations are hints a policy may use to ask more, never alone to
 * allow a call; resource keys and sequential batches are the host's to set (see {@link Options}).
 *
 * Timers that measure a peer (the notification grace, the wait for a dead server's last words) run on real time,
 * never on Effect's `TestClock`: a server does not run on a test clock.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as LogLevel from "effect/LogLevel"
import type { Pipeable } from "effect/Pipeable"
import type * as Scope from "effect/Scope"
import * as Internal from "./internal/mcpClient.js"
import type { OAuthClientProvider, Transport as SdkTransport } from "./internal/mcpSdk.js"
import type * as McpAuth from "./McpAuth.js"
import type * as McpServer from "./McpServer.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * Marks a value as an {@link McpClient}.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const isClient = (u: unknown): u is McpClient.McpClient =>
 *   typeof u === "object" && u !== null && McpClient.TypeId in u
 * ```
 *
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Internal.TypeId

/**
 * The type of {@link TypeId}.
 *
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * A session with one MCP server, alive until the scope it was made in closes.
 *
 * - `tools` / `toolkit`: the current snapshot of the server's tools. A batch given a toolkit keeps the tools it
 *   started with, whatever the server lists meanwhile.
 * - `refresh`: lists the tools again now and gives the new toolkit (a failed listing keeps the old snapshot).
 * - `serverInfo`, `instructions`: what the server said about itself when the session started, so a host can tell
 *   two instances of one server apart and hand the instructions to the model.
 * - `protocolVersion`: the revision of MCP the session speaks: `2026-07-28` when the server answered
 *   `server/discover`, else the 2025 revision `initialize` settled on (see {@link Options}' `revision`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpClient, Toolkit } from "effect-agent-tools"
 *
 * // at the start of each turn: the tools as the server lists them now
 * const offer = (client: McpClient.McpClient) =>
 *   Effect.map(client.toolkit, (kit) => ({
 *     system: client.instructions ?? "",
 *     tools: Toolkit.definitions(kit, "anthropic")
 *   }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClient extends Pipeable {
  readonly [TypeId]: TypeId
  readonly serverInfo: ServerInfo
  readonly instructions: string | undefined
  readonly protocolVersion: string
  readonly tools: Effect.Effect<ReadonlyArray<Tool.Dynamic>>
  readonly toolkit: Effect.Effect<Toolkit.Toolkit<Tool.Dynamic>>
  readonly refresh: Effect.Effect<Toolkit.Toolkit<Tool.Dynamic>, McpClientError>
}

/**
 * The server's name and version from its `initialize` answer (or, in 2026-07-28, its `server/discover` answer,
 * where they are optional: empty strings when the server gives none).
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const label = (info: McpClient.ServerInfo) => `${info.title ?? info.name} ${info.version}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerInfo {
  readonly name: string
  readonly version: string
  readonly title?: string | undefined
}

/**
 * A server started as a child process speaking newline-delimited JSON-RPC on stdin/stdout (see {@link stdio}).
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const server: McpClient.StdioTransport = McpClient.stdio({ command: "uvx", args: ["mcp-server-git"] })
 * ```
 *
 * @since 0.1.0
 * @category transports
 */
export interface StdioTransport {
  readonly _tag: "StdioTransport"
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Added to the parent's environment; `undefined` removes a variable. */
  readonly env: Readonly<Record<string, string | undefined>> | undefined
  readonly cwd: string | undefined
  /** Between SIGTERM and SIGKILL when the scope closes. */
  readonly killGrace: Duration.DurationInput | undefined
}

/**
 * A server at a Streamable HTTP endpoint (see {@link http}).
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const server: McpClient.HttpTransport = McpClient.http("http://127.0.0.1:3000/mcp")
 * ```
 *
 * @since 0.1.0
 * @category transports
 */
export interface HttpTransport {
  readonly _tag: "HttpTransport"
  readonly url: URL
  readonly headers: Readonly<Record<string, string>> | undefined
  /** How to sign in when the server asks (see {@link http}). */
  readonly auth: McpAuth.OAuth | OAuthClientProvider | undefined
}

/**
 * How to reach a server: {@link stdio}, {@link http}, or any SDK `Transport` (in-memory in tests, WebSocket, ...).
 * The session owns it: closing the scope closes it.
 *
 * @example
 * ```ts
 * import { InMemoryTransport } from "@modelcontextprotocol/client"
 * import { McpClient } from "effect-agent-tools"
 *
 * const [clientSide] = InMemoryTransport.createLinkedPair()
 * const servers: ReadonlyArray<McpClient.Transport> = [
 *   McpClient.stdio({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }),
 *   McpClient.http("http://127.0.0.1:3000/mcp"),
 *   clientSide
 * ]
 * ```
 *
 * @since 0.1.0
 * @category transports
 */
export type Transport = StdioTransport | HttpTransport | SdkTransport

/**
 * Session options, all optional.
 *
 * - `prefix`: tools are named `prefix__name`, so two servers' `search` tools can sit in one toolkit.
 * - `resource`: resource keys per tool, as in `Tool.make` (a key, or a function of the arguments). MCP has no such
 *   field: the host sets them, since it sees every server it composes (two servers' `shell:session` need not be
 *   the same shell). A tool is named by its remote or its prefixed name; when both spellings appear, the later
 *   entry wins.
 * - `sequential`: tools whose presence makes a batch run one call at a time, named the same way.
 * - `timeout`: how long a call (or a listing) may go without an answer or a progress notification before it fails
 *   with `ToolTimeout`; progress resets it (default {@link DEFAULT_TIMEOUT}).
 * - `maxTotalTimeout`: the cap on a call however much progress it reports (default {@link DEFAULT_MAX_TOTAL_TIMEOUT}).
 * - `connectTimeout`: the cap on the `initialize` exchange, and on the whole first listing: every page, and the
 *   tools built from it (default {@link DEFAULT_CONNECT_TIMEOUT}). A later listing has `timeout` for all of it.
 * - `notificationGrace`: how long a call that saw no `tools/list_changed` waits for a late one before it returns
 *   (default {@link DEFAULT_NOTIFICATION_GRACE}; `0` disables the wait). Paid only with a server that has been seen
 *   to send its notification after the result of the call that made the change; never for tools the server marks
 *   read-only, nor for servers that do not advertise `tools.listChanged`.
 * - `maxResultBytes`: the largest result a call may bring back; a larger one is a `ToolFailure` saying so, never
 *   an out-of-memory (default {@link DEFAULT_MAX_RESULT_BYTES}). Over stdio a longer line is dropped as it arrives.
 * - `maxTools`: the most tools a listing may give (default {@link DEFAULT_MAX_TOOLS}); a server that lists more (or
 *   whose pages never end) fails the listing with `TooLarge`: `connect` fails, a refresh keeps the old tools.
 * - `permission`: an action (`"mcp"`, say) asked about through `Permission.Requester` before every call of this
 *   server's tools; the request carries the tool's annotations, hints a policy may use to ask more, never alone to
 *   allow. None by default: the calls run without asking, like any tool that declares no permission.
 * - `clientInfo`: the name and version this client gives in `initialize` (or with every 2026-07-28 request).
 * - `revision`: which revision of MCP to speak. `"auto"` (the default) asks the server with `server/discover`
 *   (2026-07-28) and falls back to `initialize` (the 2025 revisions) when the server does not know it; over stdio a
 *   server that does not answer the probe within {@link STDIO_PROBE_TIMEOUT}, or that exits on it, is started
 *   again and asked with `initialize`. `"legacy"` only ever sends `initialize`; `"2026-07-28"` only
 *   `server/discover`, and a server that does not speak it fails `connect`.
 * - `replay`: what calling a tool again is safe for, by remote or prefixed name, as the host states it
 *   (`Tool.Replay`; it becomes the tool's `replay`). Over Streamable HTTP a call whose connection broke before the
 *   server answered is sent once more when that is safe: the server marks the tool read-only or idempotent, or the
 *   host says `"safe"` here; any other such call fails saying it may have run.
 * - `sampling`: answers a server's requests for a completion by the host's model (`sampling/createMessage`; in
 *   2026-07-28, an `input_required` result that asks for one); without it the client does not offer sampling.
 * - `logLevel`: asks a server that declares `logging` to send its log messages at this level and above
 *   (`logging/setLevel`), and logs each one through Effect at the matching level (`debug` as Debug, `info` and
 *   `notice` as Info, `warning` as Warning, `error` as Error, `critical`, `alert` and `emergency` as Fatal),
 *   annotated with `mcp.server` (and `mcp.logger` when the server names one). Without it a server's log messages
 *   are not read.
 *
 * An `Elicitation.Elicitor` in the context of `connect` makes the client declare the `elicitation` capability
 * (forms and URLs) and answer a server's `elicitation/create` by asking it (in 2026-07-28, the questions of an
 * `input_required` result, after which the call is sent again with the answers); an accepted form gets the form's
 * defaults for the fields the answer leaves out (SEP-1034). See docs/elicitation.md.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = {
 *   prefix: "git",
 *   resource: { git_commit: "repo:main", git_status: "repo:main" },
 *   sequential: { git__git_reset: true },
 *   timeout: "2 minutes",
 *   permission: "mcp"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly prefix?: string | undefined
  readonly resource?: Readonly<Record<string, Tool.Resource<Record<string, unknown>>>> | undefined
  readonly sequential?: Readonly<Record<string, boolean>> | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly maxTotalTimeout?: Duration.DurationInput | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
  readonly notificationGrace?: Duration.DurationInput | undefined
  readonly maxResultBytes?: number | undefined
  readonly maxTools?: number | undefined
  readonly permission?: string | undefined
  readonly clientInfo?:
    | { readonly name: string; readonly version: string; readonly title?: string | undefined }
    | undefined
  readonly logLevel?: LogLevel.LogLevel | undefined
  readonly revision?: "auto" | "legacy" | "2026-07-28" | undefined
  readonly replay?: Readonly<Record<string, Tool.Replay>> | undefined
  readonly sampling?: Sampler | undefined
}

/**
 * The host's model answering a server's request for a completion (MCP's sampling): the request as
 * `McpServer.sample` sends it, the answer as it gets it back. A failure is answered to the server as an error whose
 * message is the failure's `message` (or says the request failed).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { McpClient } from "effect-agent-tools"
 *
 * // a host that answers every request with a fixed line (a real one asks its model)
 * const sampler: McpClient.Sampler = (request) =>
 *   Effect.succeed({
 *     role: "assistant",
 *     content: { type: "text", text: `${request.messages.length} messages read` },
 *     model: "canned-1"
 *   })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Sampler = (
  request: McpServer.SamplingRequest
) => Effect.Effect<McpServer.SamplingResult, { readonly message?: string | undefined }>

/**
 * Why a session could not start, a listing failed, or a call could not reach its server. A call fails with a
 * `ToolError` (a `ToolFailure` whose `error` is this value); `connect` and `refresh` fail with it directly.
 *
 * - `Spawn`: the command could not be started.
 * - `Initialize`: the server did not complete `initialize` (no answer in time, an error, an unsupported version).
 * - `Closed`: the server exited or the connection closed (the message says how, with the tail of a spawned
 *   server's stderr), or the session's scope closed.
 * - `Protocol`: the server wrote something that is not JSON-RPC where only JSON-RPC may go (its stdout), which
 *   ends the session; or it sent a result that does not follow MCP's schema (`the MCP server "x" sent a malformed
 *   tools/call result: content[0].text: expected string, received number`), which fails that request only.
 * - `TooLarge`: a message or result over `maxResultBytes`, or a listing of more than `maxTools` tools.
 * - `Request`: the server answered a request with an error, or it could not be sent.
 * - `Unauthorized`: the server asks for authorization and it could not be had: no `auth` was given, the user did
 *   not finish the browser step, or the authorization server refused or failed a check (an issuer that is not the
 *   expected one, a resource the server does not own). Its `cause` is the `McpAuth.McpAuthError` or the SDK's
 *   OAuth error.
 * - `Broken`: over Streamable HTTP, the connection of one request broke before the server answered it (the
 *   session goes on): the call was sent again if that is safe (see {@link Options}' `replay`), else it fails with
 *   this, saying it may have run.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpClient } from "effect-agent-tools"
 *
 * const program = Effect.scoped(
 *   McpClient.connect(McpClient.stdio({ command: "no-such-mcp-server" })).pipe(
 *     Effect.catchTag("McpClientError", (error) => Effect.logWarning(`${error.reason}: ${error.message}`))
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const McpClientError: typeof Internal.McpClientError = Internal.McpClientError

/**
 * @since 0.1.0
 * @category errors
 */
export type McpClientError = Internal.McpClientError

/**
 * How long a call waits for a late `tools/list_changed` by default: a server that sends it on a timer after the
 * change (the reference Go SDK waits about 10 ms) still gets its new tools offered on the model's next turn.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = { notificationGrace: McpClient.DEFAULT_NOTIFICATION_GRACE }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_NOTIFICATION_GRACE: Duration.DurationInput = Internal.DEFAULT_NOTIFICATION_GRACE

/**
 * How long a request may go without an answer or progress by default (the SDK's own default).
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = { timeout: McpClient.DEFAULT_TIMEOUT, maxTotalTimeout: "1 hour" }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT: Duration.DurationInput = Internal.DEFAULT_TIMEOUT

/**
 * The default cap on one call, progress or not.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = { maxTotalTimeout: McpClient.DEFAULT_MAX_TOTAL_TIMEOUT }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_TOTAL_TIMEOUT: Duration.DurationInput = Internal.DEFAULT_MAX_TOTAL_TIMEOUT

/**
 * The default cap on `initialize` and on each request of the first listing.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = { connectTimeout: McpClient.DEFAULT_CONNECT_TIMEOUT }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CONNECT_TIMEOUT: Duration.DurationInput = Internal.DEFAULT_CONNECT_TIMEOUT

/**
 * How long, over stdio, the client waits for an answer to `server/discover` before it asks with `initialize`
 * instead (with `revision: "auto"`): a server of the 2025 revisions may ignore a request it does not know.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { McpClient } from "effect-agent-tools"
 *
 * const probe = Duration.toMillis(Duration.decode(McpClient.STDIO_PROBE_TIMEOUT))
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const STDIO_PROBE_TIMEOUT: Duration.DurationInput = Internal.STDIO_PROBE_TIMEOUT

/**
 * The default size limit of one result, 16 MiB.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = { maxResultBytes: 4 * McpClient.DEFAULT_MAX_RESULT_BYTES }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_RESULT_BYTES: number = Internal.DEFAULT_MAX_RESULT_BYTES

/**
 * The most tools a listing may give by default, 1,000: more than any model is offered at once, and a bound on what
 * a server can make a host build.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const options: McpClient.Options = { maxTools: 2 * McpClient.DEFAULT_MAX_TOOLS }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_TOOLS: number = Internal.DEFAULT_MAX_TOOLS

/**
 * A server to spawn. It runs in a process group of its own: closing the scope closes its stdin, then sends
 * SIGTERM to the whole group (helpers it started included), then SIGKILL after `killGrace` (default 2 s). If it
 * exits or crashes, every call in flight fails at once with a `ToolFailure` that says how it ended and ends with
 * the last lines of its stderr; later calls fail at once the same way.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const everything = McpClient.stdio({
 *   command: "npx",
 *   args: ["-y", "@modelcontextprotocol/server-everything"],
 *   env: { NO_COLOR: "1" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category transports
 */
export const stdio = (options: {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly cwd?: string | undefined
  readonly killGrace?: Duration.DurationInput | undefined
}): StdioTransport => ({
  _tag: "StdioTransport",
  command: options.command,
  args: options.args ?? [],
  env: options.env,
  cwd: options.cwd,
  killGrace: options.killGrace
})

/**
 * A server at a Streamable HTTP endpoint (the SDK's `StreamableHTTPClientTransport`), with extra request headers
 * (a static `Authorization`, say) and how to sign in when the server asks (`auth`):
 * - an `McpAuth.OAuth` (`McpAuth.oauth(...)`): the whole OAuth flow MCP specifies, the browser step and the token
 *   store being the host's (see the `McpAuth` module);
 * - or any `OAuthClientProvider` of the MCP SDK, for flows without a browser step (the SDK's
 *   `ClientCredentialsProvider`, `PrivateKeyJwtProvider`, `CrossAppAccessProvider`); a provider that needs the
 *   browser fails `connect` with `Unauthorized`, since only an `McpAuth.OAuth` can finish that step here.
 *
 * Closing a 2025-era session sends the server a `DELETE` for it.
 *
 * @example
 * ```ts
 * import { McpClient } from "effect-agent-tools"
 *
 * const docs = McpClient.http("https://mcp.example.com/mcp", { headers: { Authorization: "Bearer <token>" } })
 * ```
 *
 * @since 0.1.0
 * @category transports
 */
export const http = (
  url: string | URL,
  options?: {
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly auth?: McpAuth.OAuth | OAuthClientProvider | undefined
  }
): HttpTransport => ({
  _tag: "HttpTransport",
  url: new URL(url),
  headers: options?.headers,
  auth: options?.auth
})

/**
 * Starts a session with a server for the life of the current scope: spawns or reaches it, runs `initialize`,
 * lists its tools, and from then on follows `tools/list_changed` in the background (several notifications, one
 * listing; listings one at a time; a failed one keeps the old snapshot and is logged). Closing the scope ends calls
 * still in flight at once (they fail, saying the client was closed), closes the transport and, for a spawned
 * server, ends its process group; the client then lists no tools (those taken before fail as calls in flight do).
 * Fails with {@link McpClientError} when the server cannot be started or does not complete `initialize` and the
 * first listing.
 *
 * A call that saw `tools/list_changed` while it ran returns only once the refreshed list is in place, so the loop's
 * next turn offers the new tools; with a server seen to announce its changes late, a call that saw none waits up to
 * `notificationGrace` for one (see {@link Options}).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Executor, McpClient, Toolkit } from "effect-agent-tools"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const everything = yield* McpClient.connect(
 *     McpClient.stdio({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }),
 *     { prefix: "every" }
 *   )
 *   const kit = yield* everything.toolkit
 *   console.log(Toolkit.names(kit)) // ["every__echo", "every__get-sum", ...]
 *   return yield* Executor.run(kit, [{ id: "1", name: "every__echo", arguments: "{\"message\":\"hi\"}" }])
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = (
  transport: Transport,
  options?: Options
): Effect.Effect<McpClient, McpClientError, Scope.Scope> => Internal.connect(transport, options ?? {})
