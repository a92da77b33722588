/**
 * Tools served over MCP: the same toolkit a program runs with the executor, offered to Claude Desktop, Claude Code
 * or any MCP client, over stdio, Streamable HTTP, or any transport of the MCP SDK (its v2 line,
 * `@modelcontextprotocol/server`).
 *
 * Both protocol eras, from the same toolkit and the same tool code: a 2025-era client (`initialize`, up to
 * 2025-11-25) gets a session, and a call reaches it with requests of the server's own (`elicitation/create`,
 * `sampling/createMessage`, `roots/list`); a 2026-07-28 client gets the stateless protocol (no session, every
 * request carries its revision and capabilities in `_meta`, `server/discover`, `subscriptions/listen`, cache hints
 * on `tools/list`), and a call asks it through `input_required` results: see {@link HttpOptions} and
 * docs/mcp-server.md for how such a call resumes.
 *
 * What a client sees, each pinned by a test:
 * - `tools/list`: every tool with its `title`, description, `inputSchema` (the standard JSON Schema projection),
 *   `outputSchema` for tools with an object-shaped `success` schema, and `annotations` with every hint the tool
 *   states (see `ToolDefinition.mcp`);
 * - `tools/call`: arguments are checked before the handler runs; every failure (invalid arguments, an unknown
 *   tool, a typed failure, a defect, a timeout, a denial) is an `isError` result whose text is the `ToolError`
 *   message without `Error: `, so the model reads the prefix once, at its own boundary, and can correct itself;
 *   a success maps the `ToolResult` content one to one, with `structuredContent` when the tool has an output
 *   schema;
 * - `Tool.progress` becomes `notifications/progress` when the request carries a progress token;
 * - `notifications/cancelled` (and the connection closing, over HTTP the `POST` a call came on) interrupts the
 *   call's fiber, so its finalizers run, and no response is sent;
 * - every request gets an answer: one that is not a JSON-RPC message MCP takes (a batch, params that are not an
 *   object, a `_meta` or `progressToken` of the wrong type, a `tools/call` name that is not a string) is a JSON-RPC
 *   error of one line (`-32600`, `-32602`; `-32700` for a message that is not JSON), on every transport;
 * - calls from every session go through one scheduler with the executor's rules: calls sharing a resource key run
 *   one after another in the order they arrived, whichever client sent them; at most `maxParallel` run at once;
 * - a toolkit given as a `SubscriptionRef` is served as it changes, and every connected client gets
 *   `notifications/tools/list_changed`;
 * - in a call, the handler reaches its client: `Effect.log*` becomes `notifications/message` once the client set a
 *   level with `logging/setLevel` (the server declares `logging`; levels map Trace/Debug to `debug`, Info to
 *   `info`, Warning to `warning`, Error to `error`, Fatal to `critical`; `logger` is the tool's name; the host's
 *   own loggers keep logging); `Tool.elicit` becomes `elicitation/create` when the client declared the
 *   elicitation capability (else the host's `Elicitation.Elicitor` is asked, else the answer is `Cancel`);
 *   {@link sample} becomes `sampling/createMessage`. See docs/elicitation.md.
 *
 * @since 0.1.0
 */
import type { Transport } from "@modelcontextprotocol/server"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as InternalHttp from "./internal/mcpHttp.js"
import * as Rounds from "./internal/mcpRounds.js"
import * as Internal from "./internal/mcpServer.js"
import type * as Tool from "./Tool.js"
import type * as ToolResult from "./ToolResult.js"

