/**
 * The agent loop's machinery.
 *
 * A run is a {@link Run}: its transcript, its steps so far, and a state that is one of three: `Asking` (step `n`'s
 * model request is next), `Running` (step `n`'s model answered with calls, which run next as one batch) or
 * `Stopped` (with its reason). `ask` requests the model and appends its assistant message; `execute` runs the
 * calls and appends their outcomes; both end in `finishStep`, which records the step and decides the next state
 * (`decide`, a pure function of the steps), and go on with it. Everything a step is (the model's `Response`, the calls, the outcomes) is plain
 * data on the step record, and the transcript is always the prompt followed by each step's message and outcomes,
 * so a run can be rebuilt from its prompt and its steps: what a journal records, and replays instead of asking
 * again.
 *
 * Events are optional: `Agent.run` has no sink, so the loop builds no event, runs each batch with `Executor.run`
 * and asks the model for a whole answer; `Agent.stream` gives the run a sink (a bounded mailbox the stream reads),
 * runs each batch with `Executor.start` and forwards its events tagged with the step, and installs a
 * `Permission.Requester` that announces each request before the outer requester answers it (only when there is
 * an outer one: with none the executor asks nothing, and must go on asking nothing).
 *
 * A journaled run (a `runId`, and a `Journal` in the environment: `Effect.serviceOption`, so a run without one needs
 * nothing more) is a `Durable` run (`journal/run.ts`): begun or found in the journal and leased while it runs; each
 * model response journaled (with the fingerprints of the tools its calls name) before its calls run, each batch
 * journaled call by call. A run the journal has is rebuilt first (`replay`): its journaled prompt, then each
 * journaled step whose every call has an outcome, finished as it was, without asking the model; the first step
 * with unfinished calls is resumed as a batch by the replay rules; then the loop goes on.
 *
 * The @effect/ai model is in `agentLanguageModel.ts`, imported dynamically the first time a run needs it: the
 * root module, which exports `Agent`, must load without @effect/ai.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type {
  AssistantMessage,
  Event,
  LanguageModelOptions,
  Message,
  Model,
  ModelContext,
  Options,
  PromptInput,
  Response,
  Result,
  Step,
  StopReason,
  ToolCallPart,
  Turn,
  Usage
} from "../Agent.js"
import { AgentError } from "../Agent.js"
import * as Executor from "../Executor.js"
import * as Journal from "../Journal.js"
import type { JournalError } from "../Journal.js"
import * as Permission from "../Permission.js"
import type * as Tool from "../Tool.js"
import type * as Toolkit from "../Toolkit.js"
import type * as AdapterModule from "./agentLanguageModel.js"
import * as Durable from "./journal/run.js"
import { toolMessages } from "./providers/promptParts.js"

export const DEFAULT_MAX_STEPS = 20

/** How many events the stream's consumer may fall behind before the run waits for it. */
export const EVENT_BUFFER = 1024

// ---------------------------------------------------------------------------------------------------------------
// the @effect/ai model, loaded when first asked
// ---------------------------------------------------------------------------------------------------------------

type Adapter = typeof AdapterModule

let adapter: Adapter | undefined

const loadAdapter: Effect.Effect<Adapter> = Effect.suspend(() =>
  adapter !== undefined ? Effect.succeed(adapter) : Effect.orDie(Effect.tryPromise({
    try: () => import("./agentLanguageModel.js"),
    catch: (error) =>
      new Error(
        `Agent: a run without a model uses the @effect/ai LanguageModel, and @effect/ai could not be loaded: ${
          String(error)
        }`
      )
  })).pipe(Effect.tap((loaded) => {
    adapter = loaded
  }))
)

export const languageModel = (options?: LanguageModelOptions): Model<any> => {
  let model: Model<any> | undefined
  return (transcript, context) =>
    model !== undefined
      ? model(transcript, context)
      : Effect.flatMap(loadAdapter, (loaded) => (model = loaded.make(options))(transcript, context))
}

// ---------------------------------------------------------------------------------------------------------------
// a run
// ---------------------------------------------------------------------------------------------------------------

