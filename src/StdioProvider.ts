/**
 * The stdio tool-provider protocol, both sides: {@link serve} a toolkit as a provider program, or {@link connect}
 * to a provider program and use its tools as local ones.
 *
 * The protocol, in full in `docs/stdio-provider.md`:
 * - start: the provider writes one OpenAI chat tool definition per line on stdout
 *   (`{"type":"function","function":{"name","description","parameters"}}`), then one empty line meaning ready;
 *   diagnostics go to stderr only;
 * - requests, one JSON object per line on stdin:
 *   `{"call_id","function":{"name","arguments" (a string of JSON)},"context":{"dir"}}`;
 * - answers, one per request, in any order: `{"call_id","content"}`, `content` being any JSON value; there is no
 *   error field: an error is a string `Bad arguments: <why>` or `Error: <message>`;
 * - many requests per process, handled concurrently; end of input means finish what is in flight and exit 0.
 *
 * How results and errors become `content` and back (the same rule on both sides, so a tool served by one side and
 * called through the other reads the same to the model; the first row that applies):
 *
 * | outcome | `content` | read back by `connect` as |
 * |---|---|---|
 * | `InvalidArguments` | `"Bad arguments: <the problems>"` | `ToolFailure`, message `invalid arguments: <the problems>` |
 * | any other `ToolError` | `"Error: <message>"` | `ToolFailure`, message `<message>` |
 * | result with `structured` output (not a string) | that JSON value | JSON: text = its JSON, `structured` = the value |
 * | result whose parts are all text | the text (parts joined by `\n`) as a JSON string | text |
 * | any other result (images, resources) | the array of its content parts, in MCP's shapes | those parts |
 *
 * `connect` also reads `null` (or a missing `content`) as empty text. `details` and `terminate` do not cross this
 * wire. A successful text that happens to begin with `Error: ` or `Bad arguments: ` reads as a failure at the
 * host: the protocol has no other way to tell them apart.
 *
 * A line is at most `maxLineBytes` on either side ({@link DEFAULT_MAX_LINE_BYTES} by default): a longer one is
 * dropped as it arrives, never held whole, and the call it carries (when its `call_id` can be read at either end
 * of it) is answered or failed as too large; the session goes on.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Internal from "./internal/stdioProvider.js"
import type * as Tool from "./Tool.js"
import type * as ToolDefinition from "./ToolDefinition.js"
import type * as Toolkit from "./Toolkit.js"

// ---------------------------------------------------------------------------------------------------------------
// constants
// ---------------------------------------------------------------------------------------------------------------

/**
 * The prefix of an answer saying the call's arguments failed validation: `Bad arguments: <why>`. Every other error
 * answer starts `Error: ` (`ToolError.MODEL_PREFIX`).
 *
 * @example
 * ```ts
 * import { StdioProvider } from "effect-agent-tools"
 *
 * const isBadArguments = (content: unknown) =>
 *   typeof content === "string" && content.startsWith(StdioProvider.BAD_ARGUMENTS_PREFIX)
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const BAD_ARGUMENTS_PREFIX: "Bad arguments: " = Internal.BAD_ARGUMENTS_PREFIX

/**
 * How long {@link connect} waits for the ready line by default: 10 seconds.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { StdioProvider } from "effect-agent-tools"
 *
 * console.log(Duration.toSeconds(StdioProvider.DEFAULT_START_TIMEOUT)) // 10
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_START_TIMEOUT: Duration.Duration = Internal.DEFAULT_START_TIMEOUT

/**
 * The longest line either side reads by default, 16 MiB (as much as `McpClient` takes for one result): a header
 * line or an answer for {@link connect}, a request for {@link serve}. A longer line is dropped as it arrives, so
 * memory stays bounded whatever the other side writes. Set `maxLineBytes` for more, up to about 512 MiB (the longest
 * string the JavaScript engine can make).
 *
 * @example
 * ```ts
 * import { StdioProvider } from "effect-agent-tools"
 *
 * const options: StdioProvider.ConnectOptions = {
 *   command: "image-provider",
 *   maxLineBytes: 4 * StdioProvider.DEFAULT_MAX_LINE_BYTES
 * }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_LINE_BYTES: number = Internal.DEFAULT_MAX_LINE_BYTES

/**
 * The most tools {@link connect} takes from a provider's header by default, 1,000: a header that lists more is
 * refused (`Header`), so a provider cannot make a host build and offer tools without end.
 *
 * @example
 * ```ts
 * import { StdioProvider } from "effect-agent-tools"
 *
 * const options: StdioProvider.ConnectOptions = { command: "big-provider", maxTools: 5 * StdioProvider.DEFAULT_MAX_TOOLS }
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_TOOLS: number = Internal.DEFAULT_MAX_TOOLS

// ---------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why a provider could not be started or served, or why a call to a remote tool failed. A call fails with a
 * `ToolError` (a `ToolFailure` whose `error` is this value, so the model reads `Error: <message>` once);
 * `connect` and `serve` fail with it directly.
 *
 * - `Spawn` (connect): the command could not be started.
 * - `Header` (connect): a header line is not a tool definition or is longer than `maxLineBytes`, a name breaks the
 *   name rule or is taken twice, the header lists more than `maxTools` tools, or a schema cannot be compiled.
 * - `Timeout` (connect): no ready line, or its tools not built, within `startTimeout`.
 * - `Closed` (connect, calls): the provider exited (the message gives the exit code or signal and the tail of its
 *   stderr; `cause` is the {@link ExitStatus}), the call could not be written to it, or the scope closed.
 * - `Answer` (calls): the provider answered `Error: <message>` (the message without the prefix) or
 *   `Bad arguments: <why>` (the message `invalid arguments: <why>`); `cause` is the answer as sent.
 * - `TooLarge` (calls): the answer was longer than `maxLineBytes`; it was dropped as it arrived.
 * - `Protocol` (serve): a line of input that is not JSON; fatal.
 * - `Input` / `Output` (serve): reading the requests or writing the answers failed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StdioProvider } from "effect-agent-tools"
 *
 * const program = Effect.scoped(
 *   StdioProvider.connect({ command: "no-such-provider" }).pipe(
 *     Effect.catchTag("StdioProviderError", (error) => Effect.logWarning(`${error.reason}: ${error.message}`))
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const StdioProviderError: typeof Internal.StdioProviderError = Internal.StdioProviderError

/**
 * @since 0.1.0
 * @category errors
 */
