/**
 * A child process in a process group of its own, as a `Scope` resource.
 *
 * MCP servers and tool providers spawn helpers of their own (a shell, a language server); killing only the direct
 * child leaves those behind. The child is started as a group leader (`detached`), so ending the group ends every
 * process it started. Release closes stdin first (a well-behaved server exits on end of input), then sends
 * SIGTERM to the group, then SIGKILL after a grace period. The last few KB of stderr are kept so an error about a
 * dead peer can say why it died. A process we talk to in lines (an MCP server, a stdio provider) is a peer:
 * `peer.ts` builds on this module.
 *
 * Timers here are real timers, not Effect's clock: a process does not run on `TestClock`, and cleanup must finish
 * under one.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as ProcessTree from "./processTree.js"
import { reasonOf } from "./reason.js"

/** Bytes of stderr kept for error messages (a peer's end, a shell's): the last lines, not a log. */
export const STDERR_TAIL_BYTES = 4 * 1024

/** How long a process group gets between SIGTERM and SIGKILL, and after stdin closes, in milliseconds. */
export const KILL_GRACE_MILLIS = 2_000

/**
 * The variable every process started here carries in its environment, set to a value of its own, and so every
 * process it starts (unless that one clears its environment): what finds a child that left the group with `setsid`
 * once its parent has exited and nothing else links it to us.
 */
export const MARKER_VARIABLE = "AGENT_TOOLS_PROCESS"

