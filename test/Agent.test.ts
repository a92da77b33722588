/**
 * The agent loop with plain-function models: stop conditions, failures, timeouts, interruption, the event stream.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Chunk,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  Fiber,
  Option,
  Schema,
  Stream,
  TestClock
} from "effect"
import type { Executor } from "../src/index.js"
import { Agent, Permission, Tool, ToolError, Toolkit, ToolResult } from "../src/index.js"

/** What happened, in order. */
const makeLog = () => {
  const lines: Array<string> = []
  return { lines, push: (line: string) => Effect.sync(() => void lines.push(line)) }
}

type Log = ReturnType<typeof makeLog>

/** Sleeps `ms` on Effect's clock under the given resource key, logging what it does; answers its tag. */
const sleeper = (log: Log) =>
  Tool.make("sleep", {
    description: "Sleep",
    parameters: { tag: Schema.String, ms: Schema.Int, key: Schema.optional(Schema.String) },
    resource: ({ key }) => key,
    handler: ({ ms, tag }) =>
      Effect.gen(function*() {
        yield* log.push(`start ${tag}`)
        yield* Effect.sleep(ms)
        yield* log.push(`end ${tag}`)
        return tag
      }).pipe(
        Effect.onInterrupt(() => log.push(`interrupted ${tag}`)),
        Effect.ensuring(log.push(`finalized ${tag}`))
      )
  })

const Done = Tool.make("done", {
  description: "Say the task is done",
  parameters: { summary: Schema.String },
  handler: ({ summary }) => Effect.succeed(ToolResult.withTerminate(ToolResult.text(summary)))
})

const Write = Tool.make("write", {
  description: "Write a file",
  parameters: { path: Schema.String },
  permission: { action: "write", describe: ({ path }) => `write ${path}`, path: ({ path }) => path },
  handler: ({ path }) => Effect.succeed(`wrote ${path}`)
})

const call = (id: string, name: string, args: Record<string, unknown>): Executor.ToolCall => ({
  id,
  name,
  arguments: JSON.stringify(args)
})

/** A model answering the scripted turns in order, keeping the transcript of every request. */
const scripted = (turns: ReadonlyArray<Agent.Turn>) => {
  const seen: Array<ReadonlyArray<Agent.Message>> = []
  const model: Agent.Model = (transcript) =>
    Effect.suspend(() => {
      seen.push(transcript)
      const turn = turns[seen.length - 1]
      return turn === undefined ? Effect.fail(new Error("script exhausted")) : Effect.succeed(turn)
    })
  return { model, seen }
}

/** A model that calls `sleep` for ever, one new call per step. */
const callsForEver = (): Agent.Model => (_, { step }) =>
  Effect.succeed({ calls: [call(`c${step}`, "sleep", { tag: `s${step}`, ms: 0 })] })

const toolResults = (message: Agent.Message | undefined) =>
  message?.role === "tool" ? message.content.map(({ id, isFailure, result }) => ({ id, isFailure, result })) : []

const eventTag = (event: Agent.Event): string => {
  switch (event._tag) {
    case "Started":
    case "Progress":
    case "Finished":
    case "PermissionRequested":
    case "PermissionAnswered":
      return `${event._tag} ${event.step}.${event.index}`
    case "StepFinished":
      return `StepFinished ${event.step.index}`
    case "RunFinished":
      return `RunFinished ${event.result.reason}`
    case "TextDelta":
      return `TextDelta ${event.step} ${event.delta}`
    default:
      return `${event._tag} ${event.step}`
  }
}

