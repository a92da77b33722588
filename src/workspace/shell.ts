/**
 * The persistent shell behind `bash`.
 *
 * One `bash` (or `sh`) per toolkit holds the state that persists between calls: the working directory and the
 * exported environment. Each command runs in a subshell started as a background job under job control (`set -m`),
 * which makes it the leader of a process group of its own: stopping the command (interruption, timeout) ends that
 * whole group, background children included, and leaves the shell itself alive. When the subshell ends, its final
 * directory and exported variables are carried back into the shell. Output goes to a file per command (merged
 * stdout and stderr), so a background process left running can never write into a later command's answer.
 *
 * The shell is a `Scope` resource of the toolkit: closing the scope ends it and every process group it started.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import * as Lines from "../internal/lines.js"
import * as Process from "../internal/process.js"
import { WorkspaceError } from "./errors.js"

/** Output past this many characters is cut in the middle, keeping the head and the tail. */
export const MAX_OUTPUT_CHARACTERS = 30_000

/** How often a running command's output is reported as progress, in milliseconds. */
export const PROGRESS_INTERVAL_MILLIS = 250

export interface CommandResult {
  readonly output: string
  readonly exitCode: number
}

export interface Shell {
  /**
   * Runs one command. `onStarted` receives the command's process group id as soon as it exists (for a durable
   * record); `onOutput` receives the output so far while it runs, and once more when it is stopped. Interrupting
   * the effect ends the command's process group and waits until the shell is ready again.
   */
  readonly run: (
    command: string,
    hooks: {
      readonly onStarted: (pgid: number) => Effect.Effect<void, unknown>
      readonly onOutput: (outputSoFar: string) => Effect.Effect<void>
    }
  ) => Effect.Effect<CommandResult, WorkspaceError>
}

