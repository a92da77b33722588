/**
 * A toolkit run as one shell program: the words of a command line to a call, the call run, its result printed, and
 * the exit code (ShellProgram.ts documents the contract).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Elicitation from "../Elicitation.js"
import * as Permission from "../Permission.js"
import * as Tool from "../Tool.js"
import * as ToolError from "../ToolError.js"
import * as Toolkit from "../Toolkit.js"
import { cut, quoted } from "./quote.js"
import { flagsOf, merge, parse } from "./shellFlags.js"
import { EXIT, fullText, markdown, overviewText, toolText } from "./shellUsage.js"
import { printable, terminalElicitor, terminalRequester } from "./terminal.js"

/** How a shell program is set up (ShellProgram.Options). */
export interface Settings {
  readonly name: string
  readonly description: string | undefined
  readonly questions: "terminal" | "host"
}

/** Where a program writes, and what it reads: the process's own streams unless a test says otherwise. */
export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly stdin: Effect.Effect<string, string>
}

/** The most standard input a program reads for its JSON argument. */
export const MAX_STDIN_BYTES = 16 * 1024 * 1024

const readProcessStdin: Effect.Effect<string, string> = Effect.async<string, string>((resume) => {
  const chunks: Array<Buffer> = []
  let size = 0
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > MAX_STDIN_BYTES) {
      cleanup()
      resume(Effect.fail(`standard input is larger than ${MAX_STDIN_BYTES / 1024 / 1024} MB`))
      return
    }
    chunks.push(chunk)
  }
  const onEnd = () => {
    cleanup()
    resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
  }
  const onError = (error: Error) => {
    cleanup()
    resume(Effect.fail(`standard input cannot be read: ${error.message}`))
  }
  const cleanup = () => {
    process.stdin.off("data", onData)
    process.stdin.off("end", onEnd)
    process.stdin.off("error", onError)
    process.stdin.pause()
  }
  process.stdin.on("data", onData)
  process.stdin.on("end", onEnd)
  process.stdin.on("error", onError)
  return Effect.sync(cleanup)
})

export const processIo: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stdin: readProcessStdin
}

const COMMANDS = new Set(["help", "schema", "usage"])

/** Runs one command line; gives the exit code. Never fails: every problem is a message and a code. */
export const run = <Tools extends Tool.Any>(
  toolkit: Toolkit.Toolkit<Tools>,
  argv: ReadonlyArray<string>,
  settings: Settings,
  io: Io = processIo
): Effect.Effect<number, never, Tool.Requirements<Tools>> =>
  Effect.gen(function*() {
    const program = settings.name
    const usageError = (message: string) =>
      Effect.sync(() => {
        io.stderr(`${program}: ${message}\n`)
        return EXIT.usage
      })
    const print = (text: string) =>
      Effect.sync(() => {
        io.stdout(text.endsWith("\n") ? text : `${text}\n`)
        return EXIT.ok
      })
    const toolNamed = (name: string | undefined, command: string) => {
      if (name === undefined) return Either.left(`${command} needs a tool's name: ${program} ${command} <tool>`)
      return Option.match(Toolkit.lookup(toolkit, name), {
        onNone: () =>
          Either.left(
            `unknown tool ${quoted(name)}; the tools are ${
              Toolkit.names(toolkit).join(", ")
            } (${program} help lists them)`
          ),
        onSome: Either.right
      })
    }

    let at = 0
    let yes = false
    let forced = false
    while (at < argv.length && argv[at].startsWith("-") && !forced) {
      const word = argv[at++]
      if (word === "--yes") yes = true
      else if (word === "-h" || word === "--help") {
        return yield* print(overviewText(program, settings.description, toolkit))
      } else if (word === "--") forced = true
      else return yield* usageError(`unknown option ${cut(word)}; before the tool's name come only --yes and --help`)
    }
    const command = argv[at]
    if (command === undefined) {
      io.stderr(overviewText(program, settings.description, toolkit))
      return EXIT.usage
    }
    const rest = argv.slice(at + 1)
    if (!forced && COMMANDS.has(command) && Option.isNone(Toolkit.lookup(toolkit, command))) {
      switch (command) {
        case "help": {
          if (rest.length === 0) return yield* print(overviewText(program, settings.description, toolkit))
          const tool = toolNamed(rest[0], "help")
          return Either.isLeft(tool) ? yield* usageError(tool.left) : yield* print(toolText(program, tool.right))
        }
        case "schema": {
          const tool = toolNamed(rest[0], "schema")
          return Either.isLeft(tool)
            ? yield* usageError(tool.left)
            : yield* print(JSON.stringify(tool.right.inputSchema, null, 2))
        }
        case "usage": {
          if (rest.length === 1 && rest[0] === "--markdown") {
            return yield* print(markdown(program, settings.description, toolkit))
          }
          if (rest.length > 0) return yield* usageError(`usage takes only --markdown; got ${rest.join(" ")}`)
          return yield* print(fullText(program, settings.description, toolkit))
        }
      }
    }
    const found = toolNamed(command, "call")
    if (Either.isLeft(found)) return yield* usageError(found.left)
    const tool = found.right
    const flags = flagsOf(tool.inputSchema)
    const parsed = parse(tool.name, flags, rest, program)
    if (parsed._tag === "UsageProblem") return yield* usageError(parsed.message)
    if (parsed._tag === "Help") return yield* print(toolText(program, tool))
    const jsonText = parsed.json === "-" ? yield* Effect.either(io.stdin) : Either.right(parsed.json)
    if (Either.isLeft(jsonText)) return yield* usageError(jsonText.left)
    const merged = merge(tool.name, flags, parsed, jsonText.right, program)
    if ("_tag" in merged) return yield* usageError(merged.message)

    const unanswered: Array<string> = []
    const question = (request: Elicitation.Request) =>
      unanswered.push(`the question ${JSON.stringify(request.message)}`)
    const questions = settings.questions === "terminal"
      ? Layer.merge(
        terminalRequester(
          yes,
          (request) => unanswered.push(`a request for permission to ${request.action} (${request.description})`)
        ),
        terminalElicitor(undefined, question)
      )
      : yield* hostQuestions(yes, question)
    const outcome = yield* Tool.execute(tool, { id: `${program}-${tool.name}`, arguments: merged.arguments }).pipe(
      Effect.provide(questions)
    )
    if (Either.isLeft(outcome)) {
      io.stderr(`${ToolError.toModelText(outcome.left)}\n`)
      if (unanswered.length === 0) return EXIT.toolError
      io.stderr(`${program}: nobody was there to answer ${unanswered.join(", nor ")}\n`)
      return EXIT.unanswered
    }
    return yield* print(printable(outcome.right))
  })

/**
 * The host's own requester and elicitor, as they are, except that `--yes` allows what needs permission and an
 * elicitation answered `Cancel` counts as unanswered.
 */
const hostQuestions = (yes: boolean, nobody: (request: Elicitation.Request) => void) =>
  Effect.gen(function*() {
    const elicitor = yield* Elicitation.Elicitor
    const counted = Elicitation.layer((request) =>
      Effect.tap(elicitor.elicit(request), (result) => Effect.sync(() => result._tag === "Cancel" && nobody(request)))
    )
    return yes ? Layer.merge(counted, Permission.layer(() => Effect.succeed(Permission.allow))) : counted
  })
