/**
 * The shell behind `bash`.
 *
 * What persists between commands is data held here, not a process: the working directory and the exported
 * environment. Each command runs in a bash of its own, started in that directory with that environment, in a
 * session and process group of its own (its leader is the bash). When the command ends, the wrapper around it
 * writes the directory and the exported variables it ended with to a file, which this module reads back as data
 * (NUL-separated, never sourced) and keeps for the next command. So:
 * - nothing a command does reaches the protocol: the exit status is the bash process's own, as the kernel reports
 *   it; the end of a command is its process's exit; output is read from a pipe; of one command nothing but its
 *   directory and exported variables reaches the next one's bash, no function, alias, trap or option;
 * - a bash that is killed (`kill -9 $$`, the OOM killer) takes nothing with it but that command: the next command
 *   starts as usual, with the state from before the killed one, and the killed one's answer says so;
 * - `unset` lasts (the environment is what the command left, not a merge), and so do `cd` and `export` in a
 *   command that sets its own `trap ... EXIT`: the state is saved when the command's code ends, not only by the
 *   wrapper's EXIT trap (which such a command replaces; a command that does both, and then calls `exit`, loses
 *   its changes).
 * What the state can hold is what the command chose anyway; variables bash reads at startup (`BASH_ENV`, `ENV`,
 * `LD_PRELOAD`, ...) are kept out of the wrapper's start and exported again just before the command runs, so a
 * command cannot plant code that runs before the next wrapper does. `SHELLOPTS` and `BASHOPTS` do not carry over
 * (shell options never did).
 *
 * The process group's id is handed to `onStarted` (for a durable record) before the command can run: the wrapper
 * waits for a line on its stdin, written once the record is durable. Every process a command starts carries a
 * marker in its environment (`AGENT_TOOLS_SHELL=<shell id>:<command number>`), so stopping a command, or closing
 * the shell, ends every process it started: by process group, by parent, session and group links while they hold
 * (processTree.ts), and by that marker after they no longer do (`setsid`, a parent that exited).
 *
 * Output (stdout and stderr merged, in order) is read from a pipe: the first and the last
 * {@link OUTPUT_KEPT_BYTES} are kept, everything between is counted and dropped as it arrives, so `yes` costs no
 * disk and bounded memory. Once the command has returned, what its background processes still write to that pipe
 * is read and dropped at most {@link BACKGROUND_BYTES_PER_SECOND}, so a server's log never blocks the server and
 * `yes &` costs next to nothing.
 *
 * The shell is a `Scope` resource of the toolkit: closing the scope ends every process its commands started.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import type { Readable } from "node:stream"
import * as Process from "../internal/process.js"
import * as ProcessTree from "../internal/processTree.js"
import { WorkspaceError } from "./errors.js"

/** Output past this many characters is cut in the middle, keeping the head and the tail. */
export const MAX_OUTPUT_CHARACTERS = 30_000

/** How often a running command's output is reported as progress, in milliseconds. */
export const PROGRESS_INTERVAL_MILLIS = 250

/** Bytes of a command's output kept from its start, and as many from its end; the middle is dropped as it comes. */
export const OUTPUT_KEPT_BYTES = 64 * 1024

/** How fast output written after a command returned (by what it left running) is read and dropped, in bytes/s. */
export const BACKGROUND_BYTES_PER_SECOND = 1024 * 1024

/** The largest state (working directory and environment) a command may leave; a larger one is not kept. */
export const MAX_STATE_BYTES = 2 * 1024 * 1024

/** How long a stopped command's processes get between SIGTERM and SIGKILL, in milliseconds. */
export const STOP_GRACE_MILLIS = 1_000

/** The namespace of the record a command writes before it runs (`Workspace.BashProcess`). */
export const RECORD_NAMESPACE = "bash/process"

/** The environment variable every process a command starts carries: `<shell id>:<command number>`. */
export const MARKER_VARIABLE = "AGENT_TOOLS_SHELL"

