/**
 * The processes a process started, found through `/proc`, and how to end them all.
 *
 * Ending a process group misses what left it: a child that called `setsid` (or `setpgid`) is in a group and a
 * session of its own, and once its parent exits it is re-parented to init, so nothing links it to whoever started
 * it. This module finds such processes three ways:
 * - by parent links, while they hold: the children of a process, recursively;
 * - by session and group: a process whose session or group id is the id of the process or of one of its
 *   descendants (a daemon's worker whose parent has exited still carries its session id, and so does every
 *   process of a session leader that is gone);
 * - by environment: a process whose environment, as it was when the process started (`/proc/<pid>/environ`),
 *   carries a marker variable the starter set. This one survives re-parenting and `setsid` alike, and is what
 *   lets a later process find what an earlier one left running. A program that clears its environment escapes it;
 *   a shell command is not a sandbox, and this is cleanup, not containment.
 *
 * A process is identified by its pid and its start time (`/proc/<pid>/stat`, clock ticks since boot): a pid that
 * now names a process with another start time was reused, and is never signalled.
 *
 * On systems without `/proc`, nothing is found beyond the process itself: ending a tree signals the process and
 * its group, as before.
 *
 * Timers here are real timers, not Effect's clock: processes do not run on `TestClock`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

/** One process, as `/proc/<pid>/stat` shows it. */
export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  readonly sid: number
  /** `R`, `S`, `Z` (a zombie: dead, waiting to be reaped), ... */
  readonly state: string
  /** When the process started, in clock ticks since boot: with the pid, what identifies it. */
  readonly startTicks: number
}

/** How long {@link end} waits for processes to go after SIGKILL before giving up on them, in milliseconds. */
export const KILL_WAIT_MILLIS = 2_000

const POLL_MILLIS = 20

const sleep = (millis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), millis)
    return Effect.sync(() => clearTimeout(timer))
  })

const hasProc = (): boolean => process.platform === "linux" && fs.existsSync("/proc/self/stat")

/** Reads one process's stat line, or undefined when it is gone (or was never visible). */
export const info = (pid: number): ProcessInfo | undefined => {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  // priority nice num_threads itrealvalue starttime ...; comm may hold spaces and parentheses: read after the last ")"
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return {
    pid,
    state: fields[0],
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    startTicks: Number(fields[19])
  }
}

/** Every process visible in `/proc` (none where there is no `/proc`). */
export const list = (): ReadonlyArray<ProcessInfo> => {
  if (!hasProc()) return []
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const out: Array<ProcessInfo> = []
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue
    const found = info(Number(entry))
    if (found !== undefined) out.push(found)
  }
  return out
}

const isGone = (p: ProcessInfo | undefined): boolean => p === undefined || p.state === "Z" || p.state === "X"

/** Whether the process is still the one described (same pid and start time) and not a zombie. */
export const alive = (p: ProcessInfo): boolean => {
  const now = info(p.pid)
  return !isGone(now) && now!.startTicks === p.startTicks
}

/**
 * The live processes `pid` started: its children, recursively, and every process whose session or group id is
 * `pid` or one of theirs (and their children). `pid` itself is not included, nor are zombies.
 *
 * `pid` may be gone (a shell that exited, leaving `server &` behind): its session and group still name it. Give
 * `startTicks` (from {@link info} while it lived) so that, if the number was reused since, the newcomer's
 * children are not taken for its.
 */
export const descendants = (
  pid: number,
  options: { readonly startTicks?: number | undefined; readonly processes?: ReadonlyArray<ProcessInfo> } = {}
): Array<ProcessInfo> => {
  const processes = options.processes ?? list()
  const current = processes.find((p) => p.pid === pid)
  const reusedBy =
    current !== undefined && options.startTicks !== undefined && current.startTicks !== options.startTicks
      ? current
      : undefined
  const ids = new Set<number>()
  const found = new Map<number, ProcessInfo>()
  const linkedTo = (p: ProcessInfo, id: number) => p.ppid === id || p.sid === id || p.pgid === id
  const belongs = (p: ProcessInfo): boolean => {
    if (ids.has(p.ppid) || ids.has(p.sid) || ids.has(p.pgid)) return true
    if (!linkedTo(p, pid)) return false
    // after a reuse, the number's children are the newcomer's; its session and group older than it are ours
    return reusedBy === undefined || (p.ppid !== pid && p.startTicks < reusedBy.startTicks)
  }
  // a fixpoint: a new member may be the parent, session leader or group leader of others
  let grew = true
  while (grew) {
    grew = false
    for (const p of processes) {
      if (p.pid === pid || p.pid <= 1 || found.has(p.pid) || !belongs(p)) continue
      found.set(p.pid, p)
      ids.add(p.pid)
      grew = true
    }
  }
  return [...found.values()].filter((p) => !isGone(p))
}