interface Config {
  readonly toolkit: Toolkit.Toolkit<Tool.Any>
  readonly model: Model<any>
  readonly maxSteps: number
  readonly stopWhen: ((steps: ReadonlyArray<Step>) => boolean) | undefined
  readonly runId: string | undefined
  readonly modelTimeout: Duration.Duration | undefined
  readonly executor: Executor.Options<any>
}

const configOf = (options: Options<Tool.Any, any, any>): Config => {
  const maxSteps = options.maxSteps === undefined || Number.isNaN(options.maxSteps)
    ? DEFAULT_MAX_STEPS
    : Math.max(1, Math.floor(options.maxSteps))
  const executor: { -readonly [K in keyof Executor.Options<any>]: Executor.Options<any>[K] } = {}
  if (options.maxParallel !== undefined) executor.maxParallel = options.maxParallel
  if (options.sequential !== undefined) executor.sequential = options.sequential
  if (options.timeout !== undefined) executor.timeout = options.timeout
  if (options.onStart !== undefined) executor.onStart = options.onStart
  return {
    toolkit: options.toolkit,
    model: options.model ?? languageModel(),
    maxSteps,
    stopWhen: options.stopWhen,
    runId: options.runId,
    modelTimeout: options.modelTimeout === undefined ? undefined : Duration.decode(options.modelTimeout),
    executor
  }
}

/** Where a streamed run's events go. */
interface Sink {
  readonly offer: (event: Event) => Effect.Effect<void>
  readonly offerAll: (events: Iterable<Event>) => Effect.Effect<void>
}

type State =
  | { readonly _tag: "Asking"; readonly step: number }
  | { readonly _tag: "Running"; readonly step: number; readonly response: Response }
  | { readonly _tag: "Stopped"; readonly reason: StopReason }

const noText = (_: string): Effect.Effect<void> => Effect.void

const transcriptOf = (prompt: PromptInput): ReadonlyArray<Message> =>
  typeof prompt === "string"
    ? [{ role: "user", content: prompt }]
    : Array.isArray(prompt)
    ? [...prompt]
    : [...(prompt as { readonly content: ReadonlyArray<Message> }).content]

/** The arguments as the model's message shows them: parsed when they are JSON text, else as they came. */
const paramsOf = (args: unknown): unknown => {
  if (typeof args !== "string") return args
  if (args.trim() === "") return {}
  try {
    return JSON.parse(args)
  } catch {
    return args
  }
}

/** The assistant message of a turn that brought none of its own: its text, then its calls. */
const assistantMessage = (text: string, calls: ReadonlyArray<Executor.ToolCall>): AssistantMessage => {
  const content: Array<{ readonly type: "text"; readonly text: string } | ToolCallPart> = []
  if (text !== "") content.push({ type: "text", text })
  for (const call of calls) {
    content.push({ type: "tool-call", id: call.id, name: call.name, params: paramsOf(call.arguments) })
  }
  return { role: "assistant", content }
}

const responseOf = (turn: Turn): Response => {
  const text = turn.text ?? ""
  const calls = turn.calls ?? []
  return {
    text,
    calls,
    usage: turn.usage,
    message: turn.message ?? assistantMessage(text, calls),
    raw: turn.raw
  }
}

/** The token counts a `Usage` has. */
export const USAGE_FIELDS = [
  "inputTokens",
  "outputTokens",
  "totalTokens",
  "reasoningTokens",
  "cachedInputTokens"
] as const

/** Each field summed over the steps that reported it. */
const totalUsage = (steps: ReadonlyArray<Step>): Usage => {
  const total: { -readonly [K in keyof Usage]: number } = {}
  for (const step of steps) {
    const usage = step.response.usage
    if (usage === undefined) continue
    for (const field of USAGE_FIELDS) {
      const value = usage[field]
      if (typeof value === "number") total[field] = (total[field] ?? 0) + value
    }
  }
  return total
}

/** What a resumed step's batch needs from the journal: what it recorded of the calls, and of their tools. */
type Resumed = NonNullable<Parameters<typeof Durable.batch>[5]>