/**
 * Ends every live process whose environment carries one of `markers` (found through `/proc`, so also those that
 * left their process group with `setsid`), SIGTERM then SIGKILL after {@link STOP_GRACE_MILLIS}; gives how many it
 * found. What a dead host's commands left running: a process without a recorded marker is never touched, whatever
 * its process group (ids are reused). Without `/proc` it finds nothing.
 */
export const endMarked = (markers: ReadonlySet<string>): Effect.Effect<number> =>
  Effect.suspend(() => {
    if (markers.size === 0) return Effect.succeed(0)
    const find = () => ProcessTree.withEnvironment(MARKER_VARIABLE, (value) => markers.has(value))
    const found = find().length
    return Effect.as(ProcessTree.end({ graceMillis: STOP_GRACE_MILLIS, find }), found)
  })

/** Variables bash acts on as it starts: kept out of the wrapper's start, exported again for the command. */
const STARTUP_VARIABLES: ReadonlyArray<string> = ["BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"]

/** Variables bash reads at startup that cannot be exported again (readonly in bash): they do not carry over. */
const DROPPED_VARIABLES: ReadonlySet<string> = new Set(["SHELLOPTS", "BASHOPTS"])

/** Variables bash sets for itself; what a command leaves in them is not state. */
const OWN_VARIABLES: ReadonlySet<string> = new Set(["SHLVL", "_", MARKER_VARIABLE])

/** How a command ended. */
export type Ending =
  | { readonly _tag: "Exited"; readonly code: number }
  | { readonly _tag: "Killed"; readonly signal: string }

export interface CommandResult {
  /** Head and tail of the output, with a marker where the middle was cut. */
  readonly output: string
  readonly ending: Ending
  /** What the model should know about the shell's state after this command (it was lost, or not kept). */
  readonly notes: ReadonlyArray<string>
}

/** What a command is known by while it runs: its process group, and the marker its processes carry. */
export interface Started {
  readonly pgid: number
  readonly marker: string
}

export interface Shell {
  /**
   * Runs one command. `onStarted` receives its process group and marker before the command runs (for a durable
   * record; if it fails, the command never runs); `onOutput` receives the output so far while it runs, and once
   * more when it is stopped. Interrupting the effect ends every process the command started.
   */
  readonly run: (
    command: string,
    hooks: {
      readonly onStarted: (started: Started) => Effect.Effect<void, unknown>
      readonly onOutput: (outputSoFar: string) => Effect.Effect<void>
    }
  ) => Effect.Effect<CommandResult, WorkspaceError>
}

const BASH_CANDIDATES = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"]

const findBash = (): string | undefined => {
  for (const candidate of BASH_CANDIDATES) if (fs.existsSync(candidate)) return candidate
  for (const dir of (process.env.PATH ?? "").split(nodePath.delimiter)) {
    if (dir !== "" && fs.existsSync(nodePath.join(dir, "bash"))) return nodePath.join(dir, "bash")
  }
  return undefined
}

/** Head and tail of a long output, with a marker saying how much was cut. */
export const truncateMiddle = (text: string, limit: number = MAX_OUTPUT_CHARACTERS): string => {
  if (text.length <= limit) return text
  const head = text.slice(0, Math.floor(limit / 2))
  const tail = text.slice(text.length - Math.floor(limit / 2))
  return `${head}\n… [${text.length - head.length - tail.length} characters cut] …\n${tail}`
}

/** The start of `bytes` up to its last complete UTF-8 character. */
const wholeCharactersFromStart = (bytes: Buffer): Buffer => {
  let end = bytes.length
  // step back over a trailing sequence that is cut short
  let back = 0
  while (back < 4 && end - back - 1 >= 0 && (bytes[end - back - 1] & 0xc0) === 0x80) back++
  const lead = bytes[end - back - 1]
  if (lead !== undefined && lead >= 0xc0) {
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
    if (back + 1 < length) end -= back + 1
  }
  return bytes.subarray(0, end)
}

