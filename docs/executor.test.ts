/**
 * The examples of docs/executor.md, run. Each `// #region name` below is the code of the block marked
 * `<!-- example: name -->` in the page, imports aside; the first test checks that they are the same text, the
 * others run the examples and check the outcomes the page promises.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Either, Metric, MetricState, Option, Ref, Schema, Stream, Tracer } from "effect"
import { Executor, Permission, Recorder, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { withClock } from "../test/helpers.js"
import { checkExamples } from "./examples.js"

// #region quick-start
const Upper = Tool.make("upper", {
  description: "Uppercase a string",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.toUpperCase())
})

/** What goes back to the model for one call. */
const modelText = (outcome: Executor.Outcome): string =>
  Either.isRight(outcome) ? ToolResult.toText(outcome.right) : ToolError.toModelText(outcome.left)

const quickStart = Effect.gen(function*() {
  const outcomes = yield* Executor.run(Toolkit.make(Upper), [
    { id: "call_1", name: "upper", arguments: "{\"text\":\"hello\"}" },
    { id: "call_2", name: "upper", arguments: "{}" },
    { id: "call_3", name: "lower", arguments: { text: "HELLO" } }
  ])
  return outcomes.map(modelText)
})
// => [
//   "HELLO",
//   "Error: invalid arguments: text: missing required property, expected a string",
//   "Error: unknown tool \"lower\"; available tools: upper"
// ]
// #endregion

// #region typed-outcomes
// continues the example "quick-start"

class NoSuchCity extends Schema.TaggedError<NoSuchCity>()("NoSuchCity", { city: Schema.String }) {}

const Forecast = Tool.make("forecast", {
  description: "Tomorrow's forecast for a city",
  parameters: { city: Schema.String },
  success: Schema.Struct({ high: Schema.Number, low: Schema.Number }),
  failure: NoSuchCity,
  handler: ({ city }) =>
    city === "Paris" ? Effect.succeed({ high: 24, low: 15 }) : Effect.fail(new NoSuchCity({ city }))
})

const weatherKit = Toolkit.make(Upper, Forecast)
const isForecast = Executor.isOutcomeOf(weatherKit, "forecast")

const typedDemo = Effect.gen(function*() {
  const calls = [
    { id: "1", name: "forecast", arguments: { city: "Paris" } },
    { id: "2", name: "upper", arguments: { text: "done" } },
    { id: "3", name: "forecast", arguments: { city: "Atlantis" } }
  ]
  const outcomes = yield* Executor.run(weatherKit, calls)
  return outcomes.flatMap((outcome, i) => {
    if (!isForecast(calls[i], outcome)) return []
    // a result of `forecast`: `structured` is { high: number, low: number }
    if (Either.isRight(outcome)) return [`high ${outcome.right.structured.high}`]
    // its typed failure, as the handler failed with it
    return outcome.left._tag === "ToolFailure" ? [`no forecast for ${outcome.left.error.city}`] : []
  })
})
// => ["high 24", "no forecast for Atlantis"]
// #endregion

// #region events
// continues the example "quick-start"

const Download = Tool.make("download", {
  description: "Download a file",
  parameters: { url: Schema.String },
  handler: ({ url }) =>
    Effect.gen(function*() {
      yield* Tool.progress({ message: "connecting", progress: 0, total: 2 })
      yield* Tool.progress({ message: "halfway", progress: 1, total: 2 })
      return `saved ${url}`
    })
})

const describeEvent = (event: Executor.ToolEvent): string => {
  switch (event._tag) {
    case "Started":
      return `#${event.index} started`
    case "Progress":
      return `#${event.index} ${event.progress.message} (${event.progress.progress}/${event.progress.total})`
    case "Finished":
      return `#${event.index} finished: ${modelText(event.outcome)}`
  }
}

const eventsDemo = Executor.stream(Toolkit.make(Download), [
  { id: "d1", name: "download", arguments: { url: "https://example.com/a.txt" } },
  { id: "d2", name: "download", arguments: { url: 42 } }
]).pipe(
  Stream.map(describeEvent),
  Stream.runCollect
)
// => [
//   "#1 finished: Error: invalid arguments: url: expected a string, got 42",
//   "#0 started",
//   "#0 connecting (0/2)",
//   "#0 halfway (1/2)",
//   "#0 finished: saved https://example.com/a.txt"
// ]
// #endregion

// #region scheduling
/** Works for `ms` milliseconds and says when it ran. */
const busy = (ms: number) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    yield* Effect.sleep(ms)
    return { start, end: yield* Clock.currentTimeMillis }
  })

