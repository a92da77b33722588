/**
 * Built-in coding tools confined to one folder: `read_file`, `write_file`, `edit_file`, `apply_patch`, `bash`,
 * `glob`, `grep`, `list_dir`, and `fetch` when asked for ({@link Options}).
 *
 * Every path resolves inside the root: absolute paths elsewhere, `..` escapes and symbolic links leading outside
 * (dangling ones included, at any depth) are refused with a message saying the path is outside the workspace. On
 * Linux the tools work relative to folders they hold open, opening each component without following links and
 * checking every descriptor they read or write through, so a folder swapped for a link mid-call is not followed
 * either (docs/workspace.md says exactly what is left). Writes are atomic (a temporary file renamed over the
 * target). Only regular files are read: a FIFO or a device is refused by name and skipped by walks, never opened
 * for a read that could wait forever. Overwriting or editing an existing file needs a `read_file` of it first (and
 * refuses a file changed on disk since). Writes and edits are previewed as unified diffs through `Permission`
 * (action `write`); `bash` asks with action `execute` and the command as its description. Calls on one file share
 * the resource key `file:<absolute path>`, calls of `bash` the key `shell:session`, so a batch keeps the model's
 * order where it matters and runs the rest alongside. `grep` takes RE2 syntax and matches in linear time.
 *
 * `apply_patch` applies a patch of several files (the apply_patch format or a unified diff) all or nothing: every
 * file is planned in memory and staged before the first is committed, and a failed commit puts back what it
 * committed. `fetch` (off by default: it is network access) reads a URL as text, HTML as Markdown, bounded in size
 * and time, and reaches public addresses only unless the host allows more ({@link FetchOptions}).
 *
 * `bash` keeps one shell's state per toolkit (the working directory and exported variables persist between
 * calls), each command run by a bash of its own in a process group and session of its own: interrupting or timing
 * out a call ends every process it started (`setsid` included), and a bash that is killed costs only its own
 * command. Output is read from a pipe and kept head and tail, never written to disk. The shell is a `Scope`
 * resource of the toolkit: closing the scope ends every process its commands left running. Before a command runs,
 * its process group id and marker are written through `Recorder.write` (namespace `bash/process`), so a host that
 * dies mid-call can still find and end what it started ({@link endLeftovers}).
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
import * as ApplyPatch from "./workspace/applyPatch.js"
import * as Confined from "./workspace/confined.js"
import { WorkspaceError } from "./workspace/errors.js"
import * as Fetch from "./workspace/fetch.js"
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
 * The record written when a `bash` command starts, before it runs: its process group id, the command, and the
 * marker every process it starts carries in its environment (`AGENT_TOOLS_SHELL=<marker>`), which is how
 * {@link endLeftovers} tells them from processes that reused their ids.
 *
 * @since 0.1.0
 * @category records
 */
export const BashProcess = Schema.Struct({ pgid: Schema.Int, command: Schema.String, marker: Schema.String })

/**
 * A decoded {@link BashProcess} record.
 *
 * @since 0.1.0
 * @category records
 */
export type BashProcess = typeof BashProcess.Type

/**
 * The namespace of {@link BashProcess} records.
 *
 * @since 0.1.0
 * @category records
 */
export const BASH_PROCESS_NAMESPACE = Shell.RECORD_NAMESPACE

/**
 * Ends what recorded `bash` commands left running, for a host recovering from a crash (a journaled run resumed by
 * another host does it with its built-in cleanup of these records, see `Journal.Cleanup`): every live process whose
 * environment carries one of the records' markers (found through `/proc`, so also those that left the process
 * group with `setsid`), SIGTERM then SIGKILL after a grace. A process without the marker is never touched,
 * whatever its process group: ids are reused. Gives how many processes were found. Without `/proc` it finds
 * nothing.
 *
 * @example
 * ```ts
 * import { Effect, Either } from "effect"
 * import { Recorder, Workspace } from "effect-agent-tools"
 *
 * // the records a dead host left: end what their commands left running
 * const recover = (records: ReadonlyArray<Recorder.Record>) =>
 *   Workspace.endLeftovers(
 *     records.flatMap((record) => {
 *       const started = Recorder.decode(record, Workspace.BashProcess)
 *       return Either.isRight(started) ? [started.right] : []
 *     })
 *   )
 * ```
 *
 * @since 0.1.0
 * @category recovery
 */
export const endLeftovers = (processes: ReadonlyArray<BashProcess>): Effect.Effect<number> =>
  Effect.suspend(() => Shell.endMarked(new Set(processes.map((p) => p.marker))))

