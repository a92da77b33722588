/**
 * What each `agent-tools` command does, apart from its argument parsing (main.ts).
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { quoted } from "../internal/quote.js"
import { printable, terminalElicitor, terminalRequester } from "../internal/terminal.js"
import * as ShellProgram from "../ShellProgram.js"
import * as Tool from "../Tool.js"
import type * as ToolDefinition from "../ToolDefinition.js"
import * as ToolError from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import * as Workspace from "../Workspace.js"
import * as Records from "./records.js"
import { oneLine, stderrSink, stdoutSink, truncate } from "./render.js"

export { printable, terminalElicitor, terminalRequester } from "../internal/terminal.js"
export { version } from "./version.js"

/** A command line that cannot be run as given (exit code 2). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** A command that already said why it failed, ending with this exit code. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly code: number }> {}

/** Ends when stdout's reader goes away (EPIPE: `npm start | head`), so a command can stop there, cleaning up. */
const stdoutClosed: Effect.Effect<void> = Effect.async<void>((resume) => {
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") resume(Effect.void)
  }
  process.stdout.on("error", onError)
  return Effect.sync(() => void process.stdout.off("error", onError))
})

/** `demo`, loaded when it runs (see inspect.ts). */
export const demo = Effect.raceFirst(
  Effect.flatMap(Effect.promise(() => import("./demo.js")), (Demo) => Demo.run(stdoutSink())),
  stdoutClosed
)

export const list = (
  workspace: Workspace.Options,
  format: ToolDefinition.Format
): Effect.Effect<void, Workspace.WorkspaceError, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit(workspace)
    process.stdout.write(JSON.stringify(Toolkit.definitions(kit, format), null, 2) + "\n")
  }))

const readStdin = Effect.async<string>((resume) => {
  const chunks: Array<Buffer> = []
  process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
  process.stdin.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
  process.stdin.on("error", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
})

/** Progress for people: a live line on a terminal, a line per report elsewhere. */
export const progressPrinter = () => {
  const sink = stderrSink()
  let live = false
  return {
    report: (progress: Tool.Progress) =>
      Effect.sync(() => {
        const fraction = progress.progress !== undefined && progress.total !== undefined
          ? `${progress.progress}/${progress.total} `
          : ""
        const line = truncate(oneLine(`${fraction}${progress.message ?? ""}`), sink.columns - 1)
        if (sink.isTTY) {
          sink.write(`\r\x1b[2K${line}`)
          live = true
        } else if (line !== "") {
          sink.write(`${line}\n`)
        }
      }),
    done: () => {
      if (live) sink.write("\r\x1b[2K")
    }
  }
}

export const call = (
  workspace: Workspace.Options,
  toolName: string,
  json: string | undefined,
  yes: boolean
): Effect.Effect<void, Workspace.WorkspaceError | UsageError | CommandFailed, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit(workspace)
    const tool = kit.byName.get(toolName)
    if (tool === undefined) {
      return yield* Effect.fail(
        new UsageError({ message: `unknown tool ${quoted(toolName)}; the tools are ${Toolkit.names(kit).join(", ")}` })
      )
    }
    const args = json === "-" ? yield* readStdin : json ?? "{}"
    const progress = progressPrinter()
    const outcome = yield* Tool.execute(tool, { id: "cli", arguments: args }, { onProgress: progress.report }).pipe(
      Effect.provide(Layer.merge(terminalRequester(yes), terminalElicitor())),
      Effect.ensuring(Effect.sync(progress.done))
    )
    if (Either.isLeft(outcome)) {
      process.stderr.write(`${ToolError.toModelText(outcome.left)}\n`)
      return yield* Effect.fail(new CommandFailed({ code: 1 }))
    }
    const text = printable(outcome.right)
    process.stdout.write(text.endsWith("\n") ? text : `${text}\n`)
  })).pipe(Effect.provide(Records.layer(workspace.root)))

/** The name `agent-tools run` gives itself in its usage text. */
const RUN = "agent-tools run"

/**
 * `agent-tools run [--root DIR] [--fetch] <what ShellProgram.run takes>`: the workspace toolkit as a shell program.
 * Its own options come first; everything from the first other word on is the program's command line (so a tool's
 * flags are never taken for the CLI's). Parsed here, not by @effect/cli, whose commands are fixed in advance.
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<number, never, FileSystem.FileSystem | Path.Path> =>
  Effect.suspend(() => {
    // a reader that goes away (`agent-tools run ... | head`) ends the output, not the process with a stack trace
    process.stdout.on("error", () => {})
    let root = process.cwd()
    let fetch = false
    let at = 0
    for (; at < argv.length; at++) {
      const word = argv[at]
      if (word === "--fetch") fetch = true
      else if (word === "--root" || word.startsWith("--root=")) {
        const value = word === "--root" ? argv[++at] : word.slice("--root=".length)
        if (value === undefined || value === "") {
          process.stderr.write(`${RUN}: --root needs a folder: --root <dir>\n`)
          return Effect.succeed(2)
        }
        root = value
      } else break
    }
    return Effect.scoped(Effect.gen(function*() {
      const kit = yield* Effect.either(Workspace.toolkit({ root, fetch }))
      if (Either.isLeft(kit)) {
        process.stderr.write(`${RUN}: ${kit.left.message}\n`)
        return 2
      }
      return yield* ShellProgram.run(kit.right, argv.slice(at), {
        name: RUN,
        description: "the workspace tools, confined to --root (default: the current folder)"
      })
    })).pipe(Effect.provide(Records.layer(root)))
  })
