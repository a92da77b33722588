/**
 * Durable runs: a run journaled as it goes (the Agent loop's, or one batch's), and resumed from its journal after
 * its process died.
 *
 * A run this process holds is a {@link Durable}: begun in the journal (or found there), its lease taken for as long
 * as it runs, and one failure for the whole run, set by the first journal write that fails (or the lease, once
 * lost). {@link guarded} runs the run's body against that failure: the body is interrupted (its calls stopped,
 * their finalizers run) and the run fails with the journal's error. So nothing is dispatched that was not recorded
 * first: a call whose dispatch write fails is stopped before anything of it runs.
 *
 * One batch ({@link batch}) of a durable run: each call's dispatch is durable before its handler (and its `onStart`,
 * and the middleware) runs, with its idempotency key and its tool's `replay`; every permission decision and every
 * `Recorder.write` record is durable before the call goes on; each outcome is durable as its call ends, and the
 * outcomes of the calls that never ran (an unknown tool, invalid arguments, a denial) when the batch ends, before
 * the step that depends on them. Writes of calls that start together share a transaction (the journal's group
 * commit).
 *
 * A batch resumed from the journal (a step the journal has calls of) decides per call, from what was recorded:
 *
 * - an outcome on record: that outcome; the call does not run again;
 * - a dispatch without an outcome (the process stopped while it ran): run again when its journaled `replay` is
 *   `"safe"` or `"keyed"` (with the key it first ran with) and its tool is still the same (definition and
 *   `replay`); else `ToolOutcomeUnknown`;
 * - no dispatch (it never started): run, unless its tool's definition changed since the step was journaled, which
 *   gives `InvalidArguments` saying so (the model wrote the arguments for the earlier definition); a tool that is
 *   gone gives `ToolNotFound`, as for any call;
 * - a permission decision on record is applied, in the order the call asked, and never asked again.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Executor from "../../Executor.js"
import * as Journal from "../../Journal.js"
import { JournalError } from "../../Journal.js"
import * as Permission from "../../Permission.js"
import * as Recorder from "../../Recorder.js"
import type * as Tool from "../../Tool.js"
import { ArgumentProblem, InvalidArguments, ToolOutcomeUnknown } from "../../ToolError.js"
import type * as Toolkit from "../../Toolkit.js"
import type * as Call from "../call.js"
import * as Internal from "../executor.js"
import * as Cleanups from "./cleanup.js"
import { canonicalJson } from "./codec.js"

type Outcome = Executor.Outcome
type ToolCall = Executor.ToolCall

// -------------------------------------------------------------------------------------------------------------------
// a run this process holds
// -------------------------------------------------------------------------------------------------------------------

/** What a resumed run finds in its journal: its steps in order, and each step's calls and decisions. */
export interface History {
  readonly steps: ReadonlyArray<Journal.Step>
  readonly byStep: ReadonlyMap<number, StepHistory>
}

/** A step's calls (by their journal id) and permission decisions (by call, in the order they were taken). */
export interface StepHistory {
  readonly calls: ReadonlyMap<string, Journal.Call>
  readonly decisions: ReadonlyMap<string, ReadonlyArray<Journal.CallDecision>>
}

const noHistory: History = { steps: [], byStep: new Map() }

/** A run this process holds the lease of. */
export class Durable {
  /** The first journal failure of the run, once there is one. */
  private failed: JournalError | undefined = undefined

  constructor(
    readonly journal: Journal.Journal.Service,
    readonly runId: string,
    /** The run as the journal had it when this process began or found it. */
    readonly run: Journal.Run,
    /** The journal had the run already. */
    readonly resumed: boolean,
    /** The current toolkit's fingerprint, by tool. */
    readonly tools: Readonly<Record<string, string>>,
    readonly failure: Deferred.Deferred<never, JournalError>
  ) {}

