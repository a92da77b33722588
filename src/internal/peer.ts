/**
 * A peer process: a program this library starts and talks to in lines on its stdin and stdout (an MCP server, a
 * stdio tool provider), as a `Scope` resource. Both edges stand on it, so what a peer's life asks for is written
 * once:
 *
 * - it runs in a process group of its own (`process.ts`); the scope's close ends the group: stdin closed, SIGTERM,
 *   SIGKILL after a grace period, helpers it started included;
 * - its stdout is cut into lines with a cap ({@link Options.maxLineBytes}): a longer line is dropped as it
 *   arrives, never buffered, and the reader gets its length and its first and last bytes;
 * - lines are written through one `lineQueue`, so a burst of requests goes out in one write;
 * - the last bytes of its stderr are kept, and every message about its end quotes them;
 * - its end is declared once, as an {@link End}: it exited (declared once its pipes have delivered what it wrote
 *   last, or {@link LAST_WORDS_MILLIS} later if a helper holds them open), or its reader found that it broke the
 *   protocol. Listeners are told at that moment (to fail what is in flight), then its whole group is ended;
 * - a request whose write failed waits, bounded, for the end to be declared ({@link Peer.settled}): the exit status
 *   and the stderr are a better reason than a broken pipe;
 * - requests that wait for their answer by id ({@link Pending}) fail together when it ends, and later ones fail
 *   before they are sent.
 *
 * State is changed synchronously, by the pipes' callbacks and by fibers between their steps, never both at once
 * (one JavaScript thread). Timers are real timers: a peer does not run on `TestClock`.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as Lines from "./lines.js"
import * as Process from "./process.js"

/**
 * At most how long a peer that exited gets for its pipes to deliver what it wrote last (an answer written just
 * before it exited, its last stderr lines) before its end is declared: the exit is often reported before the last
 * chunk of stdout is read. The wait ends as soon as both pipes have closed; only a helper holding them open makes
 * it last this long.
 */
export const LAST_WORDS_MILLIS = 200

/**
 * How long a request whose write failed waits for the peer's end to be declared before it fails with the write's
 * own error. A write fails when the peer stopped reading, which is usually because it is exiting.
 */
export const DEATH_NOTICE_MILLIS = 1_000

/** How a peer ended: it exited, or its reader found that it broke the protocol (`detail` is the reader's). */
export type End<V> =
  | { readonly _tag: "Exited"; readonly status: Process.ExitStatus; readonly stderr: string }
  | { readonly _tag: "Violated"; readonly why: string; readonly detail: V; readonly stderr: string }

/** What reads the peer's stdout: every line under the cap, and every line over it. */
export interface Reader {
  readonly line: (text: string) => void
  readonly oversize: (line: Lines.OversizeLine) => void
}

export interface Options extends Process.SpawnOptions {
  /** The longest line read from stdout; a longer one is dropped as it arrives and given to `Reader.oversize`. */
  readonly maxLineBytes: number
  /**
   * How messages name the peer at the start of a sentence (`the MCP server "files"`, `stdio provider "x"`); read
   * each time a message is made, so a name learnt later (from `initialize`) is used.
   */
  readonly subject: () => string
}

/** `message` plus the stderr tail, for messages about a peer that died. */
export const withStderr = (message: string, tail: string): string => {
  const trimmed = tail.trim()
  return trimmed === "" ? message : `${message}; its stderr ended with:\n${trimmed}`
}

/**
 * The first of two waits to end; the other is interrupted. Both are made interruptible so that, run from an
 * uninterruptible region (a finalizer), the loser is not waited for.
 */
export const race = <A, E, B, E2>(
  self: Effect.Effect<A, E>,
  that: Effect.Effect<B, E2>
): Effect.Effect<A | B, E | E2> => Effect.raceFirst(Effect.interruptible(self), Effect.interruptible(that))

/** `self`, failing with `onTimeout()` if it has not ended within `millis` of real time. */
export const withDeadline = <A, E, E2>(
  self: Effect.Effect<A, E>,
  millis: number,
  onTimeout: () => E2
): Effect.Effect<A, E | E2> => race(self, Effect.zipRight(Process.realSleep(millis), Effect.failSync(onTimeout)))

