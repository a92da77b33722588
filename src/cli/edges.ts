/**
 * The commands built on the edges: `mcp` (the workspace tools over MCP), `provider` (as a stdio tool provider),
 * `inspect` (any MCP server's tools, and one call), `bridge` (a stdio provider's tools over MCP).
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
import { version } from "./version.js"

const root = Options.directory("root", { exists: "yes" }).pipe(
  Options.withDescription("The workspace folder the tools are confined to (default: the current folder)"),
  Options.optional
)

const rootOf = (given: Option.Option<string>): string => Option.getOrElse(given, () => process.cwd())

const serverInfo = { name: "agent-tools", version }

export const mcp = Command.make("mcp", {
  root,
  http: Options.integer("http").pipe(
    Options.withDescription("Serve Streamable HTTP on this port (0 picks a free one) instead of stdio"),
    Options.optional
  ),
  host: Options.text("host").pipe(
    Options.withDescription(`The address to listen on with --http (default ${McpServer.DEFAULT_HOST})`),
    Options.optional
  )
}, ({ host, http, root }) =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit({ root: rootOf(root) })
    if (Option.isNone(http)) return yield* McpServer.stdio(kit, serverInfo)
    const { url } = yield* McpServer.http(kit, {
      ...serverInfo,
      port: http.value,
      ...(Option.isSome(host) ? { host: host.value } : {})
    })
    process.stderr.write(`serving the workspace tools of ${rootOf(root)} at ${url}\n`)
    return yield* Effect.never
  }))).pipe(Command.withDescription("Serve the workspace tools over MCP (stdio by default, or Streamable HTTP)"))

export const provider = Command.make("provider", { root }, ({ root }) =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit({ root: rootOf(root) })
    return yield* StdioProvider.serve(kit)
  }))).pipe(Command.withDescription("Serve the workspace tools as a stdio tool provider (JSON lines)"))

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
      return yield* McpServer.stdio(connected.toolkit, { name: `agent-tools bridge: ${executable}`, version })
    }))
).pipe(Command.withDescription("Serve a stdio tool provider's tools over MCP (stdio): bridge -- <command> [args]"))