  /** Fails the run with its first journal failure: {@link guarded} interrupts its body. */
  fail(error: JournalError): void {
    if (this.failed !== undefined) return
    this.failed = error
    Deferred.unsafeDone(this.failure, Effect.fail(error))
  }

  /** Fails the run and stops the fiber that found the failure, before it does anything more. */
  stop(error: JournalError): Effect.Effect<never> {
    return Effect.zipRight(Effect.sync(() => this.fail(error)), Effect.interrupt)
  }

  /** Fails with the run's journal failure, if there was one: nothing after a failed write may go on. */
  get check(): Effect.Effect<void, JournalError> {
    return Effect.suspend(() => (this.failed === undefined ? Effect.void : Effect.fail(this.failed)))
  }

  /** The fingerprints of the tools `calls` name, as the toolkit has them now: kept with the step. */
  toolsOf(calls: ReadonlyArray<ToolCall>): Record<string, string> {
    const out: Record<string, string> = {}
    for (const call of calls) {
      const hash = this.tools[call.name]
      if (hash !== undefined) out[call.name] = hash
    }
    return out
  }

  /** The run's steps, calls and decisions, as journaled. */
  get history(): Effect.Effect<History, JournalError> {
    if (!this.resumed) return Effect.succeed(noHistory)
    const { journal, runId } = this
    return Effect.map(
      Effect.all([journal.steps(runId), journal.calls(runId), journal.decisions(runId)], { concurrency: 3 }),
      ([steps, calls, decisions]) => {
        const byStep = new Map<
          number,
          { calls: Map<string, Journal.Call>; decisions: Map<string, Array<Journal.CallDecision>> }
        >()
        const of = (step: number) => {
          let found = byStep.get(step)
          if (found === undefined) byStep.set(step, found = { calls: new Map(), decisions: new Map() })
          return found
        }
        for (const call of calls) of(call.step).calls.set(call.callId, call)
        for (const decision of decisions) {
          const own = of(decision.step).decisions
          const list = own.get(decision.callId)
          if (list === undefined) own.set(decision.callId, [decision])
          else list.push(decision)
        }
        return { steps, byStep }
      }
    )
  }
}

/** The run's options as the journal keeps them: JSON, saying which kind of run it is. */
export interface RunOptions {
  readonly kind: "agent" | "batch"
  readonly [option: string]: unknown
}

/**
 * Begins the run in the journal (or finds it), takes its lease until the scope closes, and, when the run was last
 * held by another host (or another journal), runs the cleanup handlers over its records: what that host's calls
 * left running is ended before anything of this one runs.
 */
export const open = (
  journal: Journal.Journal.Service,
  runId: string,
  toolkit: Toolkit.Toolkit<Tool.Any>,
  options: RunOptions
): Effect.Effect<Durable, JournalError, Scope.Scope> =>
  Effect.gen(function*() {
    const fingerprint = Journal.fingerprint(toolkit)
    const begun = yield* journal.begin({ runId, ...fingerprint, options })
    if (begun.resumed && (begun.run.options as RunOptions | null)?.kind !== options.kind) {
      return yield* new JournalError({
        reason: "Conflict",
        runId,
        message: `the run ${JSON.stringify(runId)} is not ${
          options.kind === "agent" ? "an agent's run" : "a batch"
        }: it was begun as ${kindOf(begun.run.options)}`
      })
    }
    const lastHolder = Option.map(begun.run.lease, (lease) => lease.owner)
    const lease = yield* journal.acquire(runId)
    const failure = yield* Deferred.make<never, JournalError>()
    const durable = new Durable(journal, runId, lease.run, begun.resumed, fingerprint.tools, failure)
    yield* Effect.forkScoped(Effect.catchAll(lease.lost, (error) => Effect.sync(() => durable.fail(error))))
    if (begun.resumed && begun.run.status !== "completed" && Option.getOrUndefined(lastHolder) !== journal.owner) {
      yield* Cleanups.cleanUp(journal, runId, yield* Journal.Cleanup)
    }
    return durable
  })