class Run {
  transcript: ReadonlyArray<Message>
  steps: ReadonlyArray<Step> = []
  /** The step under way, for an error that does not come from one (a lease lost between steps). */
  current = 0
  /** The journaled run, once begun or found. */
  durable: Durable.Durable | undefined = undefined
  /** The step whose batch resumes from the journal, with what the journal has of it. */
  resumed: { readonly step: number; readonly from: Resumed } | undefined = undefined

  constructor(readonly config: Config, prompt: PromptInput, readonly sink: Sink | undefined) {
    this.transcript = transcriptOf(prompt)
  }

  /** From the first step to the end. */
  get loop(): Effect.Effect<Result, AgentError, any> {
    return this.from({ _tag: "Asking", step: 0 })
  }

  /** From `state` to the end. */
  from(state: State): Effect.Effect<Result, AgentError, any> {
    const go = (state: State): Effect.Effect<Result, AgentError, any> => {
      switch (state._tag) {
        case "Asking":
          return this.ask(state.step, go)
        case "Running":
          return this.execute(state.step, state.response, go)
        case "Stopped":
          return Effect.succeed(this.result(state.reason))
      }
    }
    return go(state)
  }

  /**
   * Rebuilds the run from its journal: the journaled prompt, then each journaled step whose calls all have an
   * outcome, finished as it was; gives where the run goes on: the first step the journal does not have, the step
   * whose calls did not all finish (its batch resumes), or the stop a finished step decided.
   */
  replay(durable: Durable.Durable, history: Durable.History): Effect.Effect<State, JournalError> {
    const { runId } = durable
    return Effect.gen(this, function*() {
      const prompt = (durable.run.options as { readonly prompt?: unknown } | null)?.prompt
      if (Array.isArray(prompt)) this.transcript = prompt as ReadonlyArray<Message>
      const replayed: Array<Step> = []
      let state: State = { _tag: "Asking", step: 0 }
      for (const journaled of history.steps) {
        if (state._tag !== "Asking" || journaled.step !== state.step) break
        const step: number = journaled.step
        const decoded = decodeAgentStep(journaled.response)
        if (Either.isLeft(decoded)) return yield* Durable.unreadable(runId, step, decoded.left)
        const response: Response = {
          ...decoded.right.response,
          calls: decoded.right.response.calls.map(Durable.toCall),
          message: decoded.right.response.message as AssistantMessage
        }
        this.current = step
        this.transcript = [...this.transcript, response.message]
        const prior = history.byStep.get(step)
        const ids = Durable.journalIds(response.calls)
        const outcomes = ids.map((id) => Option.flatMap(Option.fromNullable(prior?.calls.get(id)), (c) => c.outcome))
        if (outcomes.every(Option.isSome)) {
          const record = this.finishStep(step, response, outcomes.map((o) => o.value.outcome))
          replayed.push(record.step)
          state = record.state
        } else {
          this.resumed = { step, from: { prior, stepTools: decoded.right.tools } }
          state = { _tag: "Running", step, response }
        }
      }
      const sink = this.sink
      if (sink !== undefined) {
        yield* sink.offerAll(replayed.map((step): Event => ({ _tag: "StepFinished", step })))
        if (state._tag === "Running") {
          yield* sink.offer({ _tag: "ModelResponded", step: state.step, response: state.response })
        }
      }
      return state
    })
  }