type State<V> = { readonly _tag: "Running" } | { readonly _tag: "Ended"; readonly end: End<V> }

/** A running peer process; {@link start} makes one. */
export class Peer<V = never> {
  private state: State<V> = { _tag: "Running" }
  private readonly endDeferred = Deferred.unsafeMake<End<V>>(FiberId.none)
  private readonly listeners: Array<(end: End<V>) => void> = []
  private reader: Reader | undefined = undefined
  private readonly splitter: { push: (chunk: Buffer) => void; end: () => void }
  private readonly queue: Lines.LineQueue<Process.ProcessError>
  /** Whether a write failed: the peer stopped reading (it is going), whether or not its exit was seen yet. */
  private broken = false

  constructor(private readonly child: Process.Child, private readonly options: Options) {
    this.splitter = Lines.lineSplitter((line) => this.reader?.line(line), {
      maxLineBytes: options.maxLineBytes,
      onOversize: (line) => this.reader?.oversize(line)
    })
    child.onStdout((chunk) => this.splitter.push(chunk))
    this.queue = Lines.lineQueue<Process.ProcessError>((text, done) =>
      child.unsafeWrite(text, (error) => {
        if (error === undefined) return done(Exit.void)
        this.broken = true
        done(Exit.fail(error))
      })
    )
  }

  /** The peer's pid, which is also its process group id. */
  get pid(): number {
    return this.child.pid
  }

  /** Completes when the process has exited, with how it ended. */
  get exited(): Effect.Effect<Process.ExitStatus> {
    return this.child.exited
  }

  /** How the peer ended, once its end is declared. */
  get end(): End<V> | undefined {
    return this.state._tag === "Ended" ? this.state.end : undefined
  }

  /** Who reads the lines of stdout from now on. */
  read(reader: Reader): void {
    this.reader = reader
  }

  /**
   * Writes one line (or several, each ending in `\n`) to stdin, outside Effect: `done` is called once the write has
   * ended. The function it gives drops the line if its write has not started.
   */
  send(line: string, done: (exit: Exit.Exit<void, Process.ProcessError>) => void): () => void {
    return this.queue(line, done)
  }

  /** Closes stdin: a well-behaved peer exits at end of input. */
  endInput(): void {
    Effect.runSync(this.child.endInput)
  }

  /** Declares that the peer broke the protocol: its end, at once; its group is ended right after. */
  violate(why: string, detail: V): void {
    this.declare({ _tag: "Violated", why, detail, stderr: this.child.stderrTail() })
  }

  /** Calls `listener` at the moment the peer's end is declared (at once if it has been). */
  onEnd(listener: (end: End<V>) => void): void {
    if (this.state._tag === "Ended") listener(this.state.end)
    else this.listeners.push(listener)
  }

  /** Whether the peer is ending: its end declared, its exit seen, or a write to it failed. */
  going(): boolean {
    return this.state._tag === "Ended" || this.child.exitStatus() !== undefined || this.broken
  }

  /**
   * For a request that failed while the peer is going: waits until its end is declared, for at most
   * {@link DEATH_NOTICE_MILLIS}, so the request fails with how the peer ended and its last words.
   */
  readonly settled: Effect.Effect<void> = Effect.suspend(() =>
    this.state._tag === "Ended" || !this.going()
      ? Effect.void
      : Effect.asVoid(race(Deferred.await(this.endDeferred), Process.realSleep(DEATH_NOTICE_MILLIS)))
  )

  /**
   * The message about the peer's end: `<subject> exited with code 3<during>` or `<subject> broke the protocol:
   * <why><during>`, then the stderr tail.
   */
  describe(end: End<V>, during = ""): string {
    const what = end._tag === "Exited" ? Process.describeExit(end.status) : `broke the protocol: ${end.why}`
    return withStderr(`${this.options.subject()} ${what}${during}`, end.stderr)
  }

  /** `message` with the stderr tail as it is now. */
  withStderr(message: string): string {
    return withStderr(message, this.child.stderrTail())
  }