describe("Agent", () => {
  describe("the loop", () => {
    it.effect("asks, runs the calls, appends the outcomes and asks again until an answer without calls", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const { model, seen } = scripted([
          { text: "Let me sleep.", calls: [call("a", "sleep", { tag: "a", ms: 0 })], usage: { inputTokens: 3 } },
          { text: "Slept.", usage: { inputTokens: 5, outputTokens: 2 } }
        ])
        const result = yield* Agent.run({ toolkit: Toolkit.make(sleeper(log)), prompt: "sleep", model, runId: "r1" })
        expect(result.reason).toBe("NoCalls")
        expect(result.text).toBe("Slept.")
        expect(result.runId).toBe("r1")
        expect(result.usage).toEqual({ inputTokens: 8, outputTokens: 2 })
        expect(result.steps.map((step) => [step.index, step.response.calls.length, step.outcomes.length])).toEqual([
          [0, 1, 1],
          [1, 0, 0]
        ])
        expect(result.transcript).toEqual([
          { role: "user", content: "sleep" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Let me sleep." },
              { type: "tool-call", id: "a", name: "sleep", params: { tag: "a", ms: 0 } }
            ]
          },
          {
            role: "tool",
            content: [{
              type: "tool-result",
              id: "a",
              name: "sleep",
              isFailure: false,
              result: "a",
              providerExecuted: false
            }]
          },
          { role: "assistant", content: [{ type: "text", text: "Slept." }] }
        ])
        // the second request saw the outcome of the first step's call
        expect(seen.map((transcript) => transcript.length)).toEqual([1, 3])
        expect(log.lines).toEqual(["start a", "end a", "finalized a"])
      }))

    it.effect("starts from messages or a Prompt-like value, and a follow-up run from a result's transcript", () =>
      Effect.gen(function*() {
        const { model, seen } = scripted([{ text: "one" }, { text: "two" }])
        const kit = Toolkit.make(Done)
        const first = yield* Agent.run({
          toolkit: kit,
          prompt: { content: [{ role: "system", content: "terse" }, { role: "user", content: "hi" }] },
          model
        })
        yield* Agent.run({ toolkit: kit, prompt: [...first.transcript, { role: "user", content: "again" }], model })
        expect(seen[1].map((message) => message.role)).toEqual(["system", "user", "assistant", "user"])
      }))

    it.effect("maxSteps: the run stops after that many model requests; the last step's calls have run", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const result = yield* Agent.run({
          toolkit: Toolkit.make(sleeper(log)),
          prompt: "go",
          model: callsForEver(),
          maxSteps: 3
        })
        expect(result.reason).toBe("MaxSteps")
        expect(result.steps).toHaveLength(3)
        expect(log.lines.filter((line) => line.startsWith("end"))).toEqual(["end s0", "end s1", "end s2"])
        expect(toolResults(result.transcript.at(-1))).toEqual([{ id: "c2", isFailure: false, result: "s2" }])
      }))

    it.effect("maxSteps defaults to DEFAULT_MAX_STEPS, so a model that never stops calling is stopped", () =>
      Effect.gen(function*() {
        const result = yield* Agent.run({
          toolkit: Toolkit.make(sleeper(makeLog())),
          prompt: "go",
          model: callsForEver()
        })
        expect(result.reason).toBe("MaxSteps")
        expect(result.steps).toHaveLength(Agent.DEFAULT_MAX_STEPS)
      }))

    it.effect("stopWhen is checked after each step with calls, over the steps so far", () =>
      Effect.gen(function*() {
        const checked: Array<number> = []
        const result = yield* Agent.run({
          toolkit: Toolkit.make(sleeper(makeLog())),
          prompt: "go",
          model: callsForEver(),
          stopWhen: (steps) => {
            checked.push(steps.length)
            const last = steps[steps.length - 1].outcomes[0]
            return Either.isRight(last) && ToolResult.toText(last.right) === "s1"
          }
        })
        expect(result.reason).toBe("StopWhen")
        expect(checked).toEqual([1, 2])
        expect(result.steps).toHaveLength(2)
      }))

    it.effect("a batch whose every outcome asks to terminate ends the run as Terminated; some is not enough", () =>
      Effect.gen(function*() {
        const kit = Toolkit.make(Done, sleeper(makeLog()))
        const { model } = scripted([
          { calls: [call("1", "done", { summary: "half" }), call("2", "sleep", { tag: "x", ms: 0 })] },
          { calls: [call("3", "done", { summary: "all" }), call("4", "done", { summary: "of it" })] },
          { text: "never asked" }
        ])
        const result = yield* Agent.run({ toolkit: kit, prompt: "go", model })
        expect(result.reason).toBe("Terminated")
        expect(result.steps).toHaveLength(2)
        expect(toolResults(result.transcript.at(-1)).map((r) => r.result)).toEqual(["all", "of it"])
      }))

    it.effect("invalid arguments and unknown tools are outcomes the model reads; the loop goes on", () =>
      Effect.gen(function*() {
        const { model, seen } = scripted([
          { calls: [call("1", "sleep", { tag: "a", ms: "soon" }), call("2", "nap", {})] },
          { calls: [call("3", "sleep", { tag: "a", ms: 0 })] },
          { text: "ok" }
        ])
        const result = yield* Agent.run({ toolkit: Toolkit.make(sleeper(makeLog())), prompt: "go", model })
        expect(result.reason).toBe("NoCalls")
        expect(toolResults(seen[1].at(-1))).toEqual([
          { id: "1", isFailure: true, result: "Error: invalid arguments: ms: expected an integer, got \"soon\"" },
          { id: "2", isFailure: true, result: "Error: unknown tool \"nap\"; available tools: sleep" }
        ])
        expect(toolResults(seen[2].at(-1))).toEqual([{ id: "3", isFailure: false, result: "a" }])
      }))

    it.effect("the executor's options apply to every batch: timeout, onStart", () =>
      Effect.gen(function*() {
        const started: Array<string> = []
        const { model } = scripted([{ calls: [call("1", "sleep", { tag: "a", ms: 60_000 })] }, { text: "ok" }])
        const fiber = yield* Effect.fork(Agent.run({
          toolkit: Toolkit.make(sleeper(makeLog())),
          prompt: "go",
          model,
          timeout: "1 second",
          onStart: (c) => Effect.sync(() => void started.push(c.id))
        }))
        yield* TestClock.adjust("2 seconds")
        const result = yield* Fiber.join(fiber)
        expect(started).toEqual(["1"])
        const [outcome] = result.steps[0].outcomes
        expect(Either.isLeft(outcome) && ToolError.toModelText(outcome.left)).toBe(
          "Error: tool \"sleep\" timed out after 1s"
        )
      }))
  })

  describe("a model that fails", () => {
    it.effect("fails the run with AgentError ModelFailed, carrying the steps so far and the model's error", () =>
      Effect.gen(function*() {
        const { model } = scripted([{ calls: [call("1", "sleep", { tag: "a", ms: 0 })] }])
        const error = yield* Effect.flip(
          Agent.run({ toolkit: Toolkit.make(sleeper(makeLog())), prompt: "go", model, runId: "r7" })
        )
        expect(Agent.isAgentError(error)).toBe(true)
        expect(error._tag).toBe("AgentError")
        expect(error.reason).toBe("ModelFailed")
        expect(error.step).toBe(1)
        expect(error.runId).toBe("r7")
        expect(error.steps.map((step) => step.response.calls.map((c) => c.id))).toEqual([["1"]])
        expect(error.cause).toEqual(new Error("script exhausted"))
        expect(error.message).toBe("the model failed at step 1: script exhausted")
      }))

    it.effect("fails the stream the same way, after the events of the steps that finished", () =>
      Effect.gen(function*() {
        const { model } = scripted([{ calls: [call("1", "sleep", { tag: "a", ms: 0 })] }])
        const events: Array<string> = []
        const exit = yield* Agent.stream({ toolkit: Toolkit.make(sleeper(makeLog())), prompt: "go", model }).pipe(
          Stream.runForEach((event) => Effect.sync(() => void events.push(eventTag(event)))),
          Effect.exit
        )
        expect(events).toEqual([
          "StepStarted 0",
          "ModelResponded 0",
          "Started 0.0",
          "Finished 0.0",
          "StepFinished 0",
          "StepStarted 1"
        ])
        const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        expect(failure?.reason).toBe("ModelFailed")
        expect(failure?.steps).toHaveLength(1)
      }))

    it.effect("a model that does not answer within modelTimeout fails the run with ModelTimeout, and is interrupted", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const model: Agent.Model = () => Effect.never.pipe(Effect.onInterrupt(() => log.push("model interrupted")))
        const fiber = yield* Effect.fork(Agent.run({
          toolkit: Toolkit.make(Done),
          prompt: "go",
          model,
          modelTimeout: "30 seconds"
        }))
        yield* TestClock.adjust("29 seconds")
        expect(fiber.unsafePoll()).toBeNull()
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(Fiber.join(fiber))
        expect(error.reason).toBe("ModelTimeout")
        expect(error.timeout).toEqual(Duration.seconds(30))
        expect(error.message).toBe("the model did not answer step 0 within 30s")
        expect(log.lines).toEqual(["model interrupted"])
      }))

    it.effect("modelTimeout is per request: a run of slow steps each within it succeeds", () =>
      Effect.gen(function*() {
        const model: Agent.Model = (_, { step }) =>
          Effect.as(Effect.sleep("20 seconds"), step < 2 ? { calls: [call(`${step}`, "done", { summary: "x" })] } : {})
        const fiber = yield* Effect.fork(Agent.run({
          toolkit: Toolkit.make(
            sleeper(makeLog()),
            Tool.make("done", {
              description: "not terminating",
              parameters: { summary: Schema.String },
              handler: ({ summary }) => Effect.succeed(summary)
            })
          ),
          prompt: "go",
          model,
          modelTimeout: "30 seconds"
        }))
        yield* TestClock.adjust("60 seconds")
        const result = yield* Fiber.join(fiber)
        expect(result.steps).toHaveLength(3)
      }))
  })

  describe("interruption", () => {
    it.effect("during the model's stream: the model is interrupted and the stream ends after its finalizer ran", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const streaming = yield* Deferred.make<void>()
        const model: Agent.Model = (_, { textDelta }) =>
          Effect.gen(function*() {
            yield* textDelta("Hel")
            yield* Deferred.succeed(streaming, undefined)
            return yield* Effect.never
          }).pipe(Effect.ensuring(log.push("model finalized")))
        const events: Array<string> = []
        const fiber = yield* Agent.stream({ toolkit: Toolkit.make(Done), prompt: "go", model }).pipe(
          Stream.runForEach((event) => Effect.sync(() => void events.push(eventTag(event)))),
          Effect.fork
        )
        yield* Deferred.await(streaming)
        yield* Effect.yieldNow()
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(log.lines).toEqual(["model finalized"])
        expect(events).toEqual(["StepStarted 0", "TextDelta 0 Hel"])
      }))

    it.effect("during a call: running calls are interrupted, their finalizers have run, one Finished per call", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const { model } = scripted([{
          calls: [call("1", "sleep", { tag: "quick", ms: 10 }), call("2", "sleep", { tag: "slow", ms: 100_000 })]
        }])
        const events: Array<string> = []
        const fiber = yield* Agent.stream({ toolkit: Toolkit.make(sleeper(log)), prompt: "go", model }).pipe(
          Stream.runForEach((event) => Effect.sync(() => void events.push(eventTag(event)))),
          Effect.fork
        )
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(log.lines).toEqual([
          "start quick",
          "start slow",
          "end quick",
          "finalized quick",
          "interrupted slow",
          "finalized slow"
        ])
        expect(events).toEqual(["StepStarted 0", "ModelResponded 0", "Started 0.0", "Started 0.1", "Finished 0.0"])
      }))

    it.effect("a consumer that stops early (Stream.take) stops the run the same way", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const { model } = scripted([{ calls: [call("1", "sleep", { tag: "slow", ms: 100_000 })] }])
        const taken = yield* Agent.stream({ toolkit: Toolkit.make(sleeper(log)), prompt: "go", model }).pipe(
          Stream.takeUntil((event) => event._tag === "Started"),
          Stream.runCollect
        )
        expect(Chunk.toReadonlyArray(taken).map(eventTag)).toEqual(["StepStarted 0", "ModelResponded 0", "Started 0.0"])
        expect(log.lines).toEqual(["start slow", "interrupted slow", "finalized slow"])
      }))

    it.effect("Agent.run: interrupting it interrupts the calls, whose finalizers have run when it returns", () =>
      Effect.gen(function*() {
        const log = makeLog()
        const { model } = scripted([{ calls: [call("1", "sleep", { tag: "slow", ms: 100_000 })] }])
        const fiber = yield* Effect.fork(Agent.run({ toolkit: Toolkit.make(sleeper(log)), prompt: "go", model }))
        yield* TestClock.adjust("1 second")
        yield* Fiber.interrupt(fiber)
        expect(log.lines).toEqual(["start slow", "interrupted slow", "finalized slow"])
      }))
  })

  describe("the event stream", () => {
    it.effect("gives every step's events in order and ends with RunFinished, whose result is what run gives", () =>
      Effect.gen(function*() {
        const turns: ReadonlyArray<Agent.Turn> = [
          {
            calls: [
              call("1", "sleep", { tag: "a", ms: 5, key: "k" }),
              call("2", "sleep", { tag: "b", ms: 1, key: "k" })
            ]
          },
          { text: "done", usage: { totalTokens: 4 } }
        ]
        const streamModel: Agent.Model = (transcript, { step, streaming, textDelta }) =>
          Effect.gen(function*() {
            expect(streaming).toBe(true)
            if (step === 1) {
              yield* textDelta("do")
              yield* textDelta("ne")
            }
            return turns[step]
          }).pipe(Effect.tap(() => expect(transcript.length).toBe(step === 0 ? 1 : 3)))
        const fiber = yield* Agent.stream({
          toolkit: Toolkit.make(sleeper(makeLog())),
          prompt: "go",
          model: streamModel
        })
          .pipe(Stream.runCollect, Effect.fork)
        yield* TestClock.adjust("1 second")
        const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
        expect(events.map(eventTag)).toEqual([
          "StepStarted 0",
          "ModelResponded 0",
          "Started 0.0",
          "Finished 0.0",
          "Started 0.1",
          "Finished 0.1",
          "StepFinished 0",
          "StepStarted 1",
          "TextDelta 1 do",
          "TextDelta 1 ne",
          "ModelResponded 1",
          "StepFinished 1",
          "RunFinished NoCalls"
        ])
        const finished = events.at(-1)
        if (finished?._tag !== "RunFinished") throw new Error("no RunFinished")

        const { model } = scripted(turns)
        const runFiber = yield* Effect.fork(
          Agent.run({ toolkit: Toolkit.make(sleeper(makeLog())), prompt: "go", model })
        )
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(runFiber)
        expect(result.transcript).toEqual(finished.result.transcript)
        expect(result.usage).toEqual({ totalTokens: 4 })
        expect(finished.result.usage).toEqual({ totalTokens: 4 })
      }))

    it.live("announces a permission request before it is answered, and the answer, before the call's Started", () =>
      Effect.gen(function*() {
        const answers = new Map([
          ["1", yield* Deferred.make<Permission.Decision>()],
          ["2", yield* Deferred.make<Permission.Decision>()]
        ])
        // the requester waits until the consumer has seen the request's event
        const requester = Permission.layer((request) => Deferred.await(answers.get(request.callId)!))
        const { model } = scripted([
          { calls: [call("1", "write", { path: "a.txt" }), call("2", "write", { path: "b.txt" })] },
          { text: "ok" }
        ])
        const events: Array<string> = []
        const consumer = yield* Agent.stream({ toolkit: Toolkit.make(Write), prompt: "go", model, maxParallel: 1 })
          .pipe(
            Stream.runForEach((event) =>
              Effect.gen(function*() {
                events.push(eventTag(event))
                if (event._tag === "PermissionRequested") {
                  const id = String(event.index + 1)
                  expect(event.request).toMatchObject({ callId: id, tool: "write", action: "write" })
                  yield* Deferred.succeed(answers.get(id)!, Permission.allow)
                }
              })
            ),
            Effect.provide(requester),
            Effect.fork
          )
        yield* Fiber.join(consumer).pipe(Effect.timeout("5 seconds"))
        // per call: asked, answered, started, finished (other calls' events may come between)
        for (const index of [0, 1]) {
          expect(events.filter((event) => event.endsWith(` 0.${index}`))).toEqual([
            `PermissionRequested 0.${index}`,
            `PermissionAnswered 0.${index}`,
            `Started 0.${index}`,
            `Finished 0.${index}`
          ])
        }
        expect(events.slice(0, 3)).toEqual(["StepStarted 0", "ModelResponded 0", "PermissionRequested 0.0"])
        expect(events.at(-1)).toBe("RunFinished NoCalls")
      }))

    it.effect("with no requester nothing is asked and no permission event is given, as without the loop", () =>
      Effect.gen(function*() {
        let previews = 0
        const Previewed = Tool.make("write", {
          description: "Write a file",
          parameters: { path: Schema.String },
          permission: { action: "write", preview: () => Effect.sync(() => void previews++).pipe(Effect.as("diff")) },
          handler: ({ path }) => Effect.succeed(`wrote ${path}`)
        })
        const { model } = scripted([{ calls: [call("1", "write", { path: "a.txt" })] }, { text: "ok" }])
        const events = yield* Agent.stream({ toolkit: Toolkit.make(Previewed), prompt: "go", model }).pipe(
          Stream.runCollect
        )
        expect(Chunk.toReadonlyArray(events).map((event) => event._tag)).not.toContain("PermissionRequested")
        expect(previews).toBe(0)
      }))

    it.effect("a denied call is an outcome the model reads", () =>
      Effect.gen(function*() {
        const { model, seen } = scripted([{ calls: [call("1", "write", { path: "a.txt" })] }, { text: "ok" }])
        const events = yield* Agent.stream({ toolkit: Toolkit.make(Write), prompt: "go", model }).pipe(
          Stream.runCollect,
          Effect.provide(Permission.layer(() => Effect.succeed(Permission.deny("read-only session"))))
        )
        expect(Chunk.toReadonlyArray(events).map(eventTag)).toContain("PermissionAnswered 0.0")
        expect(Chunk.toReadonlyArray(events).map(eventTag)).not.toContain("Started 0.0")
        expect(toolResults(seen[1].at(-1))).toEqual([
          { id: "1", isFailure: true, result: "Error: permission denied: write a.txt: read-only session" }
        ])
      }))

    it.scopedLive("a consumer that falls behind holds the run: events are never buffered without bound", () =>
      Effect.gen(function*() {
        let sent = 0
        const model: Agent.Model = (_, { textDelta }) =>
          Effect.as(
            Effect.repeatN(
              Effect.suspend(() => Effect.zipRight(textDelta("x"), Effect.sync(() => void sent++))),
              9_999
            ),
            { text: "done" }
          )
        const pull = yield* Stream.toPull(Agent.stream({ toolkit: Toolkit.make(Done), prompt: "go", model }))
        yield* pull
        yield* Effect.sleep("200 millis")
        // the model waits for room: it has sent what the buffer holds (and the chunk taken), not all 10,000
        expect(sent).toBeLessThan(3 * 1024)
        let received = 0
        while (received < 10_000) {
          const chunk = yield* pull
          received += Chunk.toReadonlyArray(chunk).filter((event) => event._tag === "TextDelta").length
          if (Chunk.toReadonlyArray(chunk).some((event) => event._tag === "RunFinished")) break
        }
        expect(sent).toBe(10_000)
      }))

    it.effect("under Agent.run the model is told nobody streams, and its text deltas go nowhere", () =>
      Effect.gen(function*() {
        const flags: Array<boolean> = []
        const result = yield* Agent.run({
          toolkit: Toolkit.make(Done),
          prompt: "go",
          model: (_, { streaming, textDelta }) => {
            flags.push(streaming)
            return Effect.as(textDelta("ignored"), { text: "fine" })
          }
        })
        expect(flags).toEqual([false])
        expect(result.text).toBe("fine")
      }))
  })
})