  /**
   * Asks the model for step `step` and appends its message, then goes on with `next` (a response without calls
   * has finished the run). The transitions take what comes next rather than give an Effect of the next state:
   * a step is then a handful of Effects, which matters right after a model request, when every line runs cold.
   */
  ask<A, E, R>(step: number, next: (state: State) => Effect.Effect<A, E, R>): Effect.Effect<A, E | AgentError, any> {
    const { config, sink } = this
    const context: ModelContext = {
      step,
      steps: this.steps,
      toolkit: config.toolkit,
      streaming: sink !== undefined,
      textDelta: sink === undefined ? noText : (delta) => sink.offer({ _tag: "TextDelta", step, delta })
    }
    const request = Effect.suspend(() => config.model(this.transcript, context))
    this.current = step
    const durable = this.durable
    const answered = (turn: Turn): Effect.Effect<A, E | AgentError, R> => {
      const response = responseOf(turn)
      if (durable !== undefined) {
        // durable before anything of the step runs: a resumed run does not ask the model again for it
        const journaled = durable.journal.step({
          runId: durable.runId,
          step,
          response: { response, tools: durable.toolsOf(response.calls) }
        })
        return Effect.zipRight(
          Effect.mapError(journaled, (cause) => this.error(step, { reason: "JournalFailed", cause })),
          Effect.suspend(() => this.respond(step, response, next))
        )
      }
      return this.respond(step, response, next)
    }
    const timeout = config.modelTimeout
    const asked = timeout === undefined
      ? Effect.matchEffect(request, {
        onFailure: (cause) => Effect.fail(this.error(step, { reason: "ModelFailed", cause })),
        onSuccess: answered
      })
      : Effect.flatMap(
        Effect.timeoutFail(Effect.mapError(request, (cause) => this.error(step, { reason: "ModelFailed", cause })), {
          duration: timeout,
          onTimeout: () => this.error(step, { reason: "ModelTimeout", timeout })
        }),
        answered
      )
    return sink === undefined ? asked : Effect.zipRight(sink.offer({ _tag: "StepStarted", step }), asked)
  }

