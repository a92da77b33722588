/**
 * The `agent-tools` binary: the workspace tools served over MCP or as a stdio provider, their definitions, one
 * call, a look at any MCP server, a bridge from a stdio provider to MCP, and a demo.
 *
 * Exit codes: 0 success; 1 a tool error (its `Error: ...` line on stderr); 2 a usage error; 3 (`run`) a question
 * nobody was there to answer.
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ToolDefinition from "../ToolDefinition.js"
import * as Commands from "./commands.js"
import * as Edges from "./edges.js"
import { fetch, root, workspaceOf } from "./options.js"
import { wantsColor } from "./render.js"

const demo = Command.make("demo", {}, () => Commands.demo).pipe(
  Command.withDescription("Run one scripted model turn against a fresh temporary workspace, live")
)

const list = Command.make("list", {
  format: Options.choice("format", ToolDefinition.formats).pipe(
    Options.withDefault("openAiChat" as const),
    Options.withDescription("The provider format of the definitions")
  ),
  root,
  fetch
}, ({ fetch, format, root }) => Commands.list(workspaceOf(root, fetch), format)).pipe(
  Command.withDescription("Print the workspace tools' definitions as JSON")
)

const call = Command.make(
  "call",
  {
    tool: Args.text({ name: "tool" }).pipe(Args.withDescription("The tool to call")),
    json: Args.text({ name: "json" }).pipe(
      Args.withDescription("The arguments as JSON, or - to read them from stdin (default {})"),
      Args.optional
    ),
    yes: Options.boolean("yes").pipe(Options.withDescription("Allow what needs permission without asking")),
    root,
    fetch
  },
  ({ fetch, json, root, tool, yes }) => Commands.call(workspaceOf(root, fetch), tool, Option.getOrUndefined(json), yes)
).pipe(
  Command.withDescription("Call one workspace tool: output on stdout, progress and errors on stderr")
)

/**
 * Listed for `--help` only: `run`'s command line is the tools' own, which no fixed parser knows, so main.ts hands
 * it to Commands.run before @effect/cli sees it.
 */
const run = Command.make("run", {
  line: Args.text({ name: "tool and flags" }).pipe(Args.repeated)
}, () => Effect.void).pipe(
  Command.withDescription(
    "Run the workspace tools as one shell program: run [--root DIR] [--fetch] <tool> --<param> <value> ... " +
      "[<json> | -]; run help, run schema <tool>, run usage --markdown (the usage a model reads)"
  )
)

const journal = Command.make("journal", {
  runId: Args.text({ name: "run id" }).pipe(
    Args.withDescription("The run to show, its steps and calls (default: list the runs)"),
    Args.optional
  ),
  file: Options.file("file").pipe(
    Options.withDescription("The SQLite journal (default: agent-journal.db)"),
    Options.withDefault("agent-journal.db")
  ),
  pg: Options.text("pg").pipe(
    Options.withDescription("A Postgres journal instead: its connection URL (postgres://user@host/database)"),
    Options.optional
  ),
  schema: Options.text("schema").pipe(
    Options.withDescription("The Postgres schema of the journal's tables (default: public)"),
    Options.optional
  ),
  limit: Options.integer("limit").pipe(
    Options.withDescription("List at most this many runs, the most recently updated first"),
    Options.withDefault(100)
  )
}, ({ file, limit, pg, runId, schema }) =>
  // loaded when it runs: the other commands never load the journal's SQL drivers
  Effect.flatMap(Effect.promise(() => import("./journal.js")), (JournalCommand) =>
    JournalCommand.journal(
      { file, pg: Option.getOrUndefined(pg), schema: Option.getOrUndefined(schema) },
      Option.getOrUndefined(runId),
      limit
    ))).pipe(
    Command.withDescription("List the runs of a journal, or show one run's steps and calls")
  )

const command = Command.make("agent-tools").pipe(
  Command.withDescription("The tool layer for LLM agents: workspace tools, MCP, stdio providers"),
  Command.withSubcommands([
    demo,
    list,
    call,
    run,
    journal,
    Edges.mcp,
    Edges.provider,
    Edges.inspect,
    Edges.bridge
  ])
)

const cli = Command.run(command, { name: "agent-tools", version: Commands.version })

/** 2 for a usage error, 1 for a tool error, 0 otherwise. */
const exitCode = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return typeof exit.value === "number" ? exit.value : 0
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return 2
  if (Option.isSome(failure) && failure.value instanceof Commands.CommandFailed) return failure.value.code
  if (Option.isSome(failure) && failure.value instanceof Commands.UsageError) {
    process.stderr.write(`${failure.value.message}\n`)
    return 2
  }
  if (Cause.isInterruptedOnly(exit.cause)) return 130
  if (Option.isSome(failure)) {
    const error = failure.value
    process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
  return 1
}

const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")

/**
 * @effect/cli prints its help and its usage errors with colour codes wherever they go; where colour is not wanted
 * (not a terminal, or `NO_COLOR`) they are taken out on the way.
 */
const cliConsole = (base: Console.Console): Console.Console => {
  const plain = (color: boolean) => (args: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
    color ? args : args.map((arg) => (typeof arg === "string" ? arg.replace(SGR, "") : arg))
  const out = plain(wantsColor(process.stdout))
  const err = plain(wantsColor(process.stderr))
  return {
    ...base,
    log: (...args) => base.log(...out(args)),
    info: (...args) => base.info(...out(args)),
    error: (...args) => base.error(...err(args)),
    warn: (...args) => base.warn(...err(args))
  }
}

Effect.suspend(() => (process.argv[2] === "run" ? Commands.run(process.argv.slice(3)) : cli(process.argv))).pipe(
  (program) => Effect.consoleWith((base) => Effect.withConsole(program, cliConsole(base))),
  Effect.provide(NodeContext.layer),
  Effect.exit,
  Effect.flatMap((exit) => Effect.sync(() => exitCode(exit))),
  (program) =>
    NodeRuntime.runMain(program, {
      disableErrorReporting: true,
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 1)
    })
)