/**
 * The toolkit to serve: a `Toolkit`, or a `SubscriptionRef` of one for a toolkit that changes while it is served
 * (the server then declares `tools.listChanged` and tells every client when the value changes). A call uses the
 * toolkit as it was when the call arrived.
 *
 * @example
 * ```ts
 * import { Effect, SubscriptionRef } from "effect"
 * import { Tool, Toolkit } from "effect-agent-tools"
 *
 * const Ping = Tool.make("ping", { description: "Answer pong", handler: () => Effect.succeed("pong") })
 * const fixed = Toolkit.make(Ping)
 * const changing = SubscriptionRef.make<Toolkit.Toolkit<Tool.Tool<string>>>(Toolkit.make(Ping))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Source<T extends Tool.Any> = Internal.Source<T>

/**
 * What the server says about itself in `initialize`: `name` and `version` (MCP's `serverInfo`), an optional human
 * `title`, and `instructions` a client may add to the model's context.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * const info: McpServer.Info = { name: "text-tools", version: "1.0.0", instructions: "Tools for editing text." }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Info extends Internal.Info {}

/**
 * Server options: {@link Info} plus
 * - the scheduler's `maxParallel` (handlers running at once, across every session; default
 *   `Executor.DEFAULT_MAX_PARALLEL`) and `timeout` (for tools that set none);
 * - for 2026-07-28 clients, whose calls ask through `input_required` results: `requestStateKey`, the key their
 *   `requestState` is signed with (HMAC-SHA-256, at least 32 bytes; default: one made when the server starts, so
 *   give every replica behind a load balancer the same one); `requestStateTtl`, how long a state is good for and a
 *   parked call waits for its answers (default {@link DEFAULT_REQUEST_STATE_TTL}); `maxParkedCalls`, how many calls
 *   may wait at once (default {@link DEFAULT_MAX_PARKED_CALLS}; past it the oldest ends); `instance`, the name this
 *   process goes by in the state of the calls it parks (`requestState` starts `p.<instance>.`; 1 to 64 letters,
 *   digits, `_` or `-`; default a random one), for a load balancer to route their retries by. Each is checked when
 *   the server starts ({@link McpServerError} with `reason: "Options"`).
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * const options: McpServer.Options = {
 *   name: "text-tools",
 *   version: "1.0.0",
 *   maxParallel: 4,
 *   timeout: "30 seconds",
 *   requestStateKey: "a secret of at least 32 bytes, shared by the replicas",
 *   instance: "replica-1"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Internal.Options {}

/**
 * Options of {@link stdio}: {@link Options}, the streams to use instead of the process's (`stdin`, `stdout`) and
 * `maxMessageBytes`, the largest message accepted (default {@link DEFAULT_MAX_MESSAGE_BYTES}; a larger one ends
 * the connection, since a line-delimited stream cannot skip to the next message safely).
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * const options: McpServer.StdioOptions = { name: "text-tools", version: "1.0.0", maxMessageBytes: 32 * 1024 * 1024 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioOptions extends Internal.StdioOptions {}

/**
 * Options of {@link http}:
 * - `port` (0 picks a free one), `host` (default {@link DEFAULT_HOST}: loopback only), `path` (default
 *   {@link DEFAULT_PATH});
 * - `stateless`: no sessions for 2025-era clients either; every POST is answered on its own (for replicas behind a
 *   load balancer); `GET` and `DELETE` are then `405`, and a request that is dropped interrupts its calls. A
 *   2026-07-28 client is always served this way (its revision has no sessions), whatever `stateless` says;
 * - `allowedHosts`: hostnames accepted in `Host` (the port is ignored). Default: `localhost`, `127.0.0.1`, `::1`
 *   and the bound address when bound to loopback, the bound host when bound to another address, anything when
 *   bound to a wildcard (`0.0.0.0`, `::`). Anything else is refused with `403` (DNS rebinding protection);
 * - `allowedOrigins`: origins (`http://localhost:5173`) accepted in `Origin` when a browser sends one. Default:
 *   origins on an allowed host; when hosts are not checked, only the ones listed;
 * - `maxMessageBytes`: the largest request body (default {@link DEFAULT_MAX_MESSAGE_BYTES}); a larger one is
 *   refused with `413` and the session goes on;
 * - `maxSessions` (default {@link DEFAULT_MAX_SESSIONS}): past it, a new session takes the place of the least
 *   recently used idle one (no request being answered, no stream open: a client that has gone, typically), whose
 *   id is then answered `404`; when every session is in use, `initialize` is refused with `503`;
 * - `sessionIdleTimeout` (default {@link DEFAULT_SESSION_IDLE_TIMEOUT}; `Duration.infinity` for never): a session
 *   idle that long ends, and its id is answered `404`, which tells a client to initialize again. A client holding
 *   its `GET` stream open is never idle;
 * - `maxBufferedBytes` (default {@link DEFAULT_MAX_BUFFERED_BYTES}): what one session (or one stateless request)
 *   may hold in answers its client has not read; past it, the stream holding the most is ended as if its client
 *   had left.
 *
 * Every number is checked when the server starts: a port outside 0-65535, or a count that is not a whole number
 * above 0, fails with an {@link McpServerError} whose `reason` is `"Options"`.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * const options: McpServer.HttpOptions = {
 *   name: "text-tools",
 *   version: "1.0.0",
 *   port: 3000,
 *   maxSessions: 100,
 *   sessionIdleTimeout: "10 minutes"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpOptions extends InternalHttp.HttpOptions {}

/**
 * A running HTTP server: `url` is the full endpoint URL (`http://127.0.0.1:PORT/mcp`), the port being the one
 * actually bound.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpServer, Toolkit } from "effect-agent-tools"
 *
 * const program = Effect.scoped(
 *   Effect.map(McpServer.http(Toolkit.make(), { name: "empty", version: "1.0.0", port: 0 }), (server) => server.url)
 * )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpServer extends InternalHttp.HttpServer {}

/**
 * The client as it introduced itself in `initialize`.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * const claude: McpServer.ClientInfo = { name: "claude-ai", version: "0.1.0" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientInfo extends Internal.ClientInfo {}

/**
 * The MCP session a call came in: `id` (the `Mcp-Session-Id` over HTTP; one id per connection on stdio and other
 * transports) and the client's `clientInfo` (none if the client never sent `initialize`). For keying per-client
 * state in a handler.
 *
 * @example
 * ```ts
 * import { Option } from "effect"
 * import type { McpServer } from "effect-agent-tools"
 *
 * const label = (session: McpServer.Session) =>
 *   `${session.id} (${Option.match(session.clientInfo, { onNone: () => "unknown", onSome: (info) => info.name })})`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Session extends Internal.Session {}

/**
 * Serving could not start. `reason`: `"Options"`, an option is out of range (a port that is not 0-65535, a
 * `requestStateKey` under 32 bytes); `"Listen"`, the HTTP server could not listen (the port is taken, the host is not an address of this
 * machine); `"Transport"`, the transport failed to start. `message` says which and why, in one line.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpServer, Toolkit } from "effect-agent-tools"
 *
 * const program = McpServer.http(Toolkit.make(), { name: "tools", version: "1.0.0", port: 3000 }).pipe(
 *   Effect.catchTag("McpServerError", (error) => Effect.logError(error.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const McpServerError: typeof Internal.McpServerError = Internal.McpServerError

/**
 * The type of {@link McpServerError} values, for signatures.
 *
 * @since 0.1.0
 * @category errors
 */