const kindOf = (options: unknown): string => {
  const kind = (options as { readonly kind?: unknown } | null)?.kind
  return kind === "agent" ? "an agent's run" : kind === "batch" ? "a batch" : "something else"
}

/**
 * The run's body against its journal failure: the first failure interrupts the body (its calls stopped, their
 * finalizers run) and fails the run with it.
 */
export const guarded = <A, E, R>(
  durable: Durable,
  body: Effect.Effect<A, E, R>
): Effect.Effect<A, E | JournalError, R> =>
  Effect.zipLeft(Effect.raceFirst(body, Deferred.await(durable.failure)), durable.check)

/** A journaled step's response that does not read back as what this kind of run writes. */
export const unreadable = (runId: string, step: number, error: ParseResult.ParseError): JournalError =>
  new JournalError({
    reason: "Corrupt",
    runId,
    message: `step ${step} of run ${JSON.stringify(runId)} cannot be read back: ${
      ParseResult.TreeFormatter.formatErrorSync(error)
    }`,
    cause: error
  })

// -------------------------------------------------------------------------------------------------------------------
// the calls of a step, as journaled
// -------------------------------------------------------------------------------------------------------------------

/** A model's call as a step keeps it. */
export const ToolCallJson = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.optional(Schema.Unknown)
})

/** The fingerprints of the tools a step's calls named, when the step was journaled. */
export const ToolsJson = Schema.Record({ key: Schema.String, value: Schema.String })

/** A call read back from a step: `arguments` as the model sent them. */
export const toCall = (call: typeof ToolCallJson.Type): ToolCall => ({
  id: call.id,
  name: call.name,
  arguments: call.arguments
})

/**
 * Each call's id in the journal: the model's, or, for a call whose id an earlier call of the step already has (a
 * model may repeat one), the id with `#<index>` added, so every call of a step has a row of its own.
 */
export const journalIds = (calls: ReadonlyArray<ToolCall>): Array<string> => {
  const seen = new Set<string>()
  return calls.map((call, index) => {
    let id = call.id
    for (let k = index; seen.has(id); k++) id = `${call.id}#${k}`
    seen.add(id)
    return id
  })
}

// -------------------------------------------------------------------------------------------------------------------
// one batch
// -------------------------------------------------------------------------------------------------------------------

/** The `ToolOutcomeUnknown` of a call that may have run and will not run again. */
const unknownOutcome = (tool: string, idempotencyKey: string): Outcome =>
  Either.left(new ToolOutcomeUnknown({ tool, idempotencyKey }))

/** The outcome of a call that never started, whose tool changed since its step was journaled. */
const changedOutcome = (tool: string): Outcome =>
  Either.left(
    new InvalidArguments({
      tool,
      problems: [
        new ArgumentProblem({
          path: "",
          message: `written for an earlier definition of the tool ${
            JSON.stringify(tool)
          }, which has changed since: call it again with arguments for its current definition`
        })
      ]
    })
  )

/** Where a journaled batch sends its events (`Agent.stream`); undefined when nobody reads them. */
export type Emit = (events: Chunk.Chunk<Executor.ToolEvent>) => Effect.Effect<void>

/**
 * Runs step `step`'s calls as one journaled batch (resumed, when `prior` has what the journal recorded of them),
 * and gives every call's outcome in call order, each durable. Fails with the run's journal failure.
 *
 * `stepTools`: the fingerprints of the tools the step's calls named when the step was journaled, for a resumed
 * step (a tool whose fingerprint differs now has changed).
 */