const EditFile = Tool.make("edit_file", {
  description: "Edit a file",
  parameters: { path: Schema.String, ms: Schema.Int },
  resource: ({ path }) => `file:${path}`,
  handler: ({ ms }) => busy(ms)
})

const Bash = Tool.make("bash", {
  description: "Run a command in the session's shell",
  parameters: { command: Schema.String, ms: Schema.Int },
  resource: "shell:session",
  handler: ({ ms }) => busy(ms)
})

const Fetch = Tool.make("fetch", {
  description: "Fetch a URL",
  parameters: { url: Schema.String, ms: Schema.Int },
  handler: ({ ms }) => busy(ms)
})

const schedulingDemo = Effect.gen(function*() {
  const t0 = yield* Clock.currentTimeMillis
  const outcomes = yield* Executor.run(Toolkit.make(EditFile, Bash, Fetch), [
    { id: "c0", name: "edit_file", arguments: { path: "a", ms: 30 } },
    { id: "c1", name: "bash", arguments: { command: "ls", ms: 20 } },
    { id: "c2", name: "edit_file", arguments: { path: "a", ms: 10 } },
    { id: "c3", name: "fetch", arguments: { url: "https://example.com", ms: 15 } },
    { id: "c4", name: "bash", arguments: { command: "pwd", ms: 10 } }
  ], { maxParallel: 2 })
  // the outcomes are typed by the toolkit's tools: `structured` is what `busy` returns, no cast
  return outcomes.map((outcome, i) => {
    const { end, start } = Either.getOrThrow(outcome).structured
    return `#${i} ran ${start - t0}-${end - t0} ms`
  })
})
// => ["#0 ran 0-30 ms", "#1 ran 0-20 ms", "#2 ran 35-45 ms", "#3 ran 20-35 ms", "#4 ran 30-40 ms"]
// #endregion

// #region sequential
// continues the example "quick-start"

const Migrate = Tool.make("migrate_db", {
  description: "Apply a database migration",
  parameters: { name: Schema.String },
  sequential: true,
  handler: ({ name }) => Effect.as(Effect.sleep("10 millis"), `applied ${name}`)
})

const sequentialDemo = Executor.stream(Toolkit.make(Upper, Migrate), [
  { id: "1", name: "upper", arguments: { text: "before" } },
  { id: "2", name: "migrate_db", arguments: { name: "0042_add_users" } },
  { id: "3", name: "upper", arguments: { text: "after" } }
]).pipe(
  Stream.filter((event) => event._tag !== "Progress"),
  Stream.map((event) => `${event._tag} #${event.index}`),
  Stream.runCollect
)
// => ["Started #0", "Finished #0", "Started #1", "Finished #1", "Started #2", "Finished #2"]
// #endregion

// #region plan
// continues the example "scheduling"

const planKit = Toolkit.make(EditFile, Bash, Fetch)
const batchCalls: ReadonlyArray<Executor.ToolCall> = [
  { id: "c0", name: "edit_file", arguments: { path: "a", ms: 30 } },
  { id: "c1", name: "bash", arguments: { command: "ls", ms: 20 } },
  { id: "c2", name: "edit_file", arguments: { path: "a", ms: 10 } },
  { id: "c3", name: "fetch", arguments: { url: 42, ms: 15 } },
  { id: "c4", name: "bash", arguments: { command: "pwd", ms: 10 } }
]

const batchPlan = Executor.plan(planKit, batchCalls)
const chains = batchPlan.calls.map(({ index, refused, waitsFor }) =>
  refused === undefined ? `#${index} after [${waitsFor.join(", ")}]` : `#${index} never runs: ${refused._tag}`
)
// => ["#0 after []", "#1 after []", "#2 after [0]", "#3 never runs: InvalidArguments", "#4 after [1]"]
// #endregion

// #region plan-harness
// continues the example "plan"