/** The value of `name` in a process's environment as it started, or undefined (unset, unreadable, gone). */
export const environmentValue = (pid: number, name: string): string | undefined => {
  let environ: Buffer
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`)
  } catch {
    return undefined
  }
  const prefix = Buffer.from(`${name}=`)
  let start = 0
  while (start < environ.length) {
    let end = environ.indexOf(0, start)
    if (end < 0) end = environ.length
    if (end - start >= prefix.length && environ.subarray(start, start + prefix.length).equals(prefix)) {
      return environ.subarray(start + prefix.length, end).toString("utf8")
    }
    start = end + 1
  }
  return undefined
}

/** The live processes whose environment has `name` set to a value `matches` accepts. */
export const withEnvironment = (
  name: string,
  matches: (value: string) => boolean,
  processes: ReadonlyArray<ProcessInfo> = list()
): Array<ProcessInfo> =>
  processes.filter((p) => {
    if (isGone(p) || p.pid === process.pid) return false
    const value = environmentValue(p.pid, name)
    return value !== undefined && matches(value)
  })

/** This process's own group: never signalled, whatever a caller's list says. */
const ownGroup = (): number | undefined => info(process.pid)?.pgid

const signal = (p: ProcessInfo, sig: NodeJS.Signals): void => {
  // a pid whose start time changed belongs to someone else now
  if (p.pid === process.pid || (hasProc() && !alive(p))) return
  try {
    process.kill(p.pid, sig)
  } catch {
    // gone already
  }
}

const signalGroup = (pgid: number, sig: NodeJS.Signals): void => {
  if (pgid <= 1 || pgid === ownGroup()) return
  try {
    process.kill(-pgid, sig)
  } catch {
    // nobody left in the group
  }
}

export interface EndOptions {
  /** How long processes get between SIGTERM and SIGKILL, in milliseconds. */
  readonly graceMillis: number
  /** Process groups to signal as wholes as well (a group catches a member forked after the last look). */
  readonly groups?: ReadonlyArray<number> | undefined
  /** Looks again for processes to end (called before SIGTERM and again before SIGKILL). */
  readonly find: () => ReadonlyArray<ProcessInfo>
}

const groupAlive = (pgid: number): boolean =>
  hasProc()
    ? list().some((p) => p.pgid === pgid && !isGone(p))
    : (() => {
      try {
        process.kill(-pgid, 0)
        return true
      } catch {
        return false
      }
    })()

/**
 * Ends processes: SIGTERM to each process `find` gives (and to each of `groups`), up to `graceMillis` for them to
 * go, then SIGKILL to whatever `find` gives then, repeated until nothing is left or {@link KILL_WAIT_MILLIS} have
 * passed. Never fails; runs uninterruptibly, so a cleanup cannot be cut short.
 */
export const end = (options: EndOptions): Effect.Effect<void> =>
  Effect.gen(function*() {
    const groups = options.groups ?? []
    const first = options.find().filter(alive)
    for (const p of first) signal(p, "SIGTERM")
    for (const g of groups) signalGroup(g, "SIGTERM")
    // during the grace, only those signalled are watched (a full look is a walk of /proc)
    let waited = 0
    while (waited < options.graceMillis && (first.some(alive) || groups.some(groupAlive))) {
      yield* sleep(POLL_MILLIS)
      waited += POLL_MILLIS
    }
    waited = 0
    // a process can fork between a look and a signal: look again until a look finds nobody
    while (waited < KILL_WAIT_MILLIS) {
      const left = [...first.filter(alive), ...options.find().filter(alive)]
      const groupsLeft = groups.filter(groupAlive)
      if (left.length === 0 && groupsLeft.length === 0) return
      for (const p of left) signal(p, "SIGKILL")
      for (const g of groupsLeft) signalGroup(g, "SIGKILL")
      yield* sleep(POLL_MILLIS)
      waited += POLL_MILLIS
    }
  }).pipe(Effect.uninterruptible)

/**
 * Ends `pid` and every process it started (see {@link descendants}), looked for again before each signal, so a
 * child forked meanwhile goes too: SIGTERM, then SIGKILL after `graceMillis`. `pid`'s own group is signalled as
 * a whole as well. Never fails.
 */
export const endTree = (pid: number, options: { readonly graceMillis: number }): Effect.Effect<void> =>
  Effect.suspend(() => {
    const self = info(pid)
    return end({
      graceMillis: options.graceMillis,
      // its group as a whole only if it leads one: a process in someone else's group must not take them along
      groups: self !== undefined && self.pgid === pid ? [pid] : [],
      find: () => {
        const processes = list()
        const leader = processes.find((p) => p.pid === pid && p.startTicks === self?.startTicks)
        const started = descendants(pid, { startTicks: self?.startTicks, processes })
        return leader === undefined ? started : [leader, ...started]
      }
    })
  })