export const batch = (
  durable: Durable,
  step: number,
  toolkit: Toolkit.Toolkit<Tool.Any>,
  calls: ReadonlyArray<ToolCall>,
  options: Executor.Options<any> | undefined,
  resumed:
    | { readonly prior: StepHistory | undefined; readonly stepTools: Readonly<Record<string, string>> }
    | undefined,
  emit: Emit | undefined
): Effect.Effect<ReadonlyArray<Outcome>, JournalError, any> =>
  Effect.suspend(() => {
    const { journal, runId } = durable
    const n = calls.length
    const ids = journalIds(calls)
    /** The index of the first call of each model id: how a record or a decision, which carry it, find their call. */
    const byModelId = new Map<string, number>()
    for (let i = n - 1; i >= 0; i--) byModelId.set(calls[i].id, i)
    const idOf = (modelId: string): string => {
      const i = byModelId.get(modelId)
      return i === undefined ? modelId : ids[i]
    }
    const keys: Array<string | undefined> = new Array(n)
    const keyOf = (i: number): string => keys[i] ??= Journal.idempotencyKey({ runId, step, callId: ids[i] })
    const outcomes: Array<Outcome | undefined> = new Array(n)
    /** The call's outcome is durable. */
    const written = new Uint8Array(n)
    const toRun: Array<number> = []

    const prior = resumed?.prior
    for (let i = 0; i < n; i++) {
      const call = calls[i]
      const row = prior?.calls.get(ids[i])
      if (row !== undefined && Option.isSome(row.outcome)) {
        outcomes[i] = row.outcome.value.outcome
        written[i] = 1
        continue
      }
      const tool = toolkit.byName.get(call.name)
      const changed = resumed !== undefined && tool !== undefined &&
        resumed.stepTools[call.name] !== durable.tools[call.name]
      if (row !== undefined && Option.isSome(row.dispatch)) {
        const dispatch = row.dispatch.value
        keys[i] = dispatch.idempotencyKey
        const again = tool !== undefined && !changed && dispatch.replay !== "unknown" && tool.replay === dispatch.replay
        if (again) toRun.push(i)
        else outcomes[i] = unknownOutcome(call.name, dispatch.idempotencyKey)
        continue
      }
      if (changed) outcomes[i] = changedOutcome(call.name)
      else toRun.push(i)
    }

    const writeOutcome = (i: number, outcome: Outcome): Effect.Effect<void> =>
      Effect.matchEffect(
        journal.outcome({
          runId,
          step,
          callId: ids[i],
          index: i,
          tool: calls[i].name,
          arguments: calls[i].arguments,
          outcome
        }),
        {
          onFailure: (error) => Effect.sync(() => durable.fail(error)),
          onSuccess: () =>
            Effect.sync(() => {
              written[i] = 1
            })
        }
      )

    const journaling: Call.Journaling = {
      keys: { of: (j) => keyOf(toRun[j]) },
      around: (j, tool, call, body) => {
        const i = toRun[j]
        const dispatch = journal.dispatch({
          runId,
          step,
          callId: ids[i],
          index: i,
          tool: call.name,
          arguments: call.arguments,
          idempotencyKey: keyOf(i),
          replay: tool.replay
        })
        return Effect.matchEffect(dispatch, {
          onFailure: (error) => durable.stop(error),
          onSuccess: () => Effect.tap(body, (outcome) => writeOutcome(i, outcome))
        })
      }
    }

    const outerRecorder = Recorder.Recorder
    const run = Effect.gen(function*() {
      yield* durable.check
      const recorder = yield* outerRecorder
      const requester = yield* Permission.Requester
      const subset = toRun.length === n ? calls : toRun.map((i) => calls[i])
      let ran: Effect.Effect<void, never, any>
      if (emit === undefined) {
        ran = Effect.map(Internal.run(toolkit, subset, options, journaling), (got) => {
          for (let j = 0; j < got.length; j++) outcomes[toRun[j]] = got[j]
        })
      } else {
        const known: Array<Executor.ToolEvent> = []
        for (let i = 0; i < n; i++) {
          const outcome = outcomes[i]
          if (outcome !== undefined) {
            known.push({ _tag: "Finished", index: i, call: calls[i], outcome, durationMillis: 0 })
          }
        }
        ran = Effect.scoped(Effect.gen(function*() {
          if (known.length > 0) {
            yield* emit(Chunk.unsafeFromArray(known))
          }
          if (subset.length === 0) {
            return
          }
          const handle = yield* Internal.start(toolkit, subset, options, journaling)
          yield* Stream.runForEachChunk(handle.events, (chunk) =>
            emit(Chunk.map(chunk, (event): Executor.ToolEvent => {
              const i = toRun[event.index]
              if (event._tag === "Finished") outcomes[i] = event.outcome
              return { ...event, index: i }
            })))
        }))
      }
      ran = Effect.provideService(ran, Recorder.Recorder, journaledRecorder(durable, step, idOf, recorder))
      const decisions = journaledRequester(durable, step, idOf, requester, prior?.decisions)
      if (decisions !== undefined) ran = Effect.provideService(ran, Permission.Requester, decisions)
      yield* ran
      yield* durable.check
      // the outcomes of the calls that never ran, or were decided here: durable before the step that reads them
      yield* Effect.forEach(
        outcomes.flatMap((outcome, i) => (written[i] === 1 || outcome === undefined ? [] : [i])),
        (i) => writeOutcome(i, outcomes[i]!),
        { concurrency: "unbounded", discard: true }
      )
      yield* durable.check
      return outcomes as ReadonlyArray<Outcome>
    })
    return run
  })

