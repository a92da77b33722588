/**
 * The agent loop with its default model, the @effect/ai `LanguageModel`, for real: `@effect/ai-openai` and
 * `@effect/ai-anthropic` talking HTTP to a scripted server on 127.0.0.1 (test/providers/scriptedServer.ts),
 * streamed and not.
 */
import { LanguageModel, Prompt } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Either, Exit, Fiber, Layer, Ref, Schedule, Schema, Stream } from "effect"
import { Agent, Executor, Tool, Toolkit, ToolResult } from "../src/index.js"
import { promptMessage } from "../src/internal/agentLanguageModel.js"
import { toolMessages } from "../src/internal/providers/promptParts.js"
import * as ScriptedServer from "./providers/scriptedServer.js"

type Dialect = ScriptedServer.Dialect

/** What the model was sent back for each call, from a request body of either dialect. */
const toolOutputs = (dialect: Dialect, body: any): Array<{ readonly id: string; readonly output: unknown }> =>
  dialect === "openai"
    ? body.input.filter((item: any) => item.type === "function_call_output").map((item: any) => ({
      id: item.call_id,
      output: JSON.parse(item.output)
    }))
    : body.messages.flatMap((message: any) =>
      Array.isArray(message.content)
        ? message.content.filter((block: any) => block.type === "tool_result").map((block: any) => ({
          id: block.tool_use_id,
          output: JSON.parse(block.content)
        }))
        : []
    )

const callId = (dialect: Dialect, turn: number, index: number) =>
  dialect === "openai" ? `call_${turn}_${index}` : `toolu_${turn}_${index}`

/** Files in memory; `append` holds a file's key while it writes, taking `delay` milliseconds of real time. */
const files = () => {
  const contents = new Map<string, string>()
  const log: Array<string> = []
  const Append = Tool.make("append", {
    description: "Append text to a file",
    parameters: { path: Schema.String, text: Schema.String, delay: Schema.optional(Schema.Int) },
    resource: ({ path }) => `file:${path}`,
    handler: ({ delay = 0, path, text }) =>
      Effect.gen(function*() {
        log.push(`start ${path} ${text}`)
        yield* Effect.sleep(delay)
        contents.set(path, (contents.get(path) ?? "") + text)
        log.push(`end ${path} ${text}`)
        return `appended ${text.length} characters to ${path}`
      })
  })
  return { contents, log, kit: Toolkit.make(Append) }
}

const invalidText = "Error: invalid arguments: text: expected a string, got 42"

