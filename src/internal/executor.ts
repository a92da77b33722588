/**
 * The executor's machinery, in three parts.
 *
 * The plan ({@link scan}): a batch is scanned once, synchronously, before anything waits. Each call is looked up,
 * its arguments checked and its resource keys computed; a call whose keys overlap earlier calls' keys depends on
 * the latest such call per key. Dependencies only point backwards, so the graph cannot deadlock, and by
 * transitivity calls sharing a key run in model order. `Executor.plan` is this scan, read back.
 *
 * The running batch ({@link Batch}): calls with no unfinished dependency join a ready list; `pump` starts ready
 * calls while fewer than `maxParallel` run (a call waiting for a key is not in the list, so it holds no slot). A
 * call runs one of two ways. One with something around its handler (see `Call.isBare`) runs the whole pipeline of
 * `call.ts` in a fiber of its own. A "bare" one has its handler function called in the pump's stack: when it
 * answers with a value (`Effect.succeed`, `Effect.fail` and `Effect.void` are `Exit`s) the call is finished there,
 * with no fiber and no scheduling; any other effect runs in a fiber forked with the call context already set.
 * Either way a fiber is started from the batch's runtime and observed: its completion (however it ended) finishes
 * the call, releases its dependents and pumps again, synchronously, so the scheduling needs no fiber of its own,
 * and one that never suspends has finished when `runFork` returns. Closing the batch's scope interrupts the
 * running calls and waits for them, so every finalizer has run when the stream ends or `run` returns.
 *
 * A call's state lives in arrays indexed by its place in the batch (a few bytes per call, no object per call), and
 * its decoded parameters are dropped once it is done.
 *
 * Delivery ({@link Observer}): the batch tells an observer what happens. `stream`/`start` give an
 * {@link EventBuffer}: one plain buffer, which the consumer's stream takes whole on each pull; when the consumer
 * falls `EVENT_BUFFER` events behind, no new call starts and `Tool.progress` waits, so events are never buffered
 * without bound, and `Finished` is never dropped. `run` gives a {@link Collector}, which keeps each outcome in its
 * place and nothing else. Progress reported after its call's `Finished` is dropped by the batch, before any
 * observer sees it.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as FiberId from "effect/FiberId"
import * as FiberRefs from "effect/FiberRefs"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Executor from "../Executor.js"
import type * as Tool from "../Tool.js"
import { KernelId } from "../Tool.js"
import { ToolNotFound } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import * as Call from "./call.js"
import type { Keys, Progress } from "./context.js"
import { currentCall, FreshKeys } from "./context.js"
import type { Kernel } from "./tool.js"
import * as Internal from "./tool.js"

export type { Outcome, ToolCall } from "../Executor.js"

type Outcome = Executor.Outcome
type ToolCall = Executor.ToolCall

export const DEFAULT_MAX_PARALLEL = 8

/** How far the consumer may fall behind before no new call starts and progress reporting waits. */
export const EVENT_BUFFER = 1024

// ---------------------------------------------------------------------------------------------------------------
// the plan
// ---------------------------------------------------------------------------------------------------------------

/** A batch scanned: what each call is and what it waits for, in arrays indexed by the call's place. */
export interface Scan {
  /** The batch runs one call at a time, in order: one chain. */
  readonly sequential: boolean
  /** The call's tool; undefined for a call that never gets past its checks. */
  readonly tools: Array<Tool.Any | undefined>
  /** The call's tool's kernel, likewise. */
  readonly kernels: Array<Kernel | undefined>
  /** Decoded parameters of the calls that run. */
  readonly params: Array<unknown>
  /** The outcome of a call that never runs (an unknown tool, invalid arguments). */
  readonly refused: Array<Outcome | undefined>
  /** Resource keys of the calls that run; only when asked for. */
  readonly keys: Array<ReadonlyArray<string>> | undefined
  /** Predecessors not yet finished: the count of each call's `waitsFor`. */
  readonly pending: Uint32Array
  /** The calls waiting for each call, ascending: the reverse of `waitsFor`. */
  readonly dependents: Array<Array<number> | undefined>
}