  private declare(end: End<V>): void {
    if (this.state._tag === "Ended") return
    this.state = { _tag: "Ended", end }
    for (const listener of this.listeners.splice(0)) listener(end)
    Deferred.unsafeDone(this.endDeferred, Exit.succeed(end))
  }

  /** Waits for the exit or a violation; declares the end; ends the group. Forked in the peer's scope. */
  readonly watch: Effect.Effect<void> = Effect.gen(this, function*() {
    yield* race(this.child.exited, Deferred.await(this.endDeferred))
    if (this.state._tag === "Running") {
      const status = this.child.exitStatus()!
      // realSleep ends after an I/O poll: what the peer wrote last is read even when its timer fires late
      const closed = yield* race(
        Effect.as(this.child.closed, true),
        Effect.as(Process.realSleep(LAST_WORDS_MILLIS), false)
      )
      // a last line without its newline is still a line, once nothing more can come
      if (closed) this.splitter.end()
      this.declare({ _tag: "Exited", status, stderr: this.child.stderrTail() })
    }
    yield* this.child.terminate
  })
}

/** Starts a peer for the life of the current scope. */
export const start = <V = never>(options: Options): Effect.Effect<Peer<V>, Process.ProcessError, Scope.Scope> =>
  Effect.gen(function*() {
    const child = yield* Process.spawn(options)
    const peer = new Peer<V>(child, options)
    yield* Effect.forkScoped(peer.watch)
    return peer
  })

// ---------------------------------------------------------------------------------------------------------------
// answers by id
// ---------------------------------------------------------------------------------------------------------------

/**
 * Requests waiting for their answers, by id, for a protocol whose answers carry the id of their request and come in
 * any order (the stdio provider's `call_id`; MCP's SDK correlates its own). An answer settles its request; the end
 * of the peer fails every request waiting, and every later one before it is sent. No fiber per request: a request
 * is one `Effect.async` settled from the stdout callback.
 */
export class Pending<A, E> {
  private readonly waiting = new Map<string, (exit: Exit.Exit<A, E>) => void>()
  private lost: E | undefined = undefined
  private lastId = 0

  constructor(private readonly peer: Pick<Peer<unknown>, "send" | "settled">) {}

  /** Whether a request with this id waits for its answer. */
  has(id: string): boolean {
    return this.waiting.has(id)
  }

  /** Settles the request `id`; false when nothing waits for it (unknown, or interrupted). */
  settle(id: string, exit: Exit.Exit<A, E>): boolean {
    const settle = this.waiting.get(id)
    if (settle === undefined) return false
    this.waiting.delete(id)
    settle(exit)
    return true
  }

  /** Fails every request waiting with `error`, and every later request before it is sent. */
  failAll(error: E): void {
    if (this.lost === undefined) this.lost = error
    const waiting = [...this.waiting.values()]
    this.waiting.clear()
    for (const settle of waiting) settle(Exit.fail(error))
  }

  /**
   * Sends the request `line(id)` for a fresh id and waits for its answer. A write that fails waits for the peer's
   * end ({@link Peer.settled}), whose reason is the better one, then fails with it, or with `unsent(reason)` if the
   * peer is still there. An interrupted request drops its line if it has not been written; its answer, if it ever
   * comes, finds nobody waiting.
   */
  ask(line: (id: string) => string, unsent: (reason: string) => E): Effect.Effect<A, E> {
    return Effect.async<A, E>((resume) => {
      if (this.lost !== undefined) return resume(Effect.fail(this.lost))
      const id = String(++this.lastId)
      const settle = (exit: Exit.Exit<A, E>): void => resume(exit)
      this.waiting.set(id, settle)
      const drop = this.peer.send(line(id), (written) => {
        if (Exit.isSuccess(written) || this.waiting.get(id) !== settle) return
        this.waiting.delete(id)
        const failure = Cause.failureOption(written.cause)
        const reason = failure._tag === "Some" ? failure.value.reason : Cause.pretty(written.cause)
        resume(Effect.zipRight(this.peer.settled, Effect.suspend(() => Effect.fail(this.lost ?? unsent(reason)))))
      })
      return Effect.sync(() => {
        drop()
        if (this.waiting.get(id) === settle) this.waiting.delete(id)
      })
    })
  }
}
