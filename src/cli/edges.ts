/**
 * The commands built on the edges: `mcp` (the workspace tools over MCP), `provider` (as a stdio tool provider),
 * `inspect` (any MCP server's tools, and one call: its work is in inspect.ts, loaded when it runs), `bridge` (a stdio
 * provider's tools over MCP).
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as McpServer from "../McpServer.js"
import * as StdioProvider from "../StdioProvider.js"
import * as Workspace from "../Workspace.js"
import { UsageError } from "./commands.js"
import { fetch, root, rootOf, workspaceOf } from "./options.js"
import * as Records from "./records.js"
import { version } from "./version.js"

const serverInfo = { name: "agent-tools", version }

export const mcp = Command.make("mcp", {
  root,
  fetch,
  http: Options.integer("http").pipe(
    Options.withDescription("Serve Streamable HTTP on this port (0 picks a free one) instead of stdio"),
    Options.optional
  ),
  host: Options.text("host").pipe(
    Options.withDescription(`The address to listen on with --http (default ${McpServer.DEFAULT_HOST})`),
    Options.optional
  )
}, ({ fetch, host, http, root }) =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit(workspaceOf(root, fetch))
    if (Option.isNone(http)) return yield* McpServer.stdio(kit, serverInfo)
    const { url } = yield* McpServer.http(kit, {
      ...serverInfo,
      port: http.value,
      ...(Option.isSome(host) ? { host: host.value } : {})
    }).pipe(Effect.catchIf((e) => e.reason === "Options", (e) => Effect.fail(new UsageError({ message: e.message }))))
    process.stderr.write(`serving the workspace tools of ${rootOf(root)} at ${url}\n`)
    return yield* Effect.never
  })).pipe(Effect.provide(Records.layer(rootOf(root))))).pipe(
    Command.withDescription("Serve the workspace tools over MCP (stdio by default, or Streamable HTTP)")
  )

export const provider = Command.make(
  "provider",
  { root, fetch },
  ({ fetch, root }) =>
    Effect.scoped(Effect.gen(function*() {
      const kit = yield* Workspace.toolkit(workspaceOf(root, fetch))
      return yield* StdioProvider.serve(kit)
    })).pipe(Effect.provide(Records.layer(rootOf(root))))
).pipe(
  Command.withDescription("Serve the workspace tools as a stdio tool provider (JSON lines)")
)

const commandLine = Args.text({ name: "command" }).pipe(
  Args.withDescription("The command to run, after --, with its arguments"),
  Args.atLeast(1)
)

export const bridge = Command.make(
  "bridge",
  { command: commandLine },
  ({ command }) =>
    Effect.scoped(Effect.gen(function*() {
      const [executable, ...args] = command
      const connected = yield* StdioProvider.connect({ command: executable, args })
      return yield* McpServer.stdio(yield* connected.toolkit, { name: `agent-tools bridge: ${executable}`, version })
    }))
).pipe(Command.withDescription("Serve a stdio tool provider's tools over MCP (stdio): bridge -- <command> [args]"))

export const inspect = Command.make("inspect", {
  url: Options.text("url").pipe(Options.withDescription("A Streamable HTTP endpoint"), Options.optional),
  authStore: Options.text("auth-store").pipe(
    Options.withDescription(
      "Where --url keeps what it signed in with, a file per server (default: ~/.config/agent-tools/mcp-auth)"
    ),
    Options.optional
  ),
  call: Options.text("call").pipe(Options.withDescription("Call this tool and print its result"), Options.optional),
  args: Options.text("args").pipe(
    Options.withDescription("The call's arguments as JSON (default {})"),
    Options.optional
  ),
  command: Args.text({ name: "command" }).pipe(
    Args.withDescription("A stdio server to start, after --, with its arguments"),
    Args.repeated
  )
}, (options) => Effect.flatMap(Effect.promise(() => import("./inspect.js")), (Inspect) => Inspect.inspect(options)))
  .pipe(
    Command.withDescription(
      "Connect to any MCP server (--url URL, or -- <command> [args]) and list its tools; --call <tool> --args <json> " +
        "calls one. A server that asks you to sign in prints a page to open (--auth-store keeps the result)"
    )
  )