const emptyKeys: ReadonlyArray<string> = []

/**
 * Looks up, checks and computes the keys of every call, and the dependencies they make; never waits. Per key, each
 * call waits for the latest earlier call naming it; dependencies only point backwards, so no deadlock. A
 * sequential batch (a `sequential` tool in it, or `sequential` asked for) is one chain in model order instead.
 */
export const scan = (
  toolkit: Toolkit.Toolkit<Tool.Any>,
  calls: ReadonlyArray<ToolCall>,
  sequentialAsked: boolean,
  keepKeys: boolean
): Scan => {
  const n = calls.length
  const tools: Array<Tool.Any | undefined> = new Array(n)
  const kernels: Array<Kernel | undefined> = new Array(n)
  const params: Array<unknown> = new Array(n)
  const refused: Array<Outcome | undefined> = new Array(n)
  const keys: Array<ReadonlyArray<string>> | undefined = keepKeys ? new Array(n) : undefined
  const pending = new Uint32Array(n)
  const dependents: Array<Array<number> | undefined> = new Array(n)
  /** Call `i` waits for the earlier call `before`. */
  const depend = (i: number, before: number): void => {
    const waiting = dependents[before] ??= []
    // several keys may name the same predecessor: count it once
    if (waiting[waiting.length - 1] === i) return
    waiting.push(i)
    pending[i]++
  }
  let sequential = sequentialAsked
  let available: ReadonlyArray<string> | undefined
  const lastByKey = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    const call = calls[i]
    const tool = toolkit.byName.get(call.name)
    if (tool === undefined) {
      available ??= toolkit.tools.map((t) => t.name)
      refused[i] = Either.left(Internal.makeError(ToolNotFound, { tool: call.name, available }))
      continue
    }
    if (tool.sequential) sequential = true
    const kernel = tool[KernelId]
    const checked = Internal.prepare(kernel, call.arguments)
    if (Either.isLeft(checked)) {
      refused[i] = checked as unknown as Outcome
      continue
    }
    const keysOfCall = Internal.resourcesOf(kernel, checked.right)
    if (Either.isLeft(keysOfCall)) {
      refused[i] = keysOfCall as unknown as Outcome
      continue
    }
    tools[i] = tool
    kernels[i] = kernel
    params[i] = checked.right
    if (keys !== undefined) keys[i] = keysOfCall.right.length === 0 ? emptyKeys : keysOfCall.right
    for (const key of keysOfCall.right) {
      const previous = lastByKey.get(key)
      lastByKey.set(key, i)
      if (previous !== undefined) depend(i, previous)
    }
  }
  if (sequential) {
    pending.fill(0)
    dependents.fill(undefined)
    let previous = -1
    for (let i = 0; i < n; i++) {
      if (kernels[i] === undefined) continue
      if (previous >= 0) depend(i, previous)
      previous = i
    }
  }
  return { sequential, tools, kernels, params, refused, keys, pending, dependents }
}

