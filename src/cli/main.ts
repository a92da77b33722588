#!/usr/bin/env node
/**
 * The `agent-tools` binary: the workspace tools served over MCP or as a stdio provider, their definitions, one
 * call, a look at any MCP server, a bridge from a stdio provider to MCP, and a demo.
 *
 * Exit codes: 0 success; 1 a tool error (its `Error: ...` line on stderr); 2 a usage error.
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
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ToolDefinition from "../ToolDefinition.js"
import * as Commands from "./commands.js"
import * as Edges from "./edges.js"

const root = Options.directory("root", { exists: "yes" }).pipe(
  Options.withDescription("The workspace folder the tools are confined to (default: the current folder)"),
  Options.optional
)

const rootOf = (given: Option.Option<string>): string => Option.getOrElse(given, () => process.cwd())

const demo = Command.make("demo", {}, () => Commands.demo).pipe(
  Command.withDescription("Run one scripted model turn against a fresh temporary workspace, live")
)

const list = Command.make("list", {
  format: Options.choice("format", ToolDefinition.formats).pipe(
    Options.withDefault("openAiChat" as const),
    Options.withDescription("The provider format of the definitions")
  ),
  root
}, ({ format, root }) => Commands.list(rootOf(root), format)).pipe(
  Command.withDescription("Print the workspace tools' definitions as JSON")
)

const call = Command.make("call", {
  tool: Args.text({ name: "tool" }).pipe(Args.withDescription("The tool to call")),
  json: Args.text({ name: "json" }).pipe(
    Args.withDescription("The arguments as JSON, or - to read them from stdin (default {})"),
    Args.optional
  ),
  yes: Options.boolean("yes").pipe(Options.withDescription("Allow what needs permission without asking")),
  root
}, ({ json, root, tool, yes }) => Commands.call(rootOf(root), tool, Option.getOrUndefined(json), yes)).pipe(
  Command.withDescription("Call one workspace tool: output on stdout, progress and errors on stderr")
)

const command = Command.make("agent-tools").pipe(
  Command.withDescription("The tool layer for LLM agents: workspace tools, MCP, stdio providers"),
  Command.withSubcommands([demo, list, call, Edges.mcp, Edges.provider, Edges.inspect, Edges.bridge])
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

Effect.suspend(() => cli(process.argv)).pipe(
  Effect.provide(NodeContext.layer),
  Effect.exit,
  Effect.flatMap((exit) => Effect.sync(() => exitCode(exit))),
  (program) =>
    NodeRuntime.runMain(program, {
      disableErrorReporting: true,
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 1)
    })
)