export interface SpawnOptions {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly cwd?: string | undefined
  /** Added to the parent's environment (a value of `undefined` removes a variable). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly stderrTailBytes?: number | undefined
  readonly killGraceMillis?: number | undefined
}

/** How a process ended. */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** The process could not be started, or its pipes failed. */
export class ProcessError extends Data.TaggedError("ProcessError")<{
  readonly command: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.command}: ${this.reason}`
  }
}

export interface Child {
  readonly pid: number
  readonly command: string
  /** Writes to stdin; succeeds once the data is handed to the OS. Fails after the process ended. */
  readonly write: (data: string | Uint8Array) => Effect.Effect<void, ProcessError>
  /**
   * `write` for a caller outside Effect (an SDK transport's `send`): the same write, its end reported to `done`
   * (with the error if it failed), without the fiber that running `write` would cost per message.
   */
  readonly unsafeWrite: (data: string | Uint8Array, done: (error: ProcessError | undefined) => void) => void
  readonly endInput: Effect.Effect<void>
  /** Registers a listener for stdout chunks (in order). */
  readonly onStdout: (listener: (chunk: Buffer) => void) => void
  /** The last bytes of stderr, as text. */
  readonly stderrTail: () => string
  /** Completes when the process has exited. */
  readonly exited: Effect.Effect<ExitStatus>
  /** The exit status if the process has exited. */
  readonly exitStatus: () => ExitStatus | undefined
  /** Registers a listener called once the process has exited (at once if it already has). */
  readonly onExit: (listener: (status: ExitStatus) => void) => void
  /**
   * Completes once the process has exited and its stdout and stderr have ended, so everything it wrote has been
   * read (its last answer, its last words on stderr). A grandchild holding the pipes open delays this: wait for it
   * with a bound.
   */
  readonly closed: Effect.Effect<void>
  /** Ends the whole group now: stdin closed, SIGTERM, SIGKILL after the grace period. Waits for the exit. */
  readonly terminate: Effect.Effect<void>
}

/**
 * Sleeps on a real timer (never on `TestClock`), and goes on after the event loop's next poll for I/O, not at the
 * timer itself. Most of these sleeps bound a wait for what a peer may still write (a command's last output, an
 * exited process's stderr, a late notification): in a busy process a timer fires late, in the same turn of the
 * event loop as the poll that would read what arrived in time, and the sleeper would go on without it.
 */
export const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    let immediate: NodeJS.Immediate | undefined
    const timer = setTimeout(() => {
      immediate = setImmediate(() => resume(Effect.void))
    }, millis)
    return Effect.sync(() => {
      clearTimeout(timer)
      if (immediate !== undefined) clearImmediate(immediate)
    })
  })

/**
 * Lets the event loop turn (its timers, its I/O) before going on. Effect's scheduler yields a long run of steps in
 * microtasks, which keep real timers from firing: a loop of synchronous work that must stay under a real deadline
 * yields through this every so often.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})

/** How many items of synchronous work a loop does between two {@link yieldToEventLoop}s. */
export const YIELD_EVERY = 64

const signalGroup = (pid: number, signal: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    // ESRCH: nobody left in the group
    return false
  }
}

/**
 * Whether any process of the group is still alive. On Linux, zombies (dead, waiting to be reaped, which in a
 * container without an init may be forever) do not count: `/proc` tells them apart. Elsewhere, signal 0 answers.
 */
export const groupAlive = (pgid: number): boolean => {
  if (process.platform === "linux") {
    let entries: Array<string>
    try {
      entries = fs.readdirSync("/proc")
    } catch {
      return signalGroup(pgid, 0)
    }
    for (const entry of entries) {
      if (!/^[0-9]+$/.test(entry)) continue
      let stat: string
      try {
        stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      } catch {
        continue
      }
      // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so read after the last ")"
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
    }
    return false
  }
  return signalGroup(pgid, 0)
}

/** Describes an exit the way an error message wants it: `exited with code 1`, `was killed by SIGKILL`. */
export const describeExit = (status: ExitStatus): string =>
  status.signal !== null ? `was killed by ${status.signal}` : `exited with code ${status.code}`

/**
 * Starts a process in its own group; the scope's close ends the group and every process it started that left the
 * group (`setsid`), found by parent, session and group links and by {@link MARKER_VARIABLE} (see processTree.ts).
 */
export const spawn = (options: SpawnOptions): Effect.Effect<Child, ProcessError, Scope.Scope> =>
  Effect.acquireRelease(start(options), (child) => child.terminate)

const start = (options: SpawnOptions): Effect.Effect<Child, ProcessError> =>
  Effect.suspend(() => {
    const command = options.command
    const tailBytes = options.stderrTailBytes ?? STDERR_TAIL_BYTES
    const grace = options.killGraceMillis ?? KILL_GRACE_MILLIS
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries({ ...process.env, ...options.env })) {
      if (value !== undefined) env[key] = value
    }
    const marker = randomUUID()
    env[MARKER_VARIABLE] = marker
    let proc: ChildProcess.ChildProcess
    try {
      proc = ChildProcess.spawn(command, [...(options.args ?? [])], {
        cwd: options.cwd,
        env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"]
      })
    } catch (error) {
      return Effect.fail(new ProcessError({ command, reason: reasonOf(error) }))
    }
    const exitDeferred = Deferred.unsafeMake<ExitStatus>(FiberId.none)
    const closedDeferred = Deferred.unsafeMake<void>(FiberId.none)
    proc.once("close", () => Deferred.unsafeDone(closedDeferred, Exit.void))
    let status: ExitStatus | undefined
    const exitListeners: Array<(status: ExitStatus) => void> = []
    const stdoutListeners: Array<(chunk: Buffer) => void> = []
    let stderr = Buffer.alloc(0)
    proc.stderr!.on("data", (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk])
      if (stderr.length > tailBytes * 2) stderr = stderr.subarray(stderr.length - tailBytes)
    })
    proc.stdout!.on("data", (chunk: Buffer) => {
      for (const listener of stdoutListeners) listener(chunk)
    })
    // a peer that dies mid-write makes stdin emit EPIPE; the exit is what callers act on
    proc.stdin!.on("error", () => {})
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      if (status !== undefined) return
      status = { code, signal }
      Deferred.unsafeDone(exitDeferred, Exit.succeed(status))
      for (const listener of exitListeners.splice(0)) listener(status)
    }
    proc.on("exit", exited)
    return Effect.async<Child, ProcessError>((resume) => {
      proc.once("error", (error) => {
        if (proc.pid === undefined) {
          resume(Effect.fail(new ProcessError({ command, reason: error.message })))
          exited(null, null)
        }
      })
      proc.once("spawn", () => {
        const pid = proc.pid!
        const startTicks = ProcessTree.info(pid)?.startTicks
        /** What the process started: by links while they hold, by its marker once they do not. */
        const started = (): Array<ProcessTree.ProcessInfo> => {
          const processes = ProcessTree.list()
          const found = new Map<number, ProcessTree.ProcessInfo>()
          for (const p of ProcessTree.descendants(pid, { startTicks, processes })) found.set(p.pid, p)
          for (const p of ProcessTree.withEnvironment(MARKER_VARIABLE, (value) => value === marker, processes)) {
            if (p.pid !== pid) found.set(p.pid, p)
          }
          return [...found.values()]
        }
        const terminate: Effect.Effect<void> = Effect.gen(function*() {
          // looked for before end of input, which may end the leader and leave its setsid children to init
          const before = started()
          if (!proc.stdin!.destroyed) proc.stdin!.end()
          if (status === undefined) {
            // the racers must be interruptible: in this uninterruptible region the loser would otherwise be waited
            // for, and a process that ignores end of input would never be signalled
            yield* Effect.raceFirst(
              Effect.interruptible(Deferred.await(exitDeferred)),
              Effect.interruptible(realSleep(Math.min(grace, 500)))
            )
          }
          // the leader may be gone while processes it started still run, in its group or out of it
          yield* ProcessTree.end({ graceMillis: grace, groups: [pid], find: () => [...before, ...started()] })
          if (status === undefined) yield* Deferred.await(exitDeferred)
        }).pipe(Effect.uninterruptible)
        const unsafeWrite = (data: string | Uint8Array, done: (error: ProcessError | undefined) => void): void => {
          if (status !== undefined || proc.stdin!.destroyed || !proc.stdin!.writable) {
            return done(new ProcessError({ command, reason: "the process has exited" }))
          }
          proc.stdin!.write(data, (error) => {
            done(error == null ? undefined : new ProcessError({ command, reason: error.message }))
          })
        }
        resume(Effect.succeed({
          pid,
          command,
          write: (data) =>
            Effect.async<void, ProcessError>((resumeWrite) =>
              unsafeWrite(data, (error) => resumeWrite(error === undefined ? Effect.void : Effect.fail(error)))
            ),
          unsafeWrite,
          endInput: Effect.sync(() => {
            if (!proc.stdin!.destroyed) proc.stdin!.end()
          }),
          onStdout: (listener) => void stdoutListeners.push(listener),
          stderrTail: () => stderr.subarray(Math.max(0, stderr.length - tailBytes)).toString("utf8"),
          exited: Deferred.await(exitDeferred),
          exitStatus: () => status,
          onExit: (listener) => {
            if (status !== undefined) listener(status)
            else exitListeners.push(listener)
          },
          closed: Deferred.await(closedDeferred),
          terminate
        }))
      })
    })
  })