/** `Executor.plan`: the scan, read back as each call's predecessors. */
export const plan = (
  toolkit: Toolkit.Toolkit<Tool.Any>,
  calls: ReadonlyArray<ToolCall>,
  sequential: boolean
): Executor.Plan => {
  const scanned = scan(toolkit, calls, sequential, true)
  const waitsFor: Array<Array<number>> = calls.map(() => [])
  // dependents are found in index order, so each call's predecessors come out ascending
  for (let i = 0; i < calls.length; i++) {
    for (const d of scanned.dependents[i] ?? []) waitsFor[d].push(i)
  }
  return {
    sequential: scanned.sequential,
    calls: calls.map((call, index) => {
      const refused = scanned.refused[index]
      return {
        index,
        call,
        waitsFor: waitsFor[index],
        keys: scanned.keys![index] ?? emptyKeys,
        refused: refused !== undefined && Either.isLeft(refused) ? refused.left : undefined
      }
    })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// delivery
// ---------------------------------------------------------------------------------------------------------------

/** What a batch tells about its calls, as they happen. */
interface Observer {
  /** Whether events may be produced now: while false, no call starts and `Tool.progress` waits for {@link room}. */
  readonly hasRoom: () => boolean
  /** Waits until {@link hasRoom}; undefined when there is always room (nothing waits, nothing is made). */
  readonly room: Effect.Effect<void> | undefined
  readonly started: (index: number) => void
  readonly progress: (index: number, progress: Progress) => void
  readonly finished: (index: number, outcome: Outcome, durationMillis: number) => void
}

const endOfStream: Effect.Effect<never, Option.Option<never>> = Effect.fail(Option.none())

/**
 * Events for `stream` and `start`: a plain buffer the consumer takes whole, waking it when it was waiting, and
 * holding the batch back while the consumer is `EVENT_BUFFER` events behind.
 */
class EventBuffer implements Observer {
  private readonly calls: ReadonlyArray<ToolCall>
  private buffer: Array<Executor.ToolEvent> = []
  private finishedCount = 0
  private wakeConsumer: (() => void) | undefined = undefined
  private readonly waitingForRoom: Array<() => void> = []
  /** Set by the batch: start what was held back once there is room again. */
  resume: () => void = () => {}
  /** The events, ending after the last `Finished`. */
  readonly events: Stream.Stream<Executor.ToolEvent>

  constructor(calls: ReadonlyArray<ToolCall>) {
    this.calls = calls
    this.events = calls.length === 0 ? Stream.empty : Stream.repeatEffectChunkOption(this.pull)
  }

  readonly hasRoom = (): boolean => this.buffer.length < EVENT_BUFFER

  readonly room: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.hasRoom()) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    this.waitingForRoom.push(wake)
    return Effect.sync(() => {
      const at = this.waitingForRoom.indexOf(wake)
      if (at >= 0) this.waitingForRoom.splice(at, 1)
    })
  })

  readonly started = (index: number): void => {
    this.push({ _tag: "Started", index, call: this.calls[index] })
  }

  readonly progress = (index: number, progress: Progress): void => {
    this.push({ _tag: "Progress", index, call: this.calls[index], progress })
  }

  readonly finished = (index: number, outcome: Outcome, durationMillis: number): void => {
    this.finishedCount++
    this.push({ _tag: "Finished", index, call: this.calls[index], outcome, durationMillis })
  }

  private push(event: Executor.ToolEvent): void {
    this.buffer.push(event)
    const wake = this.wakeConsumer
    if (wake !== undefined) {
      this.wakeConsumer = undefined
      wake()
    }
  }

  private readonly waitForEvents: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.buffer.length > 0) return resume(Effect.void)
    this.wakeConsumer = () => resume(Effect.void)
    return Effect.sync(() => {
      this.wakeConsumer = undefined
    })
  })

  /** Everything buffered, at once; then wakes progress reporters and lets the batch start what it held back. */
  private take(): Chunk.Chunk<Executor.ToolEvent> {
    const taken = this.buffer
    this.buffer = []
    if (this.hasRoom()) {
      const wake = this.waitingForRoom.splice(0, this.waitingForRoom.length)
      for (const f of wake) f()
      this.resume()
    }
    return Chunk.unsafeFromArray(taken)
  }

  private readonly pull: Effect.Effect<Chunk.Chunk<Executor.ToolEvent>, Option.Option<never>> = Effect.suspend(() => {
    if (this.buffer.length > 0) return Effect.succeed(this.take())
    // nothing comes after the last Finished (the batch drops late progress)
    if (this.finishedCount === this.calls.length) return endOfStream
    return Effect.zipRight(this.waitForEvents, this.pull)
  })
}