export type StdioProviderError = Internal.StdioProviderError

// ---------------------------------------------------------------------------------------------------------------
// the provider side
// ---------------------------------------------------------------------------------------------------------------

/**
 * Options of {@link serve}.
 *
 * - `maxParallel`: handlers running at once (default `Executor.DEFAULT_MAX_PARALLEL`).
 * - `timeout`: the timeout of calls whose tool sets none.
 * - `input`: the request bytes; defaults to the process's stdin (read with `@effect/platform-node`, an optional
 *   peer dependency then needed). Its end is end of input.
 * - `output`: writes one chunk of whole lines and completes once it is handed on; defaults to the process's
 *   stdout. Never called again before the previous write completed.
 * - `maxLineBytes`: the longest request line read (default {@link DEFAULT_MAX_LINE_BYTES}); see {@link serve}.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import type { StdioProvider } from "effect-agent-tools"
 * import * as Net from "node:net"
 *
 * // serve over a socket instead of stdin/stdout
 * const overSocket = (socket: Net.Socket): StdioProvider.ServeOptions => ({
 *   maxParallel: 4,
 *   timeout: "1 minute",
 *   input: Stream.fromAsyncIterable(socket, (error) => error),
 *   output: (text) => Effect.async<void, Error>((resume) => {
 *     socket.write(text, (error) => resume(error == null ? Effect.void : Effect.fail(error)))
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly input?: Stream.Stream<Uint8Array | string, unknown> | undefined
  readonly output?: ((text: string) => Effect.Effect<void, unknown>) | undefined
  readonly maxLineBytes?: number | undefined
}

/**
 * Serves a toolkit as a stdio tool provider: writes the header, then answers each request line until end of input.
 *
 * Calls run under the executor's rules, over the life of the process rather than one batch: calls whose resource
 * keys overlap run one after another in arrival order, at most `maxParallel` handlers run at once, and a
 * `sequential` tool runs alone. Arguments are checked before a call waits for anything. Answers are written as
 * whole lines, never interleaved, in completion order. `StdioProvider.directory` gives a handler the request's
 * `context.dir`.
 *
 * - Invalid arguments are answered `Bad arguments: <why>`; a failure, an unknown tool, or a malformed request
 *   that has a readable `call_id`, `Error: <message>`. A request without a readable `call_id` cannot be answered:
 *   it is logged (with Effect's logger) and skipped.
 * - End of input: the calls in flight finish and are answered, then the Effect succeeds.
 * - A line that is not JSON is fatal: nothing more is read or started, the calls in flight finish and are
 *   answered, then the Effect fails with a `Protocol` error.
 * - A line longer than `maxLineBytes` is dropped as it arrives, never held whole. When its `call_id` can be read
 *   at its start or its end (`{"call_id":"7",...`), it is answered `Error: the request is <n> bytes, over the limit
 *   of <limit> for one line`; otherwise it is logged and skipped like any request that cannot be answered. Either
 *   way the next line is read as usual.
 * - Lines that cannot be answered are logged, the first ten one by one, then only counted (a count at most every
 *   ten seconds, and one at the end), so a host that writes garbage cannot flood the log.
 * - A write that fails (the host went away) fails the Effect at once with an `Output` error and interrupts the
 *   calls in flight.
 *
 * On the process's own stdout, Effect's `Console` (and so every Effect logger) is sent to stderr for the calls.
 * A provider program usually runs this through {@link main}; with `input` and `output` it runs anywhere (a test,
 * a socket).
 *
 * @example
 * ```ts
 * import { Effect, Schema, Stream } from "effect"
 * import { StdioProvider, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * const written: Array<string> = []
 * const program = StdioProvider.serve(Toolkit.make(Upper), {
 *   input: Stream.make("{\"call_id\":\"1\",\"function\":{\"name\":\"upper\",\"arguments\":\"{\\\"text\\\":\\\"hi\\\"}\"}}\n"),
 *   output: (text) => Effect.sync(() => written.push(text))
 * })
 * // written: [<the header>, "{\"call_id\":\"1\",\"content\":\"HI\"}\n"]
 * ```
 *
 * @since 0.1.0
 * @category provider
 */