export type McpServerError = Internal.McpServerError

/**
 * The address {@link http} binds by default: loopback only, so nothing off this machine reaches the tools.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(McpServer.DEFAULT_HOST) // "127.0.0.1"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_HOST: string = InternalHttp.DEFAULT_HOST

/**
 * The endpoint path {@link http} serves by default.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(McpServer.DEFAULT_PATH) // "/mcp"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_PATH: string = InternalHttp.DEFAULT_PATH

/**
 * The largest message accepted by default, on stdio and over HTTP: 8 MiB, room for a few megabytes of arguments
 * (a file to write) without letting one request take the server's memory.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(McpServer.DEFAULT_MAX_MESSAGE_BYTES) // 8388608
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_MESSAGE_BYTES: number = Internal.DEFAULT_MAX_MESSAGE_BYTES

/**
 * The most sessions {@link http} keeps by default: an idle session holds about 8 kB, so a full table holds about
 * 8 MB, whatever clients do.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(McpServer.DEFAULT_MAX_SESSIONS) // 1000
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_SESSIONS: number = InternalHttp.DEFAULT_MAX_SESSIONS

/**
 * How long a session of {@link http} may stay idle by default (no request being answered, no stream open)
 * before it ends: 30 minutes.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(Duration.format(McpServer.DEFAULT_SESSION_IDLE_TIMEOUT)) // 30m
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_SESSION_IDLE_TIMEOUT: Duration.Duration = InternalHttp.DEFAULT_SESSION_IDLE_TIMEOUT

/**
 * What one session of {@link http} may hold by default in answers its client has not read: 16 MiB, twice the
 * largest message, so a client that reads is never near it.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(McpServer.DEFAULT_MAX_BUFFERED_BYTES) // 16777216
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_BUFFERED_BYTES: number = InternalHttp.DEFAULT_MAX_BUFFERED_BYTES

/**
 * How long a 2026 call's `requestState` is good for by default, and so how long a parked call waits for its
 * answers: 10 minutes, time for a person to read a question and answer it.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(Duration.format(McpServer.DEFAULT_REQUEST_STATE_TTL)) // 10m
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_REQUEST_STATE_TTL: Duration.Duration = Duration.millis(Rounds.DEFAULT_REQUEST_STATE_TTL_MILLIS)

/**
 * How many 2026 calls may wait, parked, for their answers by default: 1000. Past it, the one that has waited
 * longest ends (interrupted), and its state is refused.
 *
 * @example
 * ```ts
 * import { McpServer } from "effect-agent-tools"
 *
 * console.log(McpServer.DEFAULT_MAX_PARKED_CALLS) // 1000
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_PARKED_CALLS: number = Rounds.DEFAULT_MAX_PARKED_CALLS

/**
 * The MCP session of the call the current fiber serves; none outside a call served over MCP, for a stateless
 * HTTP request, and for a 2026-07-28 client (neither belongs to a session). Needs nothing in `R`, like `Tool.currentCall`.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { McpServer, Tool } from "effect-agent-tools"
 *
 * const counts = new Map<string, number>()
 *
 * const Count = Tool.make("count", {
 *   description: "Count the calls this client made",
 *   handler: () =>
 *     Effect.map(McpServer.session, (session) => {
 *       const id = Option.match(session, { onNone: () => "local", onSome: (s) => s.id })
 *       const n = (counts.get(id) ?? 0) + 1
 *       counts.set(id, n)
 *       return `call ${n} from ${id}`
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category in a call
 */