/**
 * Outcomes for `run`: each `Finished`'s outcome in its place, and the waiter woken when the last is in. No event
 * is made or kept, so the batch needs no stream (whose machinery, woken once per finished call when calls end one
 * at a time, costs more than the call), and nothing waits for a consumer.
 */
class Collector implements Observer {
  private readonly n: number
  private readonly outcomes: Array<Outcome>
  private finishedCount = 0
  private wake: (() => void) | undefined = undefined

  constructor(n: number) {
    this.n = n
    this.outcomes = new Array(n)
  }

  readonly hasRoom = (): boolean => true
  readonly room = undefined
  readonly started = (): void => {}
  readonly progress = (): void => {}

  readonly finished = (index: number, outcome: Outcome): void => {
    this.outcomes[index] = outcome
    if (++this.finishedCount === this.n && this.wake !== undefined) this.wake()
  }

  /** The outcomes in call order, once every call has finished. */
  readonly all: Effect.Effect<ReadonlyArray<Outcome>> = Effect.async((resume) => {
    if (this.finishedCount === this.n) return resume(Effect.succeed(this.outcomes))
    this.wake = () => resume(Effect.succeed(this.outcomes))
    return Effect.sync(() => {
      this.wake = undefined
    })
  })
}

// ---------------------------------------------------------------------------------------------------------------
// the running batch
// ---------------------------------------------------------------------------------------------------------------

const PENDING = 0
const RUNNING = 1
const DONE = 2

type State =
  | { readonly _tag: "Open"; readonly running: Map<number, Fiber.RuntimeFiber<unknown, unknown>> }
  | { readonly _tag: "Closed" }

const closed: State = { _tag: "Closed" }

/** One batch from its scan to its last `Finished`: which calls wait, run and are done, and what starts next. */
class Batch {
  private readonly calls: ReadonlyArray<ToolCall>
  /** The batch's scan, used up as it runs: pending counts go down, dependents and parameters are dropped. */
  private readonly plan: Scan
  private readonly pipeline: Call.Pipeline
  private readonly runFork: <A, E>(
    effect: Effect.Effect<A, E, any>,
    options?: Runtime.RunForkOptions
  ) => Fiber.RuntimeFiber<A, E>
  private readonly observer: Observer
  private readonly batchStart: number
  /** Handlers running at once, at most. */
  private readonly slots: number
  private state: State = { _tag: "Open", running: new Map() }
  /** PENDING, RUNNING or DONE, per call. */
  private readonly status: Uint8Array
  /** When the call's predecessors were done (the batch's start for a call with none). */
  private readonly readyAt: Float64Array
  /** When its handler started, -1 until then. */
  private readonly startedAt: Float64Array
  /** The last `partial` progress output, kept for `ToolInterrupted`; made when the call starts in a fiber. */
  private readonly partials: Array<{ value: unknown } | undefined>
  /** Calls whose turn has come, in the order it came; `readyHead` is the next to start. */
  private readonly ready: Array<number> = []
  private readyHead = 0
  private pumping = false
  /** The calls' idempotency keys: the journal's, or random ones minted when a handler first asks. */
  private readonly keys: Keys

  constructor(options: {
    readonly calls: ReadonlyArray<ToolCall>
    readonly plan: Scan
    readonly pipeline: Call.Pipeline
    readonly runtime: Runtime.Runtime<any>
    readonly observer: Observer
    readonly maxParallel: number
    readonly batchStart: number
  }) {
    const { batchStart, calls, plan } = options
    const n = calls.length
    this.calls = calls
    this.plan = plan
    this.pipeline = options.pipeline
    this.runFork = Runtime.runFork(options.runtime)
    this.observer = options.observer
    this.batchStart = batchStart
    this.slots = plan.sequential ? 1 : options.maxParallel
    this.status = new Uint8Array(n)
    this.readyAt = new Float64Array(n).fill(batchStart)
    this.startedAt = new Float64Array(n).fill(-1)
    this.partials = new Array(n)
    this.keys = this.pipeline.journal?.keys ?? new FreshKeys()
    for (let i = 0; i < n; i++) if (plan.kernels[i] !== undefined && plan.pending[i] === 0) this.ready.push(i)
  }