/** Dispatches every call at once, each in its own fiber, once the calls it waits for have settled. */
const dispatchInPlan = Effect.gen(function*() {
  const t0 = yield* Clock.currentTimeMillis
  const settled = yield* Effect.forEach(batchPlan.calls, () => Deferred.make<void>())
  return yield* Effect.forEach(batchPlan.calls, ({ call, index, refused, waitsFor }) =>
    Effect.gen(function*() {
      if (refused !== undefined) return `#${index} ${ToolError.toModelText(refused)}`
      yield* Effect.forEach(waitsFor, (before) => Deferred.await(settled[before]), { discard: true })
      const tool = Option.getOrThrow(Toolkit.lookup(planKit, call.name))
      const outcome = yield* Tool.execute(tool, call)
      const { end, start } = Either.getOrThrow(outcome).structured
      return `#${index} ran ${start - t0}-${end - t0} ms`
    }).pipe(Effect.ensuring(Deferred.succeed(settled[index], undefined))), { concurrency: "unbounded" })
})
// => [
//   "#0 ran 0-30 ms",
//   "#1 ran 0-20 ms",
//   "#2 ran 30-40 ms",
//   "#3 Error: invalid arguments: url: expected a string, got 42",
//   "#4 ran 20-30 ms"
// ]
// #endregion

// #region tail
/** A tool that holds something open while it runs (a child process, a file watcher, a socket). */
const makeTail = (log: Array<string>) =>
  Tool.make("tail", {
    description: "Follow a log file",
    parameters: { path: Schema.String },
    handler: ({ path }) =>
      Effect.scoped(Effect.gen(function*() {
        // acquire, and say how to release: the release runs however the call ends, interruption included
        yield* Effect.acquireRelease(
          Effect.sync(() => log.push(`open ${path}`)),
          () => Effect.sync(() => log.push(`close ${path}`))
        )
        yield* Tool.progress({ message: `following ${path}`, partial: "line 1\n" })
        return yield* Effect.never
      }))
  })
// #endregion

// #region stop-consuming
// continues the example "tail"

const stopConsuming = Effect.gen(function*() {
  const log: Array<string> = []
  const events = yield* Executor.stream(Toolkit.make(makeTail(log)), [
    { id: "t1", name: "tail", arguments: { path: "app.log" } }
  ]).pipe(
    // the user closed the panel as soon as output arrived
    Stream.takeUntil((event) => event._tag === "Progress"),
    Stream.map((event) => event._tag),
    Stream.runCollect
  )
  return { events, log }
})
// => { events: ["Started", "Progress"], log: ["open app.log", "close app.log"] }
// #endregion

// #region interrupt-run
// continues the example "tail"

const interruptRun = Effect.gen(function*() {
  const log: Array<string> = []
  const outcomes = yield* Executor.run(Toolkit.make(makeTail(log)), [
    { id: "t1", name: "tail", arguments: { path: "app.log" } }
  ]).pipe(Effect.timeoutOption("100 millis"))
  return { outcomes, log }
})
// => { outcomes: Option.none(), log: ["open app.log", "close app.log"] }
// #endregion

// #region cancel
// continues the examples "quick-start" and "tail"

const cancelOne = Effect.gen(function*() {
  const log: Array<string> = []
  const lines = yield* Effect.scoped(Effect.gen(function*() {
    const batch = yield* Executor.start(Toolkit.make(Upper, makeTail(log)), [
      { id: "t1", name: "tail", arguments: { path: "app.log" } },
      { id: "u1", name: "upper", arguments: { text: "still runs" } }
    ])
    return yield* batch.events.pipe(
      // stop following once the first output arrived; `cancel` returns after the call's finalizers ran
      Stream.tap((event) => event._tag === "Progress" ? batch.cancel("t1") : Effect.void),
      Stream.filter((event) => event._tag === "Finished"),
      Stream.map((event) => event._tag === "Finished" ? `${event.call.id}: ${modelText(event.outcome)}` : ""),
      Stream.runCollect
    )
  }))
  return { lines, log }
})
// => { lines: ["u1: STILL RUNS", "t1: Error: the call was cancelled before it finished"],
//      log: ["open app.log", "close app.log"] }  (the two lines may come in either order)
// #endregion

// #region partial
// continues the example "tail"

const partialOutput = Effect.gen(function*() {
  const log: Array<string> = []
  const batch = yield* Executor.start(Toolkit.make(makeTail(log)), [
    { id: "t1", name: "tail", arguments: { path: "app.log" } }
  ])
  yield* batch.events.pipe(
    Stream.tap((event) => event._tag === "Progress" ? batch.cancel("t1") : Effect.void),
    Stream.runForEach((event) =>
      Effect.sync(() => {
        if (event._tag !== "Finished" || Either.isRight(event.outcome)) return
        const error = event.outcome.left
        if (error._tag === "ToolInterrupted") log.push(`kept: ${JSON.stringify(error.partial)}`)
      })
    )
  )
  return log
}).pipe(Effect.scoped)
// => ["open app.log", "close app.log", "kept: \"line 1\\n\""]
// #endregion