/**
 * The recorder a journaled batch's calls write to: the journal first (a record that could not be made durable fails
 * the write, and the run), then the host's own recorder, if any.
 */
const journaledRecorder = (
  durable: Durable,
  step: number,
  idOf: (modelId: string) => string,
  outer: Recorder.Recorder["Type"]
): Recorder.Recorder["Type"] => {
  const forward = outer !== Recorder.Recorder.defaultValue()
  return {
    write: (entry) => {
      const durably = Effect.catchAll(
        durable.journal.record({
          runId: durable.runId,
          step,
          callId: idOf(entry.callId),
          tool: entry.tool,
          phase: entry.phase,
          record: entry.record
        }),
        (error) =>
          Effect.zipRight(
            Effect.sync(() => durable.fail(error)),
            Effect.fail(new Recorder.RecordError({ namespace: entry.record.namespace, reason: error.message }))
          )
      )
      return forward ? Effect.zipRight(durably, outer.write(entry)) : durably
    }
  }
}

/**
 * The requester a journaled batch's calls ask: a decision on record for the call (the n-th for its n-th request)
 * is applied without asking; otherwise the host's requester answers and its decision is made durable before the
 * call goes on. Undefined when there is nothing to record or apply (no requester, no decision on record), so the
 * calls ask nothing, as without a journal.
 */
const journaledRequester = (
  durable: Durable,
  step: number,
  idOf: (modelId: string) => string,
  outer: Permission.Requester["Type"],
  recorded: ReadonlyMap<string, ReadonlyArray<Journal.CallDecision>> | undefined
): Permission.Requester["Type"] | undefined => {
  const asks = outer !== Permission.Requester.defaultValue()
  if (!asks && (recorded === undefined || recorded.size === 0)) return undefined
  const asked = new Map<string, number>()
  return {
    request: (request) =>
      Effect.suspend(() => {
        const callId = idOf(request.callId)
        const nth = asked.get(callId) ?? 0
        asked.set(callId, nth + 1)
        const onRecord = recorded?.get(callId)?.[nth]
        if (onRecord !== undefined) {
          const decision = onRecord.decision
          return Effect.succeed(
            decision._tag === "Allow" ? Permission.allow : Permission.deny(decision.reason)
          )
        }
        if (!asks) return Effect.succeed(Permission.allow)
        return Effect.tap(outer.request(request), (decision) =>
          Effect.catchAll(
            durable.journal.decision({
              runId: durable.runId,
              step,
              callId,
              tool: request.tool,
              action: request.action,
              description: request.description,
              decision
            }),
            (error) => durable.stop(error)
          ))
      })
  }
}