describe("Agent with the @effect/ai LanguageModel", () => {
  for (const dialect of ["openai", "anthropic"] as const) {
    for (const stream of [false, true]) {
      const name = `${dialect}${stream ? ", streamed" : ""}`

      it.scopedLive(`${name}: three steps, same-file calls in the model's order, an invalid call the model corrects`, () =>
        Effect.gen(function*() {
          const { contents, kit, log } = files()
          const server = yield* ScriptedServer.make({
            dialect,
            turns: [
              {
                text: "Writing.",
                calls: [
                  { name: "append", arguments: { path: "a.txt", text: "1", delay: 50 } },
                  { name: "append", arguments: { path: "a.txt", text: "2" } },
                  { name: "append", arguments: { path: "b.txt", text: "x" } },
                  { name: "append", arguments: { path: "a.txt", text: 42 } }
                ]
              },
              (request) => {
                const outputs = toolOutputs(dialect, request.body)
                const failed = outputs.find((output) => output.id === callId(dialect, 0, 3))
                return failed?.output === invalidText
                  ? { calls: [{ name: "append", arguments: { path: "a.txt", text: "3" } }] }
                  : { text: "I did not see the error" }
              },
              { text: "All written.", chunk: 3 }
            ]
          })
          const result = yield* Agent.run({
            toolkit: kit,
            prompt: "Write 1, 2, 3 to a.txt and x to b.txt",
            ...(stream ? { model: Agent.languageModel({ stream: true }) } : {})
          }).pipe(Effect.provide(server.layer))

          expect(result.reason).toBe("NoCalls")
          expect(result.text).toBe("All written.")
          expect(result.steps.map((step) => step.response.calls.length)).toEqual([4, 1, 0])
          expect(result.steps[0].response.text).toBe("Writing.")
          // calls on a.txt ran one after another in the model's order; b.txt ran alongside the first
          expect(log.filter((line) => line.includes("a.txt"))).toEqual([
            "start a.txt 1",
            "end a.txt 1",
            "start a.txt 2",
            "end a.txt 2",
            "start a.txt 3",
            "end a.txt 3"
          ])
          expect(log.indexOf("end b.txt x")).toBeLessThan(log.indexOf("end a.txt 1"))
          expect(Object.fromEntries(contents)).toEqual({ "a.txt": "123", "b.txt": "x" })

          const requests = yield* server.requests
          expect(requests).toHaveLength(3)
          expect(requests.map((request) => request.body.stream === true)).toEqual([stream, stream, stream])
          // the second request carries every outcome of the first step, the invalid call's as its Error line
          expect(toolOutputs(dialect, requests[1].body)).toEqual([
            { id: callId(dialect, 0, 0), output: "appended 1 characters to a.txt" },
            { id: callId(dialect, 0, 1), output: "appended 1 characters to a.txt" },
            { id: callId(dialect, 0, 2), output: "appended 1 characters to b.txt" },
            { id: callId(dialect, 0, 3), output: invalidText }
          ])
          // and the tools were offered with our definitions
          expect(requests[0].body.tools.map((tool: any) => tool.name)).toEqual(["append"])
          expect(result.usage.inputTokens).toBe(30)
          // the transcript is a Prompt as @effect/ai takes it
          expect(Prompt.make(result.transcript).content.map((message) => message.role)).toEqual([
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
          ])
        }))

      it.scopedLive(`${name}: an interrupt mid-step interrupts the calls; finalizers ran, one Finished per call`, () =>
        Effect.gen(function*() {
          const finalized = yield* Ref.make<ReadonlyArray<string>>([])
          const slowStarted = yield* Deferred.make<void>()
          const Slow = Tool.make("slow", {
            description: "Never finishes",
            handler: () =>
              Effect.zipRight(Deferred.succeed(slowStarted, undefined), Effect.never).pipe(
                Effect.ensuring(Ref.update(finalized, (names) => [...names, "slow"]))
              )
          })
          const Quick = Tool.make("quick", { description: "Finishes at once", handler: () => Effect.succeed("ok") })
          const server = yield* ScriptedServer.make({
            dialect,
            turns: [{ calls: [{ name: "quick", arguments: {} }, { name: "slow", arguments: {} }] }]
          })
          const events: Array<Agent.Event> = []
          const fiber = yield* Agent.stream({
            toolkit: Toolkit.make(Quick, Slow),
            prompt: "go",
            model: Agent.languageModel({ stream })
          }).pipe(
            Stream.runForEach((event) => Effect.sync(() => void events.push(event))),
            Effect.provide(server.layer),
            Effect.fork
          )
          yield* Deferred.await(slowStarted)
          const exit = yield* Fiber.interrupt(fiber)
          expect(Exit.isInterrupted(exit)).toBe(true)
          expect(yield* Ref.get(finalized)).toEqual(["slow"])
          const calls = events.filter((event) => event._tag === "Started" || event._tag === "Finished").map((event) =>
            `${event._tag} ${event.call.name}`
          )
          // quick finished once; slow started and was stopped with the run, its Finished going nowhere
          expect(calls.filter((line) => line === "Finished quick")).toHaveLength(1)
          expect(calls.filter((line) => line.startsWith("Finished slow"))).toHaveLength(0)
          expect(calls).toContain("Started slow")
        }))
    }

    it.scopedLive(`${dialect}: an interrupt during the model's stream abandons the request`, () =>
      Effect.gen(function*() {
        const server = yield* ScriptedServer.make({ dialect, turns: [{ text: "thinking very hard", stall: true }] })
        const firstDelta = yield* Deferred.make<string>()
        const fiber = yield* Agent.stream({ toolkit: files().kit, prompt: "go" }).pipe(
          Stream.runForEach((event) =>
            event._tag === "TextDelta" ? Deferred.succeed(firstDelta, event.delta) : Effect.void
          ),
          Effect.provide(server.layer),
          Effect.fork
        )
        expect(yield* Deferred.await(firstDelta)).toBe("thinking")
        yield* Fiber.interrupt(fiber)
        // the server sees the connection go
        const aborted = yield* server.aborted.pipe(
          Effect.repeat({ until: (n) => n > 0, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("5 seconds")
        )
        expect(aborted).toBe(1)
      }))

    it.scopedLive(`${dialect}: Agent.stream with the default model streams the text as TextDelta events`, () =>
      Effect.gen(function*() {
        const server = yield* ScriptedServer.make({
          dialect,
          turns: [{ calls: [{ name: "append", arguments: { path: "a.txt", text: "hi" } }] }, {
            text: "Done writing.",
            chunk: 5
          }]
        })
        const events = yield* Agent.stream({ toolkit: files().kit, prompt: "go" }).pipe(
          Stream.runCollect,
          Effect.provide(server.layer)
        )
        const all = Chunk.toReadonlyArray(events)
        expect(all.filter((event) => event._tag === "TextDelta").map((event) => event.delta)).toEqual([
          "Done ",
          "writi",
          "ng."
        ])
        const finished = all.at(-1)
        expect(finished?._tag === "RunFinished" && finished.result.text).toBe("Done writing.")
        expect(all.filter((event) => event._tag === "StepFinished").map((event) => event.step.response.usage))
          .toEqual([
            expect.objectContaining({ inputTokens: 10, outputTokens: 5 }),
            expect.objectContaining({ inputTokens: 10, outputTokens: 5 })
          ])
      }))

    it.scopedLive(`${dialect}: an error answer fails the run with AgentError ModelFailed carrying the AiError`, () =>
      Effect.gen(function*() {
        const server = yield* ScriptedServer.make({
          dialect,
          turns: [{ calls: [{ name: "append", arguments: { path: "a.txt", text: "hi" } }] }, {
            status: 529,
            error: "overloaded"
          }]
        })
        const error = yield* Effect.flip(
          Agent.run({ toolkit: files().kit, prompt: "go" }).pipe(Effect.provide(server.layer))
        )
        expect(error.reason).toBe("ModelFailed")
        expect(error.step).toBe(1)
        expect(error.steps).toHaveLength(1)
        expect((error.cause as { readonly _tag: string })._tag).toBe("HttpResponseError")
      }))
  }

  describe("the transcript as a Prompt", () => {
    it.effect("the messages made directly are what decoding them with Prompt.Message gives", () =>
      Effect.gen(function*() {
        const Echo = Tool.make("echo", {
          description: "Echo",
          parameters: { value: Schema.Unknown },
          handler: ({ value }) => Effect.succeed(ToolResult.json(value))
        })
        const calls: ReadonlyArray<Executor.ToolCall> = [
          { id: "1", name: "echo", arguments: { value: { a: [1, 2] } } },
          { id: "2", name: "echo", arguments: "{" },
          { id: "3", name: "missing", arguments: {} }
        ]
        const outcomes = yield* Executor.run(Toolkit.make(Echo), calls)
        const messages: ReadonlyArray<Agent.Message> = [
          { role: "system", content: "Be terse." },
          { role: "user", content: "hi" },
          ...toolMessages(calls, outcomes),
          // the shapes made by decoding, for comparison
          { role: "user", content: [{ type: "text", text: "parts" }] },
          { role: "user", content: "with options", options: { openai: { x: 1 } } }
        ]
        for (const message of messages) {
          const made = promptMessage(message)
          expect(Either.isRight(made)).toBe(true)
          expect(Either.getOrThrow(made)).toEqual(Schema.decodeUnknownSync(Prompt.Message)(message))
        }
      }))

    it.effect("a prompt message that is not a message fails the run as ModelFailed, with the parse error", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          Agent.run({
            toolkit: files().kit,
            prompt: [{ role: "user", content: 42 } as unknown as Agent.Message]
          }).pipe(Effect.provide(Layer.succeed(LanguageModel.LanguageModel, undefined as never)))
        )
        expect(error.reason).toBe("ModelFailed")
        expect((error.cause as { readonly _tag: string })._tag).toBe("ParseError")
      }))
  })
})