const shellPath = (): string => (fs.existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh")

/** Head and tail of a long output, with a marker saying how much was cut. */
export const truncateMiddle = (text: string, limit: number = MAX_OUTPUT_CHARACTERS): string => {
  if (text.length <= limit) return text
  const head = text.slice(0, Math.floor(limit / 2))
  const tail = text.slice(text.length - Math.floor(limit / 2))
  return `${head}\n… [${text.length - head.length - tail.length} characters cut] …\n${tail}`
}

const readOutput = (file: string): string => {
  try {
    const size = fs.statSync(file).size
    if (size <= MAX_OUTPUT_CHARACTERS * 4) return truncateMiddle(fs.readFileSync(file, "utf8"))
    // a huge output: read only the two ends
    const handle = fs.openSync(file, "r")
    try {
      const half = MAX_OUTPUT_CHARACTERS / 2
      const head = Buffer.alloc(half)
      const tail = Buffer.alloc(half)
      fs.readSync(handle, head, 0, half, 0)
      fs.readSync(handle, tail, 0, half, size - half)
      return `${head.toString("utf8")}\n… [about ${size - 2 * half} bytes cut] …\n${tail.toString("utf8")}`
    } finally {
      fs.closeSync(handle)
    }
  } catch {
    return ""
  }
}

interface Pending {
  readonly pid: Deferred.Deferred<number, WorkspaceError>
  readonly done: Deferred.Deferred<number, WorkspaceError>
}

/** Starts the shell in `root`; the scope's close ends it and the process groups of its commands. */
export const make = (root: string): Effect.Effect<Shell, WorkspaceError, Scope.Scope> =>
  Effect.gen(function*() {
    const folder = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(nodePath.join(os.tmpdir(), "agent-tools-shell-"))),
      (folder) => Effect.sync(() => fs.rmSync(folder, { recursive: true, force: true }))
    )
    const groups = new Set<number>()
    // every command's group is ended with the shell, even one a command left running in the background
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const pgid of groups) {
          try {
            if (Process.groupAlive(pgid)) process.kill(-pgid, "SIGKILL")
          } catch {
            // already gone
          }
        }
      })
    )
    const child = yield* Process.spawn({ command: shellPath(), args: ["-s"], cwd: root, killGraceMillis: 1000 }).pipe(
      Effect.mapError((error) => new WorkspaceError({ message: `the shell could not be started: ${error.reason}` }))
    )
    const pending = new Map<number, Pending>()
    const lines = Lines.lineSplitter((line) => {
      const match = /^@@AGENT_TOOLS_(PID|DONE) (\d+) (-?\d+)$/.exec(line)
      if (match === null) return
      const entry = pending.get(Number(match[2]))
      if (entry === undefined) return
      const value = Number(match[3])
      if (match[1] === "PID") Deferred.unsafeDone(entry.pid, Exit.succeed(value))
      else Deferred.unsafeDone(entry.done, Exit.succeed(value))
    })
    child.onStdout(lines.push)
    child.onExit(() => {
      for (const entry of pending.values()) {
        const gone = Exit.fail(new WorkspaceError({ message: "the shell exited" }))
        Deferred.unsafeDone(entry.pid, gone)
        Deferred.unsafeDone(entry.done, gone)
      }
    })
    // job control gives every command a process group of its own; the shell's own messages ("[1]+ Terminated")
    // are not output of any command
    yield* child.write("set -m\nexec 2>/dev/null\nexport PAGER=cat GIT_PAGER=cat\n").pipe(
      Effect.mapError((error) => new WorkspaceError({ message: `the shell could not be started: ${error.reason}` }))
    )
    const lock = yield* Effect.makeSemaphore(1)
    let next = 0

    const file = (id: number, kind: string) => nodePath.join(folder, `${kind}.${id}`)
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

    const script = (id: number): string => {
      const [cmd, out, pwd, env] = [file(id, "cmd"), file(id, "out"), file(id, "pwd"), file(id, "env")].map(quote)
      return [
        // the state is saved by an EXIT trap: it runs however the command ends (`exit 3` included), and a trap
        // keeps bash from exec-ing the command's last program in place of the subshell, which would skip it
        `( trap "pwd > ${pwd}; export -p > ${env}" EXIT; . ${cmd} ) > ${out} 2>&1 < /dev/null &`,
        `__agent_tools_pid=$!`,
        `printf '\\n@@AGENT_TOOLS_PID ${id} %s\\n' "$__agent_tools_pid"`,
        `wait "$__agent_tools_pid"; __agent_tools_status=$?`,
        `if [ -s ${pwd} ]; then cd -- "$(cat ${pwd})" 2>/dev/null; fi`,
        `if [ -s ${env} ]; then . ${env} 2>/dev/null; fi`,
        `rm -f ${cmd} ${pwd} ${env}`,
        `printf '\\n@@AGENT_TOOLS_DONE ${id} %s\\n' "$__agent_tools_status"`,
        ""
      ].join("\n")
    }

    const stopGroup = (pgid: number, entry: Pending) =>
      Effect.gen(function*() {
        const signal = (sig: NodeJS.Signals) => {
          try {
            process.kill(-pgid, sig)
          } catch {
            // gone already
          }
        }
        signal("SIGTERM")
        // this runs uninterruptibly: the racers must be interruptible, or the loser would be waited for
        const ended = yield* Effect.raceFirst(
          Effect.interruptible(Effect.as(Deferred.await(entry.done), true)),
          Effect.interruptible(Effect.as(Process.realSleep(1000), false))
        ).pipe(Effect.orElseSucceed(() => true))
        if (!ended) {
          signal("SIGKILL")
          yield* Effect.raceFirst(
            Effect.interruptible(Effect.ignore(Deferred.await(entry.done))),
            Effect.interruptible(Process.realSleep(5000))
          )
        }
      })

    const run: Shell["run"] = (command, hooks) =>
      lock.withPermits(1)(
        Effect.gen(function*() {
          const id = ++next
          const entry: Pending = {
            pid: Deferred.unsafeMake<number, WorkspaceError>(FiberId.none),
            done: Deferred.unsafeMake<number, WorkspaceError>(FiberId.none)
          }
          const out = file(id, "out")
          pending.set(id, entry)
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              pending.delete(id)
              fs.rmSync(out, { force: true })
            })
          )
          yield* Effect.try({
            try: () => {
              fs.writeFileSync(file(id, "cmd"), command + "\n")
              fs.writeFileSync(out, "")
            },
            catch: (error) => new WorkspaceError({ message: `the command could not be handed to the shell: ${error}` })
          })
          yield* child.write(script(id)).pipe(
            Effect.mapError(() => new WorkspaceError({ message: "the shell has exited; the command did not run" }))
          )
          const pgid = yield* Deferred.await(entry.pid)
          groups.add(pgid)
          const status = yield* Effect.gen(function*() {
            yield* hooks.onStarted(pgid).pipe(
              Effect.mapError((error) =>
                new WorkspaceError({ message: `the command was stopped: its process could not be recorded (${error})` })
              )
            )
            let reported = ""
            const watch = Effect.gen(function*() {
              while (true) {
                yield* Process.realSleep(PROGRESS_INTERVAL_MILLIS)
                const output = readOutput(out)
                if (output !== reported) {
                  reported = output
                  yield* hooks.onOutput(output)
                }
              }
            })
            return yield* Effect.raceFirst(Deferred.await(entry.done), Effect.zipRight(watch, Effect.never))
          }).pipe(
            // stopped from outside, or the record failed: end the command's whole group, wait for the shell to be
            // ready again, and report what the command had written
            Effect.onExit((exit) =>
              Exit.isSuccess(exit)
                ? Effect.void
                : Effect.uninterruptible(Effect.zipRight(stopGroup(pgid, entry), hooks.onOutput(readOutput(out))))
            ),
            // a group that still has members after its command (`server &`) is ended with the shell; one that is
            // empty is forgotten now, so a later process reusing its id is never signalled
            Effect.ensuring(Effect.sync(() => {
              if (!Process.groupAlive(pgid)) groups.delete(pgid)
            }))
          )
          return { output: readOutput(out), exitCode: status }
        }).pipe(Effect.scoped)
      )

    return { run }
  })