export const session: Effect.Effect<Option.Option<Session>> = Internal.session

/**
 * Serves a toolkit on any SDK `Transport` (in-memory, WebSocket, your own) until the scope closes; closing it
 * interrupts the calls in flight (their finalizers run) and closes the transport. The transport is one session;
 * when it closes from the other side, its calls are interrupted.
 *
 * @example
 * ```ts
 * import { Client, InMemoryTransport } from "@modelcontextprotocol/client"
 * import { Effect, Schema } from "effect"
 * import { McpServer, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
 *   yield* McpServer.serve(Toolkit.make(Upper), { name: "text-tools", version: "1.0.0" }, serverSide)
 *   const client = new Client({ name: "test", version: "1.0.0" })
 *   yield* Effect.promise(() => client.connect(clientSide))
 *   return yield* Effect.promise(() => client.callTool({ name: "upper", arguments: { text: "hi" } }))
 *   // { content: [{ type: "text", text: "HI" }] }
 * }))
 * ```
 *
 * @since 0.1.0
 * @category serving
 */
export const serve: <T extends Tool.Any>(
  toolkit: Source<T>,
  options: Options,
  transport: Transport
) => Effect.Effect<void, McpServerError, Scope.Scope | Tool.Requirements<T>> = Internal.serve

/**
 * Serves a toolkit on stdin/stdout, the way MCP clients run local servers, until stdin ends; it then answers every
 * request it has read (finishing the calls in flight) and returns. Interrupting it interrupts the calls. Stdout
 * carries only the protocol: Effect's loggers and `Console` write to stderr while it runs (a plain `console.log`
 * in a handler would still write to stdout and break the protocol: use `Effect.log`).
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect, Schema } from "effect"
 * import { McpServer, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * NodeRuntime.runMain(McpServer.stdio(Toolkit.make(Upper), { name: "text-tools", version: "1.0.0" }))
 * ```
 *
 * @since 0.1.0
 * @category serving
 */
export const stdio: <T extends Tool.Any>(
  toolkit: Source<T>,
  options: StdioOptions
) => Effect.Effect<void, McpServerError, Tool.Requirements<T>> = Internal.stdio