export const serve = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  options?: ServeOptions
): Effect.Effect<void, StdioProviderError, Tool.Requirements<Tools>> => Internal.serve(toolkit, options)

/**
 * Options of {@link main}: {@link ServeOptions}' `maxParallel`, `timeout` and `maxLineBytes`. `main` also takes
 * `layer`, which provides what the handlers need, required exactly when they need something.
 *
 * @example
 * ```ts
 * import type { StdioProvider } from "effect-agent-tools"
 *
 * const options: StdioProvider.MainOptions = { maxParallel: 4, timeout: "2 minutes" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MainOptions {
  readonly maxParallel?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
  readonly maxLineBytes?: number | undefined
}

/**
 * Runs a provider program: {@link serve} on the process's stdin and stdout with `NodeRuntime.runMain`. The process
 * exits 0 at end of input (once the calls in flight are answered and the output is flushed, even if something a
 * handler started would keep Node alive), and 1 after a line that is not JSON or a failed write, with one line
 * saying why on stderr. SIGINT and SIGTERM interrupt the calls (their finalizers run) and exit.
 *
 * Stdout carries the protocol and nothing else, so `main` points the global `console` (and with it every Effect
 * logger) at stderr before it starts. It needs `@effect/platform-node` (an optional peer dependency of this
 * package); without it, it says so on stderr and exits 1.
 *
 * @example
 * ```ts
 * // provider.ts, run as `node provider.js` by any host of the protocol
 * import { Effect, Schema } from "effect"
 * import { StdioProvider, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Where = Tool.make("where", {
 *   description: "The host's working directory",
 *   handler: () => StdioProvider.directory
 * })
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 *
 * StdioProvider.main(Toolkit.make(Where, Upper), { maxParallel: 4 })
 * ```
 *
 * @since 0.1.0
 * @category provider
 */