/**
 * How much of a body `fetch` reads (after decompression) when {@link FetchOptions} set no `maxBytes`: 5 MB.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_FETCH_MAX_BYTES: number = Fetch.DEFAULT_FETCH_MAX_BYTES

/**
 * How long one `fetch` (redirects included) may take when {@link FetchOptions} set no `timeout`: 30 seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_FETCH_TIMEOUT: Duration.Duration = Fetch.DEFAULT_FETCH_TIMEOUT

/**
 * How many redirects `fetch` follows when {@link FetchOptions} set no `maxRedirects`: 5.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_FETCH_MAX_REDIRECTS: number = Fetch.DEFAULT_FETCH_MAX_REDIRECTS

/**
 * What `fetch` may do. It is network access for a model that reads pages anyone can write, so it reaches public
 * addresses only unless told otherwise (docs/workspace.md, "fetch").
 *
 * @example
 * ```ts
 * import type { Workspace } from "effect-agent-tools"
 *
 * // the public web, and the docs server on this machine's port 4000; nothing else private
 * const fetch: Workspace.FetchOptions = { allowHosts: ["localhost:4000"], timeout: "10 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface FetchOptions {
  /** How much of a body is read, after decompression (default {@link DEFAULT_FETCH_MAX_BYTES}). */
  readonly maxBytes?: number | undefined
  /** How long one fetch may take, redirects included (default {@link DEFAULT_FETCH_TIMEOUT}). */
  readonly timeout?: Duration.DurationInput | undefined
  /** How many redirects are followed (default {@link DEFAULT_FETCH_MAX_REDIRECTS}). */
  readonly maxRedirects?: number | undefined
  /**
   * Whether loopback, private, link-local and other non-public addresses may be reached, by the first URL or a
   * redirect (default false: a page the model read could otherwise point it at the router, a local server or a
   * cloud metadata service).
   */
  readonly allowPrivateNetwork?: boolean | undefined
  /** Hosts (`name` or `name:port`, as in a URL) that may be reached whatever their addresses. */
  readonly allowHosts?: ReadonlyArray<string> | undefined
  /** The `User-Agent` header (default `effect-agent-tools-fetch/0.1`). */
  readonly userAgent?: string | undefined
}

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
  /**
   * Whether the toolkit has `apply_patch` (default true): it writes only as `edit_file` does (confined, previewed,
   * the same resource keys), several files at once.
   */
  readonly applyPatch?: boolean | undefined
  /**
   * Whether the toolkit has `fetch` (default false), and what it may reach. Off by default: it is network access,
   * and a model can send what it read in a URL as easily as it can read a page.
   */
  readonly fetch?: boolean | FetchOptions | undefined
}

const fetchSettings = (given: FetchOptions): Fetch.Settings => ({
  maxBytes: given.maxBytes ?? Fetch.DEFAULT_FETCH_MAX_BYTES,
  timeout: given.timeout === undefined ? Fetch.DEFAULT_FETCH_TIMEOUT : Duration.decode(given.timeout),
  maxRedirects: given.maxRedirects ?? Fetch.DEFAULT_FETCH_MAX_REDIRECTS,
  allowPrivateNetwork: given.allowPrivateNetwork === true,
  allowHosts: new Set((given.allowHosts ?? []).map((host) => host.toLowerCase())),
  userAgent: given.userAgent ?? "effect-agent-tools-fetch/0.1"
})

const lastLine = (output: string): string => {
  const lines = output.trimEnd().split("\n")
  const line = lines[lines.length - 1] ?? ""
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

/** The line that ends a `bash` answer: how the command ended, and what the model should know about the state. */
const ending = (result: Shell.CommandResult): string => {
  const notes = result.notes.map((note) => `(${note})\n`).join("")
  return result.ending._tag === "Exited"
    ? `${notes}(exit code ${result.ending.code})`
    : `${notes}(the shell running this command was killed by ${result.ending.signal}; the working directory and ` +
      "exported variables are as they were before this command; the next command starts a new shell)"
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
          onStarted: ({ marker, pgid }) =>
            Recorder.write(Recorder.makeRecord(BASH_PROCESS_NAMESPACE, BashProcess, { pgid, command, marker })),
          onOutput: (output) => {
            soFar = output
            return Tool.progress({ message: lastLine(output), partial: output })
          }
        }).pipe(Effect.timeoutOption(timeout))
        if (Option.isNone(result)) {
          return yield* Effect.fail(
            new WorkspaceError({
              message: `the command timed out after ${Duration.format(timeout)} and was stopped (every process it ` +
                "started was ended; the working directory and exported variables are as they were before it); " +
                `output so far:\n${soFar === "" ? "(none)" : soFar}`
            })
          )
        }
        const output = result.value.output
        return `${output === "" ? "(no output)" : output.replace(/\n$/, "")}\n${ending(result.value)}`
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
      ...(options.applyPatch === false ? [] : [ApplyPatch.applyPatch(files)]),
      bash(shell, timeout),
      Search.glob(files),
      Search.grep(files),
      Search.listDir(files),
      ...(options.fetch === undefined || options.fetch === false
        ? []
        : [Fetch.fetchTool(fetchSettings(options.fetch === true ? {} : options.fetch))])
    )
  })