/**
 * Serves a toolkit over Streamable HTTP until the scope closes, on `node:http` with a transport of our own in front
 * of the SDK's `Server`: sessions by `Mcp-Session-Id` (`DELETE` ends one and interrupts its calls), `202` for a POST of
 * notifications, a `GET` stream for server notifications (`tools/list_changed`), the `MCP-Protocol-Version`
 * header checked, `Host`/`Origin` checked against DNS rebinding (`403`). See {@link HttpOptions}. Closing the
 * scope stops listening, ends every session (interrupting their calls) and closes the open connections.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect, Schema } from "effect"
 * import { McpServer, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * const main = Effect.gen(function*() {
 *   const { url } = yield* McpServer.http(Toolkit.make(Upper), { name: "text-tools", version: "1.0.0", port: 3000 })
 *   yield* Effect.log(`serving ${url}`)
 *   return yield* Effect.never
 * })
 *
 * NodeRuntime.runMain(Effect.scoped(main))
 * ```
 *
 * @since 0.1.0
 * @category serving
 */
export const http: <T extends Tool.Any>(
  toolkit: Source<T>,
  options: HttpOptions
) => Effect.Effect<HttpServer, McpServerError, Scope.Scope | Tool.Requirements<T>> = InternalHttp.http

/**
 * What a model may be shown or may answer in {@link sample}: text, an image or audio, in the shapes of
 * `ToolResult`'s content parts.
 *
 * @example
 * ```ts
 * import type { McpServer } from "effect-agent-tools"
 *
 * const question: McpServer.SamplingContent = { type: "text", text: "Summarize this diff in one line" }
 * ```
 *
 * @since 0.1.0
 * @category sampling
 */
export type SamplingContent =
  | typeof ToolResult.TextContent.Type
  | typeof ToolResult.ImageContent.Type
  | typeof ToolResult.AudioContent.Type

/**
 * One message of the conversation {@link sample} hands the client's model.
 *
 * @example
 * ```ts
 * import type { McpServer } from "effect-agent-tools"
 *
 * const message: McpServer.SamplingMessage = { role: "user", content: { type: "text", text: "Hello" } }
 * ```
 *
 * @since 0.1.0
 * @category sampling
 */
export interface SamplingMessage extends Internal.SamplingMessage {}

/**
 * What the server would like in a model, as MCP's `modelPreferences`: name hints (`"claude-3-5-sonnet"`, `"claude"`)
 * and priorities between 0 and 1. The client decides.
 *
 * @example
 * ```ts
 * import type { McpServer } from "effect-agent-tools"
 *
 * const cheapAndFast: McpServer.ModelPreferences = { hints: [{ name: "haiku" }], costPriority: 0.9, speedPriority: 0.8 }
 * ```
 *
 * @since 0.1.0
 * @category sampling
 */
export interface ModelPreferences extends Internal.ModelPreferences {}

/**
 * A request to the client's model (MCP's `sampling/createMessage` params): the `messages`, the most tokens to
 * generate, and optionally a `systemPrompt`, `temperature`, `stopSequences`, `modelPreferences`, `includeContext`
 * and `metadata` (passed through to the client), and `key`, the name the request goes by for a 2026-07-28 client
 * (in `inputRequests`; see `Tool.elicit`).
 *
 * @example
 * ```ts
 * import type { McpServer } from "effect-agent-tools"
 *
 * const request: McpServer.SamplingRequest = {
 *   messages: [{ role: "user", content: { type: "text", text: "Name this function: (a, b) => a + b" } }],
 *   maxTokens: 20,
 *   systemPrompt: "Answer with one identifier."
 * }
 * ```
 *
 * @since 0.1.0
 * @category sampling
 */
export interface SamplingRequest extends Internal.SamplingRequest {}

/**
 * The model's answer: its `content`, the `model` that wrote it and why it stopped (`endTurn`, `stopSequence`,
 * `maxTokens`, or the client's own word).
 *
 * @example
 * ```ts
 * import type { McpServer } from "effect-agent-tools"
 *
 * const text = (result: McpServer.SamplingResult): string =>
 *   result.content.type === "text" ? result.content.text : `[${result.content.type}]`
 * ```
 *
 * @since 0.1.0
 * @category sampling
 */
export interface SamplingResult extends Internal.SamplingResult {}