// -------------------------------------------------------------------------------------------------------------------
// a batch on its own: Executor.run with a run id, Executor.resume
// -------------------------------------------------------------------------------------------------------------------

/** What a journaled batch keeps as its one step: its calls, and the fingerprints of the tools they name. */
const BatchStep = Schema.Struct({ calls: Schema.Array(ToolCallJson), tools: ToolsJson })
const decodeBatchStep = Schema.decodeUnknownEither(BatchStep)

/** A call as a step keeps it. */
export const callJson = (call: ToolCall): typeof ToolCallJson.Type => ({
  id: call.id,
  name: call.name,
  arguments: call.arguments
})

/** The executor's options that are data, as the run keeps them. */
const batchOptions = (options: Executor.Options<any> | undefined): RunOptions => ({
  kind: "batch",
  ...(options?.maxParallel === undefined ? {} : { maxParallel: options.maxParallel }),
  ...(options?.sequential === undefined ? {} : { sequential: options.sequential }),
  ...(options?.timeout === undefined ? {} : { timeout: Duration.format(Duration.decode(options.timeout)) })
})

/**
 * `Executor.run` with a run id (`calls` given) and `Executor.resume` (`calls` undefined): the batch journaled as
 * step 0 of a run of its own, begun (or found) and leased for as long as it runs, and ended `completed`. A run that
 * exists is resumed: its journaled calls run, and calls given must be the same ones.
 */
export const runBatch = (
  toolkit: Toolkit.Toolkit<Tool.Any>,
  calls: ReadonlyArray<ToolCall> | undefined,
  runId: string,
  options: Executor.Options<any> | undefined
): Effect.Effect<ReadonlyArray<Outcome>, JournalError, any> =>
  Effect.flatMap(Journal.Journal, (journal) =>
    Effect.scoped(Effect.gen(function*() {
      if (calls === undefined && Option.isNone(yield* journal.run(runId))) {
        return yield* new JournalError({
          reason: "UnknownRun",
          runId,
          message: `no run ${JSON.stringify(runId)} was begun`
        })
      }
      const durable = yield* open(journal, runId, toolkit, batchOptions(options))
      const history = yield* durable.history
      const first = history.steps[0]
      let batchCalls: ReadonlyArray<ToolCall>
      let resumed: Parameters<typeof batch>[5] = undefined
      if (first !== undefined && first.step === 0) {
        const decoded = decodeBatchStep(first.response)
        if (Either.isLeft(decoded)) return yield* unreadable(runId, 0, decoded.left)
        batchCalls = decoded.right.calls.map(toCall)
        if (calls !== undefined && canonicalJson(calls.map(callJson)) !== canonicalJson(decoded.right.calls)) {
          return yield* new JournalError({
            reason: "Conflict",
            runId,
            message: `the run ${
              JSON.stringify(runId)
            } was begun with other calls: resume it as it was begun (Executor.resume), or use another run id`
          })
        }
        resumed = { prior: history.byStep.get(0), stepTools: decoded.right.tools }
      } else if (calls === undefined) {
        return yield* new JournalError({
          reason: "UnknownRun",
          runId,
          message: `the run ${JSON.stringify(runId)} has no journaled batch: it stopped before its calls were journaled`
        })
      } else {
        batchCalls = calls
        yield* journal.step({ runId, step: 0, response: { calls: calls.map(callJson), tools: durable.toolsOf(calls) } })
      }
      const outcomes = yield* guarded(durable, batch(durable, 0, toolkit, batchCalls, options, resumed, undefined))
      yield* journal.end(runId, "completed")
      return outcomes
    })))