// #region timeouts
// continues the example "quick-start"

const Hang = Tool.make("hang", {
  description: "Wait for something that never comes",
  handler: () => Effect.never
})

const Build = Tool.make("build", {
  description: "Build the project",
  timeout: "5 minutes", // a tool's own timeout wins over the batch's default
  handler: () => Effect.as(Effect.sleep("3 minutes"), "built")
})

const timeoutsDemo = Effect.map(
  Executor.run(Toolkit.make(Hang, Build), [
    { id: "h", name: "hang", arguments: {} },
    { id: "b", name: "build", arguments: {} }
  ], { timeout: "2 minutes" }),
  (outcomes) => outcomes.map(modelText)
)
// => ["Error: tool \"hang\" timed out after 2m", "built"]
// #endregion

// #region permission
// continues the example "quick-start"

const WriteFile = Tool.make("write_file", {
  description: "Write a file",
  parameters: { path: Schema.String, content: Schema.String },
  annotations: { destructive: true },
  permission: {
    action: "write",
    describe: ({ content, path }) => `write ${content.length} bytes to ${path}`,
    path: ({ path }) => path,
    preview: ({ content, path }) => Effect.succeed(`+++ ${path}\n+${content}`)
  },
  handler: ({ path }) => Effect.succeed(`wrote ${path}`)
})

/** Writes inside src/ only; annotations only ever make it stricter. */
const SrcOnly = Permission.layer((request) =>
  Effect.succeed(
    request.path?.startsWith("src/") !== true
      ? Permission.deny("only files under src/ may be written")
      : request.annotations.destructive === true && request.preview === undefined
      ? Permission.deny("a destructive write must show what it changes")
      : Permission.allow
  )
)

const permissionDemo = Executor.run(Toolkit.make(WriteFile), [
  { id: "w1", name: "write_file", arguments: { path: "src/a.ts", content: "export {}" } },
  { id: "w2", name: "write_file", arguments: { path: "/etc/passwd", content: "root::0:0" } }
]).pipe(
  Effect.map((outcomes) => outcomes.map(modelText)),
  Effect.provide(SrcOnly)
)
// => ["wrote src/a.ts", "Error: permission denied: write 9 bytes to /etc/passwd: only files under src/ may be written"]
// #endregion

// #region confined
// continues the example "quick-start"

const RunCommand = Tool.make("run_command", {
  description: "Run a command, in a container when one is named",
  parameters: { command: Schema.String, container: Schema.optional(Schema.String) },
  permission: { action: "execute", describe: ({ command }) => command },
  confined: ({ container }) => container === undefined ? undefined : `container:${container}`,
  handler: ({ command }) => Effect.succeed(`ran ${command}`)
})

/** Confined calls go through; the rest ask a person (here: the answer is always no). */
const asked: Array<string> = []
const ConfinedOrAsk = Permission.layer((request) =>
  Effect.sync(() => {
    if (request.confined !== undefined) return Permission.allow
    asked.push(request.description)
    return Permission.deny("nobody approved it")
  })
)

const confinedDemo = Executor.run(Toolkit.make(RunCommand), [
  { id: "c1", name: "run_command", arguments: { command: "make test", container: "ci-7" } },
  { id: "c2", name: "run_command", arguments: { command: "rm -rf build" } }
]).pipe(
  Effect.map((outcomes) => ({ outcomes: outcomes.map(modelText), asked })),
  Effect.provide(ConfinedOrAsk)
)
// => { outcomes: ["ran make test", "Error: permission denied: rm -rf build: nobody approved it"], asked: ["rm -rf build"] }
// #endregion

// #region recorder
const ProcessStarted = Schema.Struct({ pgid: Schema.Int, startedAt: Schema.Date })
const ProcessEnded = Schema.Struct({ pgid: Schema.Int, exitCode: Schema.Int })

const RunJob = Tool.make("run_job", {
  description: "Run a background job to completion",
  parameters: { job: Schema.String },
  handler: ({ job }) =>
    Effect.gen(function*() {
      const pgid = 4242 // a real tool spawns here, in a new process group
      // durable before we go on: a host recovering from a crash finds the group to kill
      yield* Recorder.write(Recorder.makeRecord("run_job/started", ProcessStarted, { pgid, startedAt: new Date(0) }))
      const result = ToolResult.text(`${job} finished`)
      // recorded once more, phase "end", when the call ends
      return ToolResult.withDetails(result, Recorder.makeRecord("run_job/ended", ProcessEnded, { pgid, exitCode: 0 }))
    })
})