export const main = <Tools extends Tool.Any, E = never>(
  toolkit: Toolkit.Toolkit<Tools>,
  ...options: [Tool.Requirements<Tools>] extends [never] ? [options?: MainOptions]
    : [options: MainOptions & { readonly layer: Layer.Layer<Tool.Requirements<Tools>, E> }]
): void => Internal.main(toolkit, options[0])

/**
 * The working directory of the host for the call being served: the request's `context.dir`. Outside a served call,
 * or for a request that sent none, the process's working directory. Needs nothing in `R`.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { StdioProvider, Tool } from "effect-agent-tools"
 * import * as Path from "node:path"
 *
 * const Resolve = Tool.make("resolve", {
 *   description: "Resolve a path against the host's working directory",
 *   parameters: { path: Schema.String },
 *   handler: ({ path }) => Effect.map(StdioProvider.directory, (dir) => Path.resolve(dir, path))
 * })
 * ```
 *
 * @since 0.1.0
 * @category provider
 */
export const directory: Effect.Effect<string> = Internal.directory

/**
 * Runs an Effect with `dir` as the working directory that {@link directory} gives and that remote tools from
 * {@link connect} send as `context.dir` (by default the process's working directory). Calls started inside,
 * including by the executor, see it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StdioProvider } from "effect-agent-tools"
 *
 * const program = StdioProvider.directory.pipe(StdioProvider.withDirectory("/work/repo"))
 * // Effect.runSync(program) === "/work/repo"
 * ```
 *
 * @since 0.1.0
 * @category provider
 */
export const withDirectory: {
  (dir: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, dir: string): Effect.Effect<A, E, R>
} = Internal.withDirectory

// ---------------------------------------------------------------------------------------------------------------
// the host side
// ---------------------------------------------------------------------------------------------------------------