  /** The model answered step `step`: its message appended, then its calls run (or the run ends without any). */
  respond<A, E, R>(
    step: number,
    response: Response,
    next: (state: State) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> {
    const { sink } = this
    this.transcript = [...this.transcript, response.message]
    if (response.calls.length > 0) {
      const running: State = { _tag: "Running", step, response }
      return sink === undefined
        ? next(running)
        : Effect.zipRight(sink.offer({ _tag: "ModelResponded", step, response }), next(running))
    }
    const record = this.finishStep(step, response, [])
    return sink === undefined ? next(record.state) : Effect.zipRight(
      Effect.zipRight(
        sink.offer({ _tag: "ModelResponded", step, response }),
        sink.offer({ _tag: "StepFinished", step: record.step })
      ),
      next(record.state)
    )
  }

  /** Runs step `step`'s calls as one batch, appends their outcomes, and goes on with `next`. */
  execute<A, E, R>(
    step: number,
    response: Response,
    next: (state: State) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | AgentError, any> {
    const { sink } = this
    this.current = step
    return Effect.flatMap(this.batch(step, response.calls), (outcomes) => {
      const record = this.finishStep(step, response, outcomes)
      return sink === undefined
        ? next(record.state)
        : Effect.zipRight(sink.offer({ _tag: "StepFinished", step: record.step }), next(record.state))
    })
  }

  batch(
    step: number,
    calls: ReadonlyArray<Executor.ToolCall>
  ): Effect.Effect<ReadonlyArray<Executor.Outcome>, AgentError, any> {
    const { config, durable, sink } = this
    if (durable !== undefined) return this.journaledBatch(durable, step, calls)
    if (sink === undefined) return Executor.run(config.toolkit, calls, config.executor)
    return Effect.scoped(Effect.gen(function*() {
      // the Requester is a Reference: its default (allow everything, ask nobody) stands for "none provided"
      const outer = yield* Permission.Requester
      let start = Executor.start(config.toolkit, calls, config.executor)
      if (outer !== Permission.Requester.defaultValue()) {
        start = Effect.provideService(start, Permission.Requester, announcing(step, calls, outer, sink))
      }
      const handle = yield* start
      const outcomes: Array<Executor.Outcome> = new Array(calls.length)
      yield* Stream.runForEachChunk(handle.events, (chunk) =>
        sink.offerAll(Chunk.map(chunk, (event): Event => {
          if (event._tag === "Finished") outcomes[event.index] = event.outcome
          return { ...event, step }
        })))
      return outcomes
    }))
  }

  /** The batch of a journaled run: resumed from the journal for the step `replay` left unfinished. */
  journaledBatch(
    durable: Durable.Durable,
    step: number,
    calls: ReadonlyArray<Executor.ToolCall>
  ): Effect.Effect<ReadonlyArray<Executor.Outcome>, AgentError, any> {
    const { config, sink } = this
    const resumed = this.resumed?.step === step ? this.resumed.from : undefined
    this.resumed = undefined
    const emit: Durable.Emit | undefined = sink === undefined
      ? undefined
      : (chunk) => sink.offerAll(Chunk.map(chunk, (event): Event => ({ ...event, step })))
    const batch = Durable.batch(durable, step, config.toolkit, calls, config.executor, resumed, emit)
    const announced = sink === undefined ?
      batch :
      Effect.flatMap(Permission.Requester, (outer) =>
        outer === Permission.Requester.defaultValue()
          ? batch
          : Effect.provideService(batch, Permission.Requester, announcing(step, calls, outer, sink)))
    return Effect.mapError(announced, (cause) => this.error(step, { reason: "JournalFailed", cause }))
  }

  /** Records the step, appends its outcomes, and decides what comes next. */
  finishStep(
    step: number,
    response: Response,
    outcomes: ReadonlyArray<Executor.Outcome>
  ): { readonly step: Step; readonly state: State } {
    const record: Step = { index: step, response, outcomes }
    this.steps = [...this.steps, record]
    if (outcomes.length > 0) this.transcript = [...this.transcript, ...toolMessages(response.calls, outcomes)]
    return { step: record, state: this.decide(step, outcomes) }
  }

  /** After a step: the first stop condition that holds, else the next request. */
  decide(step: number, outcomes: ReadonlyArray<Executor.Outcome>): State {
    if (outcomes.length === 0) return { _tag: "Stopped", reason: "NoCalls" }
    if (Executor.shouldTerminate(outcomes)) return { _tag: "Stopped", reason: "Terminated" }
    if (this.config.stopWhen?.(this.steps) === true) return { _tag: "Stopped", reason: "StopWhen" }
    if (step + 1 >= this.config.maxSteps) return { _tag: "Stopped", reason: "MaxSteps" }
    return { _tag: "Asking", step: step + 1 }
  }

  error(
    step: number,
    fields: { readonly reason: "ModelFailed" | "JournalFailed"; readonly cause: unknown } | {
      readonly reason: "ModelTimeout"
      readonly timeout: Duration.Duration
    }
  ): AgentError {
    return new AgentError({
      ...fields,
      step,
      steps: this.steps,
      ...(this.config.runId === undefined ? {} : { runId: this.config.runId })
    })
  }

  result(reason: StopReason): Result {
    const steps = this.steps
    return {
      runId: this.config.runId,
      reason,
      text: steps.length === 0 ? "" : steps[steps.length - 1].response.text,
      transcript: this.transcript,
      steps,
      usage: totalUsage(steps)
    }
  }
}

/**
 * The requester a streamed batch's calls ask: it announces each request (with the call's place in the batch,
 * the first call of that id), lets the outer requester answer, and announces the answer.
 */
const announcing = (
  step: number,
  calls: ReadonlyArray<Executor.ToolCall>,
  outer: Permission.Requester["Type"],
  sink: Sink
): Permission.Requester["Type"] => {
  const indexOf = new Map<string, number>()
  calls.forEach((call, index) => {
    if (!indexOf.has(call.id)) indexOf.set(call.id, index)
  })
  return {
    request: (request) => {
      const index = indexOf.get(request.callId) ?? -1
      // The executor's own events reach the sink through the forwarding fiber, this one directly: yielding first
      // lets the forwarder pass on what the executor emitted before this request (another call's Finished), so
      // the stream shows them first in the usual case. Per call the order is fixed: asked, answered, Started.
      return Effect.zipRight(
        Effect.zipRight(Effect.yieldNow(), sink.offer({ _tag: "PermissionRequested", step, index, request })),
        Effect.tap(
          outer.request(request),
          (decision) => sink.offer({ _tag: "PermissionAnswered", step, index, request, decision })
        )
      )
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// entry points
// ---------------------------------------------------------------------------------------------------------------

/** The run's options that are data, as its journal keeps them; the prompt as the transcript it starts. */
const runOptions = (config: Config, prompt: ReadonlyArray<Message>): Durable.RunOptions => {
  const { executor } = config
  return {
    kind: "agent",
    prompt,
    maxSteps: config.maxSteps,
    ...(config.modelTimeout === undefined ? {} : { modelTimeout: Duration.format(config.modelTimeout) }),
    ...(executor.maxParallel === undefined ? {} : { maxParallel: executor.maxParallel }),
    ...(executor.sequential === undefined ? {} : { sequential: executor.sequential }),
    ...(executor.timeout === undefined ? {} : { timeout: Duration.format(Duration.decode(executor.timeout)) })
  }
}

/**
 * A run, journaled when it has an id and a `Journal` is provided (read with `Effect.serviceOption`: a run without
 * one needs nothing more, and is not journaled).
 */
const start = (config: Config, prompt: PromptInput, sink: Sink | undefined): Effect.Effect<Result, AgentError, any> =>
  Effect.suspend(() => {
    const runId = config.runId
    if (runId === undefined) return new Run(config, prompt, sink).loop
    return Effect.flatMap(
      Effect.serviceOption(Journal.Journal),
      Option.match({
        onNone: () => new Run(config, prompt, sink).loop,
        onSome: (journal) => journaled(journal, runId, new Run(config, prompt, sink))
      })
    )
  })

/**
 * A journaled run: begun or found in the journal and leased until it ends, rebuilt from what the journal has, and
 * gone on with, against the run's journal failure (a write that failed, the lease lost). Ended `completed`, or
 * `failed` when its model failed; a run stopped by its journal or interrupted stays `running`, to be resumed.
 */
const journaled = (journal: Journal.Journal.Service, runId: string, run: Run): Effect.Effect<Result, AgentError, any> =>
  Effect.scoped(Effect.gen(function*() {
    const durable = yield* Durable.open(journal, runId, run.config.toolkit, runOptions(run.config, run.transcript))
    run.durable = durable
    const state = yield* run.replay(durable, yield* durable.history)
    const result = yield* Durable.guarded(durable, run.from(state))
    yield* journal.end(runId, "completed")
    return result
  })).pipe(
    Effect.catchTag("JournalError", (cause) => Effect.fail(run.error(run.current, { reason: "JournalFailed", cause }))),
    Effect.tapError((error) =>
      error.reason === "JournalFailed" ? Effect.void : Effect.ignore(journal.end(runId, "failed"))
    )
  )

export const run = (options: Options<any, any, any>): Effect.Effect<Result, AgentError, any> =>
  start(configOf(options), options.prompt, undefined)

export const stream = (options: Options<any, any, any>): Stream.Stream<Event, AgentError, any> => {
  const config = configOf(options)
  return Stream.unwrapScoped(Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<Event, AgentError>(EVENT_BUFFER)
    const sink: Sink = {
      offer: (event) => Effect.asVoid(mailbox.offer(event)),
      offerAll: (events) => Effect.asVoid(mailbox.offerAll(events))
    }
    const loop = Effect.flatMap(
      start(config, options.prompt, sink),
      (result) => mailbox.offer({ _tag: "RunFinished", result })
    )
    yield* Effect.forkScoped(Mailbox.into(loop, mailbox))
    return Mailbox.toStream(mailbox)
  }))
}

// ---------------------------------------------------------------------------------------------------------------
// a journaled step, read back
// ---------------------------------------------------------------------------------------------------------------

/** What a journaled run keeps of a step: the model's response, and the fingerprints of the tools its calls name. */
const AgentStep = Schema.Struct({
  response: Schema.Struct({
    text: Schema.String,
    calls: Schema.Array(Durable.ToolCallJson),
    usage: Schema.optional(Schema.Unknown),
    message: Schema.Unknown,
    raw: Schema.optional(Schema.Unknown)
  }),
  tools: Durable.ToolsJson
})

const decodeAgentStep = (response: unknown) =>
  Either.map(Schema.decodeUnknownEither(AgentStep)(response), (step) => ({
    ...step,
    response: { ...step.response, usage: step.response.usage as Usage | undefined, raw: step.response.raw }
  }))