const recorderDemo = Effect.gen(function*() {
  const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
  const layer = Recorder.layerMemory(entries)
  yield* Executor.run(Toolkit.make(RunJob), [{ id: "j1", name: "run_job", arguments: { job: "backup" } }]).pipe(
    Effect.provide(layer)
  )
  return (yield* Ref.get(entries)).map(Recorder.toJsonLine)
})
// => [
//   "{\"callId\":\"j1\",\"tool\":\"run_job\",\"phase\":\"during\",\"namespace\":\"run_job/started\",
//     \"data\":{\"pgid\":4242,\"startedAt\":\"1970-01-01T00:00:00.000Z\"}}",
//   "{\"callId\":\"j1\",\"tool\":\"run_job\",\"phase\":\"end\",\"namespace\":\"run_job/ended\",
//     \"data\":{\"pgid\":4242,\"exitCode\":0}}"
// ]
// #endregion

// #region on-start
// continues the example "quick-start"

const onStartDemo = Effect.gen(function*() {
  const dispatched: Array<string> = []
  const outcomes = yield* Executor.run(Toolkit.make(Upper), [
    { id: "ok", name: "upper", arguments: { text: "go" } },
    { id: "refused", name: "upper", arguments: { text: "stop" } }
  ], {
    onStart: (call) =>
      call.id === "refused"
        ? Effect.fail(new Error("the journal is read-only"))
        : Effect.sync(() => dispatched.push(call.id))
  })
  return { dispatched, outcomes: outcomes.map(modelText) }
})
// => { dispatched: ["ok"], outcomes: ["GO", "Error: the journal is read-only"] }
// #endregion

// #region observability
const WordCount = Tool.make("doc_word_count", {
  description: "Count the words of a text",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(text.split(/\s+/).filter((w) => w !== "").length)
})

const observabilityDemo = Effect.gen(function*() {
  // a tracer that keeps its spans; in production this is OpenTelemetry's (`@effect/opentelemetry`)
  const native = yield* Effect.tracer
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = native.span(...args)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  yield* Executor.run(Toolkit.make(WordCount), [
    { id: "w1", name: "doc_word_count", arguments: { text: "one two three" } },
    { id: "w2", name: "doc_word_count", arguments: { text: 3 } }
  ]).pipe(Effect.withTracer(tracer))

  const counts = (yield* Metric.snapshot).flatMap((pair) => {
    const tags = Object.fromEntries(pair.metricKey.tags.map((tag) => [tag.key, tag.value]))
    return pair.metricKey.name === "agent_tools_calls_total" && tags.tool === "doc_word_count"
        && MetricState.isCounterState(pair.metricState)
      ? [`${tags.outcome}: ${pair.metricState.count}`]
      : []
  })
  return {
    spans: spans.map((span) => Object.fromEntries(span.attributes)),
    counts: counts.sort()
  }
})
// => {
//   spans: [{ "tool.name": "doc_word_count", "tool.call_id": "w1", "tool.resource_keys": "",
//             "tool.outcome": "Success" }],
//   counts: ["InvalidArguments: 1", "Success: 1"]
// }
// #endregion