  /** Finishes the calls that never run, then starts what may start. */
  start(): void {
    const refused = this.plan.refused
    for (let i = 0; i < refused.length; i++) {
      const outcome = refused[i]
      if (outcome !== undefined) this.finish(i, outcome)
    }
    refused.length = 0
    this.pump()
  }

  /** Stops starting calls, interrupts the running ones and waits for them. */
  close(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const state = this.state
      this.state = closed
      return state._tag === "Closed" || state.running.size === 0
        ? Effect.void
        : Fiber.interruptAll([...state.running.values()])
    })
  }

  /** Interrupts every unfinished call with that id: one waiting for its turn finishes now, a running one stops. */
  cancel(callId: string): Effect.Effect<void> {
    return Effect.suspend(() => {
      const toInterrupt: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
      for (let i = 0; i < this.calls.length; i++) {
        if (this.calls[i].id !== callId) continue
        if (this.status[i] === PENDING) {
          this.finish(i, this.interrupted(i))
        } else if (this.status[i] === RUNNING && this.state._tag === "Open") {
          const fiber = this.state.running.get(i)
          if (fiber !== undefined) toInterrupt.push(fiber)
        }
      }
      this.pump()
      return toInterrupt.length === 0 ? Effect.void : Fiber.interruptAll(toInterrupt)
    })
  }

  /**
   * Starts ready calls while there is a free slot and the observer has room. A loop, not a recursion, so a long
   * batch of synchronous calls never deepens the stack.
   */
  readonly pump = (): void => {
    const state = this.state
    if (state._tag === "Closed" || this.pumping) return
    this.pumping = true
    try {
      const ready = this.ready
      while (state.running.size < this.slots && this.readyHead < ready.length && this.observer.hasRoom()) {
        const i = ready[this.readyHead++]
        if (this.status[i] === PENDING) this.launch(i, state.running)
      }
      if (this.readyHead === ready.length && this.readyHead > 0) {
        ready.length = 0
        this.readyHead = 0
      }
    } finally {
      this.pumping = false
    }
  }

  private launch(i: number, running: Map<number, Fiber.RuntimeFiber<unknown, unknown>>): void {
    this.status[i] = RUNNING
    const call = this.calls[i]
    // the wait for the call's keys: from the batch's start to the moment its predecessors on them were done
    Call.waited(call.name, this.readyAt[i] - this.batchStart)
    const kernel = this.plan.kernels[i]!
    if (!Call.isBare(this.pipeline, kernel)) {
      const partial = this.partials[i] = { value: undefined }
      const effect = Call.run(this.pipeline, this.plan.tools[i]!, kernel, call, this.plan.params[i], {
        onProgress: this.reporter(i),
        partial,
        started: () => this.started(i),
        keys: this.plan.keys?.[i],
        idempotencyKeys: this.keys,
        index: i
      })
      return this.observe(
        i,
        running,
        this.runFork(effect),
        (exit) => Exit.isSuccess(exit) ? exit.value : Internal.classify(kernel, exit, () => partial.value)
      )
    }
    // A bare call: the handler is called here, in the pump's stack. One that answers with a value (an
    // `Effect.succeed`, `Effect.fail`) has finished: no fiber, no scheduling. One that must run starts as a fiber
    // with its call context set from the start, and one that never suspends has finished when `runFork` returns.
    this.started(i)
    const handler = Call.callHandler(kernel, this.plan.params[i])
    if (Exit.isExit(handler)) return this.finish(i, Internal.classify(kernel, handler, Call.noPartial))
    const partial = this.partials[i] = { value: undefined }
    const lastPartial = () => partial.value
    const context = Call.callContext(kernel, call.id, partial, this.reporter(i), this.keys, i)
    const inContext = {
      updateRefs: (refs: FiberRefs.FiberRefs, fiberId: FiberId.Runtime) =>
        FiberRefs.updateAs(refs, { fiberId, fiberRef: currentCall, value: context })
    }
    const limit = kernel.timeout ?? this.pipeline.timeout
    if (limit === undefined) {
      return this.observe(
        i,
        running,
        this.runFork(handler, inContext),
        (exit) => Internal.classify(kernel, exit, lastPartial)
      )
    }
    this.observe(i, running, this.runFork(Call.underTimeout(handler, limit), inContext), (exit) =>
      Exit.isSuccess(exit)
        ? Call.timedOutcome(kernel, exit.value, limit, lastPartial)
        : Internal.classify(kernel, exit, lastPartial))
  }

  /** The handler is about to run: one `Started`, the first time (a middleware may run it again). */
  private started(i: number): void {
    if (this.startedAt[i] >= 0) return
    this.startedAt[i] = this.pipeline.clock.unsafeCurrentTimeMillis()
    this.observer.started(i)
  }

  /** Where call `i`'s progress goes; dropped once the call has finished, so nothing follows its `Finished`. */
  private reporter(i: number): ((progress: Progress) => Effect.Effect<void>) | undefined {
    const room = this.observer.room
    if (room === undefined) return undefined
    const deliver = (progress: Progress) =>
      Effect.sync(() => {
        if (this.status[i] !== DONE) this.observer.progress(i, progress)
      })
    return (progress) => Effect.zipRight(room, deliver(progress))
  }

  /** Watches a call's fiber: when it ends, however it ends, the call finishes and the next ones may start. */
  private observe<A>(
    i: number,
    running: Map<number, Fiber.RuntimeFiber<unknown, unknown>>,
    fiber: Fiber.RuntimeFiber<A, unknown>,
    outcomeOf: (exit: Exit.Exit<A, unknown>) => Outcome
  ): void {
    const exit = fiber.unsafePoll()
    if (exit !== null) return this.settle(i, exit, outcomeOf)
    running.set(i, fiber)
    fiber.addObserver((exit) => {
      running.delete(i)
      this.settle(i, exit, outcomeOf)
      this.pump()
    })
  }

  private settle<A>(i: number, exit: Exit.Exit<A, unknown>, outcomeOf: (exit: Exit.Exit<A, unknown>) => Outcome) {
    if (this.status[i] === DONE) return
    // stopped from outside (cancel, the consumer leaving, the batch's scope closing)
    this.finish(
      i,
      Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? this.interrupted(i) : outcomeOf(exit)
    )
  }

  private interrupted(i: number): Outcome {
    return Either.left(Internal.interruptedOutcome(this.calls[i].name, this.partials[i]?.value))
  }

  /** The call is over: its `Finished`, its metrics, and its dependents released. */
  private finish(i: number, outcome: Outcome): void {
    this.status[i] = DONE
    if (this.plan.kernels[i] === undefined) {
      // refused before it could run: no running time, nobody waiting for it, no need for the clock
      this.observer.finished(i, outcome, 0)
      return Call.finished(this.calls[i].name, outcome, undefined)
    }
    const now = this.pipeline.clock.unsafeCurrentTimeMillis()
    const started = this.startedAt[i]
    const durationMillis = started < 0 ? 0 : now - started
    this.observer.finished(i, outcome, durationMillis)
    Call.finished(this.calls[i].name, outcome, started >= 0 ? durationMillis : undefined)
    // A call cancelled while it still waited for its turn holds its place in the chain until its own
    // predecessors are done, so the calls after it on a key never overlap the ones before it.
    if (this.plan.pending[i] === 0) this.release(i, now)
  }

  /** Lets a finished call's dependents go, and forgets the call (a long batch keeps no finished calls). */
  private release(i: number, now: number): void {
    const { dependents, params, pending } = this.plan
    params[i] = undefined
    this.partials[i] = undefined
    const waiting = dependents[i]
    if (waiting === undefined) return
    dependents[i] = undefined
    for (const d of waiting) {
      if (--pending[d] !== 0) continue
      if (this.status[d] === PENDING) {
        this.readyAt[d] = now
        this.ready.push(d)
      } else {
        this.release(d, now)
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the ways in
// ---------------------------------------------------------------------------------------------------------------

/** Plans the batch and makes it, not yet started, on the current fiber's runtime. */
const prepare = <Tools extends Tool.Any, RS>(
  runtime: Runtime.Runtime<RS | Tool.Requirements<Tools>>,
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Executor.Options<RS> | undefined,
  observer: Observer,
  journal: Call.Journaling | undefined
): Batch => {
  const pipeline = Call.make(
    runtime.context as never,
    FiberRefs.getOrDefault(runtime.fiberRefs, DefaultServices.currentServices),
    {
      timeout: options?.timeout === undefined ? undefined : Duration.decode(options.timeout),
      onStart: options?.onStart,
      middleware: options?.middleware,
      journal
    }
  )
  const batchStart = pipeline.clock.unsafeCurrentTimeMillis()
  const maxParallel = Math.max(1, Math.floor(options?.maxParallel ?? DEFAULT_MAX_PARALLEL))
  const scanned = scan(toolkit, calls, options?.sequential === true, pipeline.traced)
  return new Batch({ calls, plan: scanned, pipeline, runtime, observer, maxParallel, batchStart })
}

/** Plans the batch, opens it in the current scope (closing the scope closes it) and starts it. */
const open = <Tools extends Tool.Any, RS, O extends Observer>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Executor.Options<RS> | undefined,
  observer: O,
  journal: Call.Journaling | undefined
): Effect.Effect<Batch, never, Scope.Scope | RS | Tool.Requirements<Tools>> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<RS | Tool.Requirements<Tools>>()
    const batch = prepare(runtime, toolkit, calls, options, observer, journal)
    yield* Effect.addFinalizer(() => batch.close())
    batch.start()
    return batch
  })