/** The end of `bytes` from its first complete UTF-8 character. */
const wholeCharactersToEnd = (bytes: Buffer): Buffer => {
  let start = 0
  while (start < Math.min(bytes.length, 3) && (bytes[start] & 0xc0) === 0x80) start++
  return bytes.subarray(start)
}

/**
 * A command's output as it arrives: the first {@link OUTPUT_KEPT_BYTES} and the last as many, and a count of the
 * rest. Memory is bounded whatever the command writes.
 */
class Output {
  private head: Array<Buffer> = []
  private headBytes = 0
  private tail: Array<Buffer> = []
  private tailBytes = 0
  total = 0
  lastDataAt = 0

  push(chunk: Buffer): void {
    this.total += chunk.length
    this.lastDataAt = Date.now()
    if (this.headBytes < OUTPUT_KEPT_BYTES) {
      const take = chunk.subarray(0, OUTPUT_KEPT_BYTES - this.headBytes)
      this.head.push(take)
      this.headBytes += take.length
      chunk = chunk.subarray(take.length)
      if (chunk.length === 0) return
    }
    this.tail.push(chunk)
    this.tailBytes += chunk.length
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= OUTPUT_KEPT_BYTES) {
      this.tailBytes -= this.tail.shift()!.length
    }
  }

  /** The output for the model: all of it cut to {@link MAX_OUTPUT_CHARACTERS}, with a marker where it was cut. */
  render(): string {
    const head = Buffer.concat(this.head)
    let tail = Buffer.concat(this.tail)
    if (tail.length > OUTPUT_KEPT_BYTES) tail = tail.subarray(tail.length - OUTPUT_KEPT_BYTES)
    const dropped = this.total - head.length - tail.length
    if (dropped === 0) return truncateMiddle(Buffer.concat([head, tail]).toString("utf8"))
    const half = Math.floor(MAX_OUTPUT_CHARACTERS / 2)
    const headText = wholeCharactersFromStart(head).toString("utf8").slice(0, half)
    const tailText = wholeCharactersToEnd(tail).toString("utf8")
    const tailShown = tailText.slice(Math.max(0, tailText.length - half))
    const cut = this.total - Buffer.byteLength(headText) - Buffer.byteLength(tailShown)
    return `${headText}\n… [${cut} bytes cut] …\n${tailShown}`
  }
}