describe("docs/executor.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./executor.md", import.meta.url), new URL("./executor.test.ts", import.meta.url)))

  it.effect("quick start: outcomes come back in call order", () =>
    Effect.map(quickStart, (texts) =>
      expect(texts).toEqual([
        "HELLO",
        "Error: invalid arguments: text: missing required property, expected a string",
        "Error: unknown tool \"lower\"; available tools: upper"
      ])))

  it.effect("typed outcomes: a call's outcome narrowed to its tool", () =>
    Effect.map(typedDemo, (lines) => expect(lines).toEqual(["high 24", "no forecast for Atlantis"])))

  it.effect("events: a call that never ran finishes first, the other streams its progress", () =>
    Effect.map(eventsDemo, (lines) =>
      expect([...lines]).toEqual([
        "#1 finished: Error: invalid arguments: url: expected a string, got 42",
        "#0 started",
        "#0 connecting (0/2)",
        "#0 halfway (1/2)",
        "#0 finished: saved https://example.com/a.txt"
      ])))

  it.effect("scheduling: the timeline of the picture", () =>
    Effect.map(withClock(schedulingDemo, "45 millis"), (lines) =>
      expect(lines).toEqual([
        "#0 ran 0-30 ms",
        "#1 ran 0-20 ms",
        "#2 ran 35-45 ms",
        "#3 ran 20-35 ms",
        "#4 ran 30-40 ms"
      ])))

  it.effect("sequential: one call at a time, in order", () =>
    Effect.map(withClock(sequentialDemo, "10 millis"), (events) =>
      expect([...events]).toEqual([
        "Started #0",
        "Finished #0",
        "Started #1",
        "Finished #1",
        "Started #2",
        "Finished #2"
      ])))

  it("plan: the chains of the scheduling batch, and a call that never runs", () =>
    expect(chains).toEqual([
      "#0 after []",
      "#1 after []",
      "#2 after [0]",
      "#3 never runs: InvalidArguments",
      "#4 after [1]"
    ]))

  it.effect("plan: a harness dispatching in the plan keeps the chains, with no bound on parallelism", () =>
    Effect.map(withClock(dispatchInPlan, "40 millis"), (lines) =>
      expect(lines).toEqual([
        "#0 ran 0-30 ms",
        "#1 ran 0-20 ms",
        "#2 ran 30-40 ms",
        "#3 Error: invalid arguments: url: expected a string, got 42",
        "#4 ran 20-30 ms"
      ])))

  it.effect("stop consuming: the call is interrupted and released before the stream ends", () =>
    Effect.map(stopConsuming, ({ events, log }) => {
      expect([...events]).toEqual(["Started", "Progress"])
      expect(log).toEqual(["open app.log", "close app.log"])
    }))

  it.effect("interrupt run: the handler is released before run returns", () =>
    Effect.map(withClock(interruptRun, "100 millis"), ({ log, outcomes }) => {
      expect(outcomes._tag).toBe("None")
      expect(log).toEqual(["open app.log", "close app.log"])
    }))

  it.effect("cancel: one call stops, the rest carry on", () =>
    Effect.map(cancelOne, ({ lines, log }) => {
      expect([...lines].sort()).toEqual([
        "t1: Error: the call was cancelled before it finished",
        "u1: STILL RUNS"
      ])
      expect(log).toEqual(["open app.log", "close app.log"])
    }))

  it.effect("cancel: ToolInterrupted keeps the last partial output", () =>
    Effect.map(partialOutput, (log) =>
      expect(log).toEqual([
        "open app.log",
        "close app.log",
        "kept: \"line 1\\n\""
      ])))

  it.effect("timeouts: the batch default, and a tool's own", () =>
    Effect.map(
      withClock(timeoutsDemo, "3 minutes"),
      (texts) => expect(texts).toEqual(["Error: tool \"hang\" timed out after 2m", "built"])
    ))

  it.effect("confined: a policy lets confined calls through and asks about the rest", () =>
    Effect.map(confinedDemo, (demo) =>
      expect(demo).toEqual({
        outcomes: ["ran make test", "Error: permission denied: rm -rf build: nobody approved it"],
        asked: ["rm -rf build"]
      })))

  it.effect("permission: a policy on the path", () =>
    Effect.map(permissionDemo, (texts) =>
      expect(texts).toEqual([
        "wrote src/a.ts",
        "Error: permission denied: write 9 bytes to /etc/passwd: only files under src/ may be written"
      ])))

  it.effect("recorder: during the call, and its details at the end", () =>
    Effect.map(recorderDemo, (lines) =>
      expect(lines).toEqual([
        "{\"callId\":\"j1\",\"tool\":\"run_job\",\"phase\":\"during\",\"namespace\":\"run_job/started\","
        + "\"data\":{\"pgid\":4242,\"startedAt\":\"1970-01-01T00:00:00.000Z\"}}",
        "{\"callId\":\"j1\",\"tool\":\"run_job\",\"phase\":\"end\",\"namespace\":\"run_job/ended\","
        + "\"data\":{\"pgid\":4242,\"exitCode\":0}}"
      ])))

  it.effect("onStart: runs before the tool, and its failure is the call's", () =>
    Effect.map(
      onStartDemo,
      (result) => expect(result).toEqual({ dispatched: ["ok"], outcomes: ["GO", "Error: the journal is read-only"] })
    ))

  it.effect("observability: one span per call that ran, a count per tool and outcome", () =>
    Effect.map(observabilityDemo, (result) =>
      expect(result).toEqual({
        spans: [{
          "tool.name": "doc_word_count",
          "tool.call_id": "w1",
          "tool.resource_keys": "",
          "tool.outcome": "Success"
        }],
        counts: ["InvalidArguments: 1", "Success: 1"]
      })))
})
