/**
 * Built-in coding tools confined to one folder: `read_file`, `write_file`, `edit_file`, `bash`, `glob`, `grep`,
 * `list_dir`.
 *
 * Every path resolves inside the root: absolute paths elsewhere, `..` escapes and symbolic links leading outside
 * (dangling ones included, at any depth) are refused with a message saying the path is outside the workspace. On
 * Linux the tools work relative to folders they hold open, so a folder swapped for a link mid-call is not
 * followed either. Only regular files are read. Writing over or editing an existing file
 * needs a `read_file` of it first (and refuses a file changed on disk since). Writes and edits are previewed as
 * unified diffs through `Permission` (action `write`); `bash` asks with action `execute` and the command as its
 * description. Calls on one file share the resource key `file:<absolute path>`, calls of `bash` the key
 * `shell:session`, so a batch keeps the model's order where it matters and runs the rest alongside.
 *
 * `bash` runs in one persistent shell per toolkit (the working directory and exported variables persist between
 * calls). Each command gets a process group of its own: interrupting or timing out a call ends that group,
 * background children included, and the shell stays usable. The shell is a `Scope` resource of the toolkit, gone
 * when the toolkit's scope closes. Right after a command starts, its process group id is written through
 * `Recorder.write` (namespace `bash/process`), so a host that dies mid-call can still find and end it.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Recorder from "./Recorder.js"
import * as Tool from "./Tool.js"
import * as Toolkit from "./Toolkit.js"
import * as Confined from "./workspace/confined.js"
import { WorkspaceError } from "./workspace/errors.js"
import * as Files from "./workspace/files.js"
import type { Root } from "./workspace/paths.js"
import * as Search from "./workspace/search.js"
import * as Shell from "./workspace/shell.js"

export {
  /**
   * Why a workspace tool refused or failed, in words the model can act on.
   *
   * @since 0.1.0
   * @category errors
   */
  WorkspaceError
}

/**
 * How long a `bash` command may run when the model gives no `timeout_ms`.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BASH_TIMEOUT: Duration.Duration = Duration.minutes(2)

/**
 * The longest `timeout_ms` a model may ask for.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_BASH_TIMEOUT: Duration.Duration = Duration.minutes(10)

/**
 * The record written when a `bash` command starts: its process group id and the command.
 *
 * @since 0.1.0
 * @category records
 */
export const BashProcess = Schema.Struct({ pgid: Schema.Int, command: Schema.String })

/**
 * The namespace of {@link BashProcess} records.
 *
 * @since 0.1.0
 * @category records
 */
export const BASH_PROCESS_NAMESPACE = "bash/process"

/**
 * Options of {@link toolkit}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The folder every tool is confined to. It must exist. */
  readonly root: string
  /** The default timeout of `bash` (default {@link DEFAULT_BASH_TIMEOUT}). */
  readonly bashTimeout?: Duration.DurationInput | undefined
}

const lastLine = (output: string): string => {
  const lines = output.trimEnd().split("\n")
  const line = lines[lines.length - 1] ?? ""
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

const bash = (shell: Effect.Effect<Shell.Shell, WorkspaceError>, defaultTimeout: Duration.Duration) =>
  Tool.make("bash", {
    description: "Run a shell command in the workspace's persistent shell (the working directory and exported " +
      "variables persist between calls). Output (stdout and stderr merged) is cut in the middle past " +
      `${Shell.MAX_OUTPUT_CHARACTERS} characters; the exit code is stated.`,
    parameters: {
      command: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "The command line to run" }),
      timeout_ms: Schema.optional(
        Schema.Int.pipe(Schema.between(1, Duration.toMillis(MAX_BASH_TIMEOUT))).annotations({
          description: `Stop the command after this many milliseconds (default ${Duration.toMillis(defaultTimeout)})`
        })
      )
    },
    failure: WorkspaceError,
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
    resource: "shell:session",
    permission: { action: "execute", describe: ({ command }) => command },
    handler: ({ command, timeout_ms }) =>
      Effect.gen(function*() {
        const session = yield* shell
        let soFar = ""
        const timeout = timeout_ms === undefined ? defaultTimeout : Duration.millis(timeout_ms)
        const result = yield* session.run(command, {
          onStarted: (pgid) =>
            Recorder.write(Recorder.makeRecord(BASH_PROCESS_NAMESPACE, BashProcess, { pgid, command })),
          onOutput: (output) => {
            soFar = output
            return Tool.progress({ message: lastLine(output), partial: output })
          }
        }).pipe(Effect.timeoutOption(timeout))
        if (Option.isNone(result)) {
          return yield* Effect.fail(
            new WorkspaceError({
              message: `the command timed out after ${Duration.format(timeout)} and was stopped (its whole process ` +
                `group was ended); output so far:\n${soFar === "" ? "(none)" : soFar}`
            })
          )
        }
        const { exitCode, output } = result.value
        return `${output === "" ? "(no output)" : output.replace(/\n$/, "")}\n(exit code ${exitCode})`
      })
  })

/**
 * The workspace tools for a folder, as a toolkit. Scoped: the persistent shell (started on the first `bash` call)
 * lives until the scope closes. Fails when the root is not an existing folder.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { Executor, Workspace } from "effect-agent-tools"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const kit = yield* Workspace.toolkit({ root: process.cwd() })
 *   return yield* Executor.run(kit, [
 *     { id: "1", name: "list_dir", arguments: "{}" },
 *     { id: "2", name: "bash", arguments: "{\"command\":\"git status --short\"}" }
 *   ])
 * })).pipe(Effect.provide(NodeContext.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolkit = (options: Options) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const absolute = path.resolve(options.root)
    const info = yield* fs.stat(absolute).pipe(
      Effect.mapError(() => new WorkspaceError({ message: `the workspace root ${options.root} does not exist` }))
    )
    if (info.type !== "Directory") {
      return yield* Effect.fail(new WorkspaceError({ message: `the workspace root ${options.root} is not a folder` }))
    }
    const real = yield* fs.realPath(absolute).pipe(Effect.orElseSucceed(() => absolute))
    const dir = yield* Confined.openRoot(real).pipe(
      Effect.mapError((error) =>
        new WorkspaceError({ message: `the workspace root ${options.root} cannot be opened: ${error.code}` })
      )
    )
    const root: Root = { path: absolute, real, dir }
    const seen: Files.Seen = new Map()
    const scope = yield* Effect.scope
    const shell = yield* Effect.cached(Scope.extend(Shell.make(absolute), scope))
    const timeout = options.bashTimeout === undefined ? DEFAULT_BASH_TIMEOUT : Duration.decode(options.bashTimeout)
    const files = { root, seen }
    return Toolkit.make(
      Files.readFile(files),
      Files.writeFile(files),
      Files.editFile(files),
      bash(shell, timeout),
      Search.glob(files),
      Search.grep(files),
      Search.listDir(files)
    )
  })