/** What persists between commands. */
interface State {
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * The wrapper around one command (run by `bash -c`): wait for the go-ahead, merge stderr into stdout, export the
 * startup variables again, run the command, save the state however it ends. The save calls builtins as builtins, so
 * a command that defines `printf` or `echo` of its own does not lose its state.
 */
const wrapper = (command: string, stateFile: string, restored: ReadonlyArray<readonly [string, string]>): string =>
  [
    // the group exists and is recorded before the command can do anything; up to the command, nothing but the
    // wrapper has run in this bash, so builtins are themselves; the save runs after it, and says `builtin`
    "IFS= read -r __agent_tools_go || exit 125",
    "unset __agent_tools_go",
    "exec </dev/null 2>&1",
    "__agent_tools_save() {",
    "  builtin local IFS=$' \\t\\n' __agent_tools_name",
    "  {",
    "    builtin printf '%s\\0' \"$PWD\"",
    "    for __agent_tools_name in $(builtin compgen -e); do",
    "      [[ -v $__agent_tools_name ]] &&",
    "        builtin printf '%s=%s\\0' \"$__agent_tools_name\" \"${!__agent_tools_name}\"",
    "    done",
    "    builtin printf '\\0'",
    `  } >| ${quote(stateFile)} 2>/dev/null`,
    "}",
    "trap __agent_tools_save EXIT",
    ...restored.map(([name, value]) => `export ${name}=${quote(value)}`),
    `. ${quote(command)}`,
    "__agent_tools_status=$?",
    "__agent_tools_save",
    "builtin exit \"$__agent_tools_status\"",
    ""
  ].join("\n")

/** The state a command saved, or why it is not used. */
const readState = (file: string): State | string => {
  let bytes: Buffer
  try {
    const { O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = fs.constants
    const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
    try {
      const stats = fs.fstatSync(fd)
      if (!stats.isFile()) return "unreadable"
      if (stats.size > MAX_STATE_BYTES) return "too large"
      bytes = Buffer.alloc(stats.size)
      let at = 0
      while (at < bytes.length) {
        const read = fs.readSync(fd, bytes, at, bytes.length - at, at)
        if (read === 0) break
        at += read
      }
      bytes = bytes.subarray(0, at)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return "missing"
  }
  const text = bytes.toString("utf8")
  if (!text.endsWith("\0\0")) return "unreadable"
  const [cwd, ...variables] = text.slice(0, -2).split("\0")
  if (cwd === "" || !nodePath.isAbsolute(cwd)) return "unreadable"
  const env: Record<string, string> = {}
  for (const variable of variables) {
    const at = variable.indexOf("=")
    const name = variable.slice(0, at)
    if (at <= 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return "unreadable"
    if (!OWN_VARIABLES.has(name)) env[name] = variable.slice(at + 1)
  }
  return { cwd, env }
}

const STATE_KEPT_AS_BEFORE = "the working directory and exported variables are as they were before this command"

const isDirectory = (path: string): boolean => {
  try {
    return fs.statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * One command's bash, from its spawn to its exit: its pid (the leader of its group and session), its output, and
 * how to end everything it started.
 */
class Running {
  readonly output = new Output()
  readonly exited = Deferred.unsafeMake<Ending>(FiberId.none)
  /** Whether the output pipe has ended (nothing the command started holds it any more). */
  ended = false
  private constructor(
    readonly child: ChildProcess.ChildProcess,
    readonly pid: number,
    readonly marker: string,
    private readonly startTicks: number | undefined
  ) {
    child.stdout!.on("data", (chunk: Buffer) => this.output.push(chunk))
    child.stdout!.once("end", () => (this.ended = true))
    child.stdin!.on("error", () => {})
  }

  /** Spawns the bash of a command: waiting for its go-ahead, in a session and group of its own. */
  static spawn = (
    bash: string,
    script: string,
    options: { readonly cwd: string; readonly env: Record<string, string>; readonly marker: string }
  ): Effect.Effect<Running, WorkspaceError> =>
    Effect.async<Running, WorkspaceError>((resume) => {
      const failed = (error: unknown) =>
        resume(Effect.fail(new WorkspaceError({ message: `bash could not be started: ${error}` })))
      let child: ChildProcess.ChildProcess
      try {
        child = ChildProcess.spawn(bash, ["--noprofile", "--norc", "-c", script, "bash"], {
          cwd: options.cwd,
          env: options.env,
          detached: true,
          stdio: ["pipe", "pipe", "ignore"]
        })
      } catch (error) {
        return failed(error)
      }
      const exited = (running: Running) =>
        child.once("exit", (code, signal) =>
          Deferred.unsafeDone(
            running.exited,
            Exit.succeed<Ending>(signal !== null ? { _tag: "Killed", signal } : { _tag: "Exited", code: code ?? 0 })
          ))
      const started = () => {
        const running = new Running(child, child.pid!, options.marker, ProcessTree.info(child.pid!)?.startTicks)
        exited(running)
        resume(Effect.succeed(running))
      }
      if (child.pid !== undefined) return started()
      child.once("spawn", started)
      child.once("error", (error) => failed(error.message))
    })

  /** Lets the command run (the wrapper waits for this line). */
  go(): void {
    this.child.stdin!.end("\n")
  }

  /** Every live process of the command: the bash, what it started (links and marker alike). */
  processes(): Array<ProcessTree.ProcessInfo> {
    const all = ProcessTree.list()
    const found = new Map<number, ProcessTree.ProcessInfo>()
    const self = all.find((p) => p.pid === this.pid && p.startTicks === this.startTicks)
    if (self !== undefined) found.set(self.pid, self)
    for (const p of ProcessTree.descendants(this.pid, { startTicks: this.startTicks, processes: all })) {
      found.set(p.pid, p)
    }
    for (const p of ProcessTree.withEnvironment(MARKER_VARIABLE, (v) => v === this.marker, all)) found.set(p.pid, p)
    return [...found.values()]
  }

  /** Ends every process of the command, then waits (bounded) for the bash's exit to be reported. */
  readonly stop: Effect.Effect<void> = Effect.suspend(() =>
    Effect.zipRight(
      ProcessTree.end({ graceMillis: STOP_GRACE_MILLIS, groups: [this.pid], find: () => this.processes() }),
      Effect.raceFirst(
        Effect.interruptible(Deferred.await(this.exited)),
        Effect.interruptible(Process.realSleep(5_000))
      )
    )
  )

  /**
   * Waits, after the exit, for output written just before it that may not have been read yet: until the pipe ends
   * or has been quiet for a moment (a background writer keeps it busy: then a quarter of a second at most).
   *
   * Each wait ends after the event loop's next poll for I/O (`realSleep` does): in a busy process a late timer
   * would otherwise take the output as quiet, and lose it, though it was in the pipe all along.
   */
  readonly settle: Effect.Effect<void> = Effect.suspend(() => {
    const exitedAt = Date.now()
    const quiet = () => Date.now() - Math.max(this.output.lastDataAt, exitedAt) >= 25
    return Effect.whileLoop({
      while: () => !this.ended && !quiet() && Date.now() - exitedAt < 250,
      body: () => Process.realSleep(5),
      step: () => {}
    })
  })
}

/** Starts the shell in `root`; closing the scope ends every process its commands started. */
export const make = (root: string): Effect.Effect<Shell, WorkspaceError, Scope.Scope> =>
  Effect.gen(function*() {
    const bash = findBash()
    if (bash === undefined) {
      return yield* Effect.fail(
        new WorkspaceError({ message: `bash is not installed (looked in ${BASH_CANDIDATES.join(", ")} and PATH)` })
      )
    }
    const folder = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(nodePath.join(os.tmpdir(), "agent-tools-shell-"))),
      (folder) => Effect.sync(() => fs.rmSync(folder, { recursive: true, force: true }))
    )
    const shellId = randomUUID()
    const initial: Record<string, string> = { PAGER: "cat", GIT_PAGER: "cat" }
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !OWN_VARIABLES.has(name) && !(name in initial)) initial[name] = value
    }
    let state: State = { cwd: root, env: initial }
    /** Process groups of commands that left something running, ended with the shell. */
    const groups = new Set<number>()
    /** Output pipes still held open by what commands left running. */
    const background = new Set<Readable>()
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        ProcessTree.end({
          graceMillis: STOP_GRACE_MILLIS / 2,
          groups: [...groups],
          find: () => ProcessTree.withEnvironment(MARKER_VARIABLE, (value) => value.startsWith(`${shellId}:`))
        }),
        Effect.sync(() => {
          for (const stream of background) stream.destroy()
          background.clear()
        })
      )
    )
    const lock = yield* Effect.makeSemaphore(1)
    let next = 0

    /** Keeps reading a pipe that what a command left running holds, dropping it, at a bounded rate. */
    const drain = (stream: Readable) => {
      if (stream.readableEnded || stream.destroyed) return
      background.add(stream)
      let windowStart = Date.now()
      let windowBytes = 0
      stream.removeAllListeners("data")
      stream.on("data", (chunk: Buffer) => {
        const now = Date.now()
        if (now - windowStart >= 1000) {
          windowStart = now
          windowBytes = 0
        }
        windowBytes += chunk.length
        if (windowBytes >= BACKGROUND_BYTES_PER_SECOND) {
          stream.pause()
          setTimeout(() => stream.destroyed || stream.resume(), 1000 - (now - windowStart)).unref()
        }
      })
      stream.once("close", () => background.delete(stream))
    }

    /** The environment a command's bash starts with, and the startup variables the wrapper exports again. */
    const environment = (marker: string) => {
      const env: Record<string, string> = {}
      const restored: Array<readonly [string, string]> = []
      for (const [name, value] of Object.entries(state.env)) {
        if (STARTUP_VARIABLES.includes(name)) restored.push([name, value])
        else if (!DROPPED_VARIABLES.has(name)) env[name] = value
      }
      env[MARKER_VARIABLE] = marker
      return { env, restored }
    }

    const run: Shell["run"] = (command, hooks) =>
      lock.withPermits(1)(
        Effect.gen(function*() {
          const id = ++next
          const marker = `${shellId}:${id}`
          const commandFile = nodePath.join(folder, `command-${id}-${randomUUID()}`)
          const stateFile = nodePath.join(folder, `state-${id}-${randomUUID()}`)
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              fs.rmSync(commandFile, { force: true })
              fs.rmSync(stateFile, { force: true })
            })
          )
          const notes: Array<string> = []
          let cwd = state.cwd
          if (!isDirectory(cwd)) {
            notes.push(`the working directory ${cwd} no longer exists; this command ran in the workspace root`)
            cwd = root
          }
          yield* Effect.try({
            try: () => fs.writeFileSync(commandFile, command + "\n", { mode: 0o600 }),
            catch: (error) => new WorkspaceError({ message: `the command could not be handed to bash: ${error}` })
          })
          const { env, restored } = environment(marker)
          const running = yield* Running.spawn(bash, wrapper(commandFile, stateFile, restored), { cwd, env, marker })
          const ending: Ending = yield* Effect.gen(function*() {
            yield* hooks.onStarted({ pgid: running.pid, marker }).pipe(
              Effect.mapError((error) =>
                new WorkspaceError({ message: `the command was not run: its process could not be recorded (${error})` })
              )
            )
            running.go()
            let reported = ""
            const watch = Effect.gen(function*() {
              while (true) {
                yield* Process.realSleep(PROGRESS_INTERVAL_MILLIS)
                const soFar = running.output.render()
                if (soFar !== reported) {
                  reported = soFar
                  yield* hooks.onOutput(soFar)
                }
              }
            })
            return yield* Effect.raceFirst(Deferred.await(running.exited), Effect.zipRight(watch, Effect.never))
          }).pipe(
            // stopped from outside, or the record failed: end every process of the command, and report what it
            // had written
            Effect.onExit((exit) =>
              Exit.isSuccess(exit)
                ? Effect.void
                : Effect.uninterruptible(Effect.zipRight(running.stop, hooks.onOutput(running.output.render())))
            ),
            Effect.tap(() => running.settle),
            Effect.ensuring(Effect.sync(() => {
              // what the command left running keeps its pipe: read on, at a bounded rate, until it goes
              if (!running.ended) drain(running.child.stdout!)
              if (Process.groupAlive(running.pid)) groups.add(running.pid)
            }))
          )
          const saved = readState(stateFile)
          if (typeof saved !== "string") state = saved
          else if (ending._tag === "Exited") {
            notes.push(
              saved === "too large"
                ? `the environment this command left is over ${MAX_STATE_BYTES / 1024 / 1024} MB and was not kept; ` +
                  STATE_KEPT_AS_BEFORE
                : `the state this command left could not be read; ${STATE_KEPT_AS_BEFORE}`
            )
          }
          return { output: running.output.render(), ending, notes }
        }).pipe(Effect.scoped)
      )

    return { run }
  })
