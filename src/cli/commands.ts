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
import type * as Layer from "effect/Layer"
import * as readline from "node:readline"
import * as Permission from "../Permission.js"
import * as Tool from "../Tool.js"
import type * as ToolDefinition from "../ToolDefinition.js"
import * as ToolError from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import type * as ToolResult from "../ToolResult.js"
import * as Workspace from "../Workspace.js"
import * as Demo from "./demo.js"
import { stderrSink, stdoutSink } from "./render.js"

export { version } from "./version.js"

/** A command line that cannot be run as given (exit code 2). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** A command that already said why it failed, ending with this exit code. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly code: number }> {}

export const demo = Demo.run(stdoutSink())

const formats = {
  openai: "openAiChat",
  responses: "openAiResponses",
  anthropic: "anthropic",
  gemini: "gemini",
  mcp: "mcp"
} as const satisfies Record<string, ToolDefinition.Format>

export const list = (
  root: string,
  format: keyof typeof formats
): Effect.Effect<void, Workspace.WorkspaceError, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit({ root })
    process.stdout.write(JSON.stringify(Toolkit.definitions(kit, formats[format]), null, 2) + "\n")
  }))

const readStdin = Effect.async<string>((resume) => {
  const chunks: Array<Buffer> = []
  process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
  process.stdin.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
  process.stdin.on("error", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
})

/** Asks on the terminal; with no terminal, refuses unless `yes`. */
export const terminalRequester = (yes: boolean): Layer.Layer<Permission.Requester> =>
  Permission.layer((request) => {
    if (yes) return Effect.succeed(Permission.allow)
    if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) {
      return Effect.succeed(Permission.deny("no terminal to ask on; run again with --yes to allow it"))
    }
    return Effect.async<Permission.Decision>((resume) => {
      const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
      const preview = request.preview === undefined ? "" : `${request.preview}\n`
      rl.question(
        `${preview}${request.tool} wants to ${request.action}: ${request.description}\nAllow? [y/N] `,
        (a) => {
          rl.close()
          resume(
            Effect.succeed(/^y(es)?$/i.test(a.trim()) ? Permission.allow : Permission.deny("refused at the prompt"))
          )
        }
      )
      return Effect.sync(() => rl.close())
    })
  })

/** How a result prints for a person: text parts as they are, other parts as a one-line summary. */
export const printable = (result: ToolResult.ToolResult): string =>
  result.content.map((part) => {
    switch (part.type) {
      case "text":
        return part.text
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType}, ${Math.floor(part.data.length * 3 / 4)} bytes]`
      case "resource":
        return part.resource.text ?? `[resource ${part.resource.uri}]`
      case "resource_link":
        return `[resource link ${part.uri}]`
    }
  }).join("\n")

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
        const line = `${fraction}${progress.message ?? ""}`.replace(/\s+/g, " ").slice(0, sink.columns - 1)
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
  root: string,
  toolName: string,
  json: string | undefined,
  yes: boolean
): Effect.Effect<void, Workspace.WorkspaceError | UsageError | CommandFailed, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const kit = yield* Workspace.toolkit({ root })
    const tool = kit.byName.get(toolName)
    if (tool === undefined) {
      return yield* Effect.fail(
        new UsageError({ message: `unknown tool "${toolName}"; the tools are ${Toolkit.names(kit).join(", ")}` })
      )
    }
    const args = json === "-" ? yield* readStdin : json ?? "{}"
    const progress = progressPrinter()
    const outcome = yield* Tool.execute(tool, { id: "cli", arguments: args }, { onProgress: progress.report }).pipe(
      Effect.provide(terminalRequester(yes)),
      Effect.ensuring(Effect.sync(progress.done))
    )
    if (Either.isLeft(outcome)) {
      process.stderr.write(`${ToolError.toModelText(outcome.left)}\n`)
      return yield* Effect.fail(new CommandFailed({ code: 1 }))
    }
    const text = printable(outcome.right)
    process.stdout.write(text.endsWith("\n") ? text : `${text}\n`)
  }))
