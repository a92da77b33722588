/**
 * A toolkit as one shell program, for hosts that give a model a shell but no MCP server: each tool is a command,
 * its parameters are flags derived from its JSON Schema (so a remote MCP or stdio-provider tool gets them too), and
 * `usage --markdown` prints the text a model reads to use it.
 *
 * ```sh
 * my-tools <tool> [--<param> <value> ...] [<json> | -]
 * my-tools help [<tool>]        # the tools, or one tool's flags
 * my-tools schema <tool>        # a tool's JSON Schema
 * my-tools usage --markdown     # every tool, for a model
 * ```
 *
 * Flags: `--name value` or `--name=value` for a string, number or integer; `--name` / `--no-name` for a boolean;
 * one of the listed values for an enum; a flag repeated per item for an array of those; `--object.field` for the
 * fields of an object (and `--object '<json>'` for all of it); JSON for any other shape. A JSON object as the last
 * argument, or `-` to read it from standard input, is merged with the flags; a parameter given both ways is a usage
 * error naming both. Before the tool's name, `--yes` allows whatever asks for permission.
 *
 * Exit codes: {@link ExitCode}. The result goes to standard output (text parts as they are, other content as a
 * one-line summary); a tool's failure is its `Error: ...` line on standard error, the line a model would read.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Internal from "./internal/shellProgram.js"
import * as Usage from "./internal/shellUsage.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * The exit codes: `Ok` (0) the call succeeded; `ToolError` (1) the tool failed, its `Error:` line on standard
 * error; `Usage` (2) the command line is wrong (an unknown tool or flag, a bad value, a conflict, a missing
 * required flag), with a message saying what to write; `Unanswered` (3) the tool asked a question (permission, or
 * an elicitation) that nobody was there to answer, and the call did not succeed. A call that succeeds although a
 * question went unanswered (a tool that falls back to a default) exits 0.
 *
 * @example
 * ```ts
 * import { ShellProgram } from "effect-agent-tools"
 *
 * const needsAPerson = (code: number) => code === ShellProgram.ExitCode.Unanswered
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const ExitCode = {
  Ok: Usage.EXIT.ok,
  ToolError: Usage.EXIT.toolError,
  Usage: Usage.EXIT.usage,
  Unanswered: Usage.EXIT.unanswered
} as const

/**
 * How a shell program presents itself and who answers its questions.
 *
 * - `name`: the program's name, as usage text and messages write it (`my-tools`).
 * - `description`: a line on what its tools are for, at the top of its usage.
 * - `questions`: `"terminal"` (default) asks permission requests and elicitations on the terminal (standard error
 *   and input, when both are terminals); elsewhere nobody is there to answer, a permission is refused and the call
 *   exits {@link ExitCode} `Unanswered`. `"host"` uses the `Permission.Requester` and `Elicitor` the environment
 *   provides, as they are (an elicitation answered `Cancel` counts as unanswered).
 *
 * @example
 * ```ts
 * import type { ShellProgram } from "effect-agent-tools"
 *
 * const options: ShellProgram.Options = { name: "my-tools", description: "Tools for the billing service" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly name: string
  readonly description?: string | undefined
  readonly questions?: "terminal" | "host" | undefined
}

const settingsOf = (options: Options): Internal.Settings => ({
  name: options.name,
  description: options.description,
  questions: options.questions ?? "terminal"
})

/**
 * Runs one command line (the words after the program's name) against a toolkit; gives the exit code. It writes to
 * the process's standard output and error and reads standard input for `-`. Never fails: every problem is a message
 * and an exit code.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { ShellProgram, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Greet = Tool.make("greet", {
 *   description: "Greet someone",
 *   parameters: { name: Schema.String, loud: Schema.optional(Schema.Boolean) },
 *   handler: ({ loud, name }) => Effect.succeed(loud === true ? `HELLO ${name.toUpperCase()}` : `hello ${name}`)
 * })
 *
 * // prints "HELLO ADA" and gives 0
 * const code = ShellProgram.run(Toolkit.make(Greet), ["greet", "--name", "Ada", "--loud"], { name: "my-tools" })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  argv: ReadonlyArray<string>,
  options: Options
): Effect.Effect<number, never, Tool.Requirements<Tools>> => Internal.run(toolkit, argv, settingsOf(options))

/**
 * The whole program: runs `process.argv` (less `node` and the script) and sets `process.exitCode`, so
 * `NodeRuntime.runMain` ends the process with it once the output is written.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect, Schema } from "effect"
 * import { ShellProgram, Tool, Toolkit } from "effect-agent-tools"
 *
 * const Greet = Tool.make("greet", {
 *   description: "Greet someone",
 *   parameters: { name: Schema.String },
 *   handler: ({ name }) => Effect.succeed(`hello ${name}`)
 * })
 *
 * // my-tools.ts: `node my-tools.js greet --name Ada`
 * NodeRuntime.runMain(ShellProgram.main(Toolkit.make(Greet), { name: "my-tools" }))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const main = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  options: Options
): Effect.Effect<void, never, Tool.Requirements<Tools>> =>
  Effect.flatMap(
    Effect.suspend(() => {
      // a reader that goes away (`my-tools ... | head`) ends the output, not the process with a stack trace
      process.stdout.on("error", () => {})
      return run(toolkit, process.argv.slice(2), options)
    }),
    (code) => Effect.sync(() => void (process.exitCode = code))
  )

/**
 * The usage text: `"markdown"` (default) is what `usage --markdown` prints, one section per tool with its flags,
 * types, required marks, allowed values, defaults and the hints its author gave, for a model to read (put it in a
 * system prompt, or let the model run `usage --markdown`); `"text"` is what `usage` prints for a person.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ShellProgram, Tool, Toolkit } from "effect-agent-tools"
 *
 * const kit = Toolkit.make(Tool.make("ping", { description: "Ping", handler: () => Effect.succeed("pong") }))
 * const forTheModel = ShellProgram.usage(kit, { name: "my-tools" })
 * ```
 *
 * @since 0.1.0
 * @category usage
 */
export const usage = (
  toolkit: Toolkit.Toolkit,
  options: Options & { readonly format?: "markdown" | "text" | undefined }
): string =>
  options.format === "text"
    ? Usage.fullText(options.name, options.description, toolkit)
    : Usage.markdown(options.name, options.description, toolkit)