/**
 * A provider program to start.
 *
 * - `command`, `args`, `cwd`: what to run and where; `env` is added to this process's environment (a value of
 *   `undefined` removes a variable).
 * - `startTimeout`: how long the provider gets to start: to send its header and ready line, and for its tools to
 *   be built from it (default {@link DEFAULT_START_TIMEOUT}).
 * - `callTimeout`: each remote tool's `timeout` (none by default, so the executor's `timeout` applies); a call
 *   that outruns it ends `ToolTimeout`, and its answer, if it comes later, is dropped.
 * - `maxLineBytes`: the longest line read from the provider, a header line or an answer (default
 *   {@link DEFAULT_MAX_LINE_BYTES}); a longer answer fails its call with `TooLarge`, and the session goes on.
 * - `maxTools`: the most tools the header may list (default {@link DEFAULT_MAX_TOOLS}).
 *
 * @example
 * ```ts
 * import type { StdioProvider } from "effect-agent-tools"
 *
 * const options: StdioProvider.ConnectOptions = {
 *   command: "/usr/local/bin/search-provider",
 *   args: ["--index", "/var/lib/search"],
 *   env: { SEARCH_LOG: "debug" },
 *   startTimeout: "30 seconds",
 *   callTimeout: "2 minutes"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectOptions {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly startTimeout?: Duration.DurationInput | undefined
  readonly callTimeout?: Duration.DurationInput | undefined
  readonly maxLineBytes?: number | undefined
  readonly maxTools?: number | undefined
}

/**
 * How a provider process ended: its exit code, or the signal that killed it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { StdioProvider } from "effect-agent-tools"
 *
 * const describe = (status: StdioProvider.ExitStatus) =>
 *   status.signal !== null ? `killed by ${status.signal}` : `exited with code ${status.code}`
 * const watch = (provider: StdioProvider.Provider) => Effect.map(provider.exited, describe)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * A running provider, as {@link connect} gives it.
 *
 * - `tools` / `toolkit`: its tools as ordinary `Tool`s (schemas as advertised, arguments checked with Ajv before
 *   they are sent), in header order; prefix, merge, serve over MCP or run through the executor like any other
 *   toolkit. Effects, as `McpClient`'s are, so a host reads the tools of either edge the same way; a provider's
 *   list never changes, so both always give the same value.
 * - `definitions`: the header as read (a missing `description` read as `""`, missing `parameters` as an empty
 *   object schema).
 * - `command`: the command line, for messages; `pid`: the provider's pid, which is also its process group id.
 * - `exited`: completes when the provider exits, with how it ended.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StdioProvider, Toolkit } from "effect-agent-tools"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const provider: StdioProvider.Provider = yield* StdioProvider.connect({ command: "search-provider" })
 *   const kit = Toolkit.prefix(yield* provider.toolkit, "search") // search__query, ...
 *   yield* Effect.log(`${provider.command} (pid ${provider.pid}) offers ${Toolkit.names(kit).join(", ")}`)
 * }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Provider {
  readonly tools: Effect.Effect<ReadonlyArray<Tool.Dynamic<StdioProviderError>>>
  readonly toolkit: Effect.Effect<Toolkit.Toolkit<Tool.Dynamic<StdioProviderError>>>
  readonly definitions: ReadonlyArray<ToolDefinition.OpenAiChat>
  readonly command: string
  readonly pid: number
  readonly exited: Effect.Effect<ExitStatus>
}

/**
 * Starts a provider program for the life of the current scope and gives its tools.
 *
 * The provider runs in a process group of its own. `connect` reads its header, refusing a malformed header, a
 * duplicate name, a header of more than `maxTools` tools or with a line over `maxLineBytes`, or a start that takes
 * longer than `startTimeout` (the process is ended at once then).
 * Each call sends a fresh `call_id`, the arguments as a JSON string, and the working directory
 * (`StdioProvider.withDirectory`, else the process's) as `context.dir`, and waits for the answer with that
 * `call_id`; answers are mapped as the module's table says. Lines on stdout that are not answers are logged and
 * skipped: the first ten one by one, then only counted (a count at most every ten seconds, and one at the end).
 * An answer over `maxLineBytes` is dropped as it arrives and its call fails with `TooLarge`.
 *
 * - When the provider exits, every call in flight fails at once (a `ToolFailure` whose message gives the exit code
 *   and the tail of its stderr), and so does every later call; what is left of its process group is ended.
 * - An interrupted call (cancelled, timed out) has nothing to send on this wire: the provider is not told, and its
 *   answer, if it comes, is dropped.
 * - Closing the scope fails the calls in flight, closes the provider's stdin, then ends its whole process group:
 *   SIGTERM, then SIGKILL after a grace period. Nothing it started is left behind.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Executor, StdioProvider } from "effect-agent-tools"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const provider = yield* StdioProvider.connect({
 *     command: "my-provider",
 *     args: ["--verbose"],
 *     callTimeout: "30 seconds"
 *   })
 *   return yield* Executor.run(yield* provider.toolkit, [
 *     { id: "call_1", name: "upper", arguments: "{\"text\":\"hi\"}" }
 *   ])
 * }))
 * ```
 *
 * @since 0.1.0
 * @category host
 */
export const connect = (options: ConnectOptions): Effect.Effect<Provider, StdioProviderError, Scope.Scope> =>
  Internal.connect(options)