/**
 * {@link sample} could not get an answer. `reason`:
 * - `Unavailable`: there is no client to ask: not in a call served over MCP, or a stateless HTTP request of a
 *   2025-era client (it has no session to answer in);
 * - `Unsupported`: the client did not declare the `sampling` capability (a 2026 call that fails after this is
 *   refused as a whole with MCP's `MissingRequiredClientCapabilityError`, `-32021`);
 * - `Failed`: the client answered with an error (the user refused, no model), left the question unanswered (2026),
 *   or the request could not be sent.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpServer } from "effect-agent-tools"
 *
 * const summary = McpServer.sample({
 *   messages: [{ role: "user", content: { type: "text", text: "Summarize: ..." } }],
 *   maxTokens: 100
 * }).pipe(
 *   Effect.map((result) => (result.content.type === "text" ? result.content.text : "")),
 *   Effect.catchTag("SamplingError", (error) =>
 *     error.reason === "Failed" ? Effect.fail(error) : Effect.succeed("(no model to summarize with)"))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const SamplingError: typeof Internal.SamplingError = Internal.SamplingError

/**
 * The type of {@link SamplingError} values, for signatures.
 *
 * @since 0.1.0
 * @category errors
 */
export type SamplingError = Internal.SamplingError

/**
 * Asks the calling client's model for a message (`sampling/createMessage`), from inside a handler served over MCP:
 * the server borrows the client's model, and the client stays in charge (it may show the request to the user, pick
 * the model, refuse). A 2025-era client gets the request in its session; a 2026-07-28 client, in the call's
 * `input_required` result (the call resumes when it answers, as `Tool.elicit` says). Fails with {@link SamplingError} when there is no client to ask, when the client did not
 * declare the `sampling` capability, or when it refuses. The call's own timeout and cancellation bound the wait
 * (cancelling the call cancels the request). Needs nothing in `R`, like `Tool.currentCall`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { McpServer, Tool } from "effect-agent-tools"
 *
 * const NameIt = Tool.make("name_it", {
 *   description: "Suggest a name for a piece of code, asking the client's model",
 *   parameters: { code: Schema.String },
 *   handler: ({ code }) =>
 *     McpServer.sample({
 *       messages: [{ role: "user", content: { type: "text", text: `Suggest a name for:\n${code}` } }],
 *       systemPrompt: "Answer with one identifier.",
 *       maxTokens: 20
 *     }).pipe(Effect.map((result) => (result.content.type === "text" ? result.content.text.trim() : "")))
 * })
 * ```
 *
 * @since 0.1.0
 * @category in a call
 */
export const sample: (request: SamplingRequest) => Effect.Effect<SamplingResult, SamplingError> = Internal.sample

/**
 * A root the client shares: a `file://` URI (a folder the user opened) and an optional name.
 *
 * @example
 * ```ts
 * import type { McpServer } from "effect-agent-tools"
 *
 * const root: McpServer.Root = { uri: "file:///home/ada/project", name: "project" }
 * ```
 *
 * @since 0.1.0
 * @category roots
 */
export interface Root extends Internal.Root {}

/**
 * {@link listRoots} could not get an answer; `reason` as {@link SamplingError}'s, for the `roots` capability.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpServer } from "effect-agent-tools"
 *
 * const roots = McpServer.listRoots().pipe(Effect.catchTag("RootsError", () => Effect.succeed([])))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const RootsError: typeof Internal.RootsError = Internal.RootsError

/**
 * The type of {@link RootsError} values, for signatures.
 *
 * @since 0.1.0
 * @category errors
 */
export type RootsError = Internal.RootsError

/**
 * Asks the calling client which roots (folders, projects) it shares (`roots/list`), from inside a handler served
 * over MCP: pushed to a 2025-era client in its session, asked of a 2026-07-28 client in the call's
 * `input_required` result (`key` names it there; see `Tool.elicit`). Fails with {@link RootsError} when there is
 * no client to ask, when it did not declare the `roots` capability, or when it refuses. Needs nothing in `R`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpServer, Tool } from "effect-agent-tools"
 *
 * const Where = Tool.make("where", {
 *   description: "Say which folders the client shares",
 *   failure: McpServer.RootsError,
 *   handler: () => Effect.map(McpServer.listRoots(), (roots) => roots.map((root) => root.uri).join("\n"))
 * })
 * ```
 *
 * @since 0.1.0
 * @category in a call
 */
export const listRoots: (
  options?: { readonly key?: string | undefined }
) => Effect.Effect<ReadonlyArray<Root>, RootsError> = Internal.listRoots