/** `journal`: a journaled batch's writes and keys (see `internal/journal/run.ts`). */
export const start = <Tools extends Tool.Any, RS>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Executor.Options<RS> | undefined,
  journal?: Call.Journaling | undefined
): Effect.Effect<Executor.Handle, never, Scope.Scope | RS | Tool.Requirements<Tools>> =>
  Effect.suspend(() => {
    const events = new EventBuffer(calls)
    return Effect.map(open(toolkit, calls, options, events, journal), (batch): Executor.Handle => {
      events.resume = batch.pump
      return { events: events.events, cancel: (callId) => batch.cancel(callId) }
    })
  })

/** The batch's outcomes in call order, once every call has finished; the calls run as `start` runs them. */
export const run = <Tools extends Tool.Any, RS>(
  toolkit: Toolkit.Toolkit<Tools>,
  calls: ReadonlyArray<ToolCall>,
  options: Executor.Options<RS> | undefined,
  journal?: Call.Journaling | undefined
): Effect.Effect<ReadonlyArray<Outcome>, never, RS | Tool.Requirements<Tools>> =>
  // No scope of its own (a scope, its finalizer and the generator of `open` were most of a small batch's cost): the
  // batch is closed when the wait for its outcomes ends, however it ends, and started only once that is certain.
  // The runtime is taken outside the mask: the calls' fibers are forked with its flags, and must stay interruptible.
  Effect.flatMap(Effect.runtime<RS | Tool.Requirements<Tools>>(), (runtime) =>
    Effect.uninterruptibleMask((restore) => {
      const collector = new Collector(calls.length)
      const batch = prepare(runtime, toolkit, calls, options, collector, journal)
      batch.start()
      return Effect.ensuring(restore(collector.all), batch.close())
    }))

export const shouldTerminate = (outcomes: ReadonlyArray<Outcome>): boolean =>
  outcomes.length > 0 && outcomes.every((o) => Either.isRight(o) && o.right.terminate)
