/**
 * The examples of docs/agent.md, run. Each `// #region name` below is the code of the block marked
 * `<!-- example: name -->` in the page, imports aside. The scripted models are plain functions; the @effect/ai
 * examples run real `@effect/ai-openai` and plain-HTTP Anthropic models against the scripted server of
 * test/providers/scriptedServer.ts.
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Console, Effect, Either, Layer, Redacted, Schema, Stream } from "effect"
import { vi } from "vitest"
import { Agent, Anthropic, Permission, Tool, Toolkit, ToolResult } from "../src/index.js"
import * as ScriptedServer from "../test/providers/scriptedServer.js"
import { checkExamples } from "./examples.js"

// #region scripted
const Weather = Tool.make("get_weather", {
  description: "Get the current weather in a city",
  parameters: { city: Schema.String },
  handler: ({ city }) => Effect.succeed(`Sunny, 22 °C in ${city}`)
})
const kit = Toolkit.make(Weather)

/** A scripted model: asks for the weather in two cities, then answers with what the tools said. */
const scripted: Agent.Model = (transcript) => {
  const last = transcript[transcript.length - 1]
  if (last.role !== "tool") {
    return Effect.succeed({
      text: "Let me look that up.",
      calls: [
        { id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
        { id: "call_2", name: "get_weather", arguments: "{\"city\":\"Bogotá\"}" }
      ]
    })
  }
  return Effect.succeed({ text: last.content.map((part) => String(part.result)).join(" / ") })
}

const weather = Agent.run({ toolkit: kit, prompt: "Weather in Paris and Bogotá?", model: scripted })
// => { reason: "NoCalls", text: "Sunny, 22 °C in Paris / Sunny, 22 °C in Bogotá", steps: [2 steps],
//      transcript: [user, assistant (text, 2 tool calls), tool (2 tool results), assistant (text)] }
// #endregion

// #region stream
// continues the example "scripted"

const printed = Agent.stream({ toolkit: kit, prompt: "Weather in Paris and Bogotá?", model: scripted }).pipe(
  Stream.runForEach((event) => {
    switch (event._tag) {
      case "Started":
        return Console.log(`step ${event.step}: ${event.call.name} ${JSON.stringify(event.call.arguments)}`)
      case "Finished":
        return Console.log(`step ${event.step}: ${event.call.id} done in ${event.durationMillis} ms`)
      case "RunFinished":
        return Console.log(`${event.result.reason}: ${event.result.text}`)
      default:
        return Effect.void
    }
  })
)
// step 0: get_weather "{\"city\":\"Paris\"}"
// step 0: call_1 done in 0 ms
// step 0: get_weather "{\"city\":\"Bogotá\"}"
// step 0: call_2 done in 0 ms
// NoCalls: Sunny, 22 °C in Paris / Sunny, 22 °C in Bogotá
// #endregion

// #region stop
// continues the example "scripted"

const Answer = Tool.make("answer", {
  description: "Give the final answer",
  parameters: { text: Schema.String },
  handler: ({ text }) => Effect.succeed(ToolResult.withTerminate(ToolResult.text(text)))
})

const bounded = Agent.run({
  toolkit: Toolkit.make(Weather, Answer),
  prompt: "Weather in Paris?",
  model: (_, { step }) =>
    Effect.succeed({
      calls: [
        step === 0
          ? { id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }
          : { id: "call_2", name: "answer", arguments: "{\"text\":\"Sunny in Paris.\"}" }
      ]
    }),
  maxSteps: 5,
  // stop as soon as any tool failed
  stopWhen: (steps) => steps[steps.length - 1].outcomes.some(Either.isLeft)
})
// => { reason: "Terminated", steps: [2 steps] }: every outcome of step 1 asked to stop
// #endregion

// #region failure
// continues the example "scripted"

const failing = Agent.run({
  toolkit: kit,
  prompt: "Weather in Paris?",
  model: () => Effect.fail(new Error("rate limited")),
  modelTimeout: "30 seconds"
}).pipe(
  Effect.catchTag("AgentError", (error) => Effect.succeed(`${error.reason}: ${error.message}`))
)
// => "ModelFailed: the model failed at step 0: rate limited"
// #endregion

// #region permission
const Book = Tool.make("book_table", {
  description: "Book a table at a restaurant",
  parameters: { restaurant: Schema.String, seats: Schema.Int },
  permission: { action: "book", describe: ({ restaurant, seats }) => `book ${seats} seats at ${restaurant}` },
  handler: ({ restaurant }) => Effect.succeed(`booked at ${restaurant}`)
})

const booking = Agent.stream({
  toolkit: Toolkit.make(Book),
  prompt: "Book a table for two at Chez Léon",
  model: (transcript) =>
    Effect.succeed(
      transcript.length === 1
        ? { calls: [{ id: "call_1", name: "book_table", arguments: "{\"restaurant\":\"Chez Léon\",\"seats\":2}" }] }
        : { text: "Booked." }
    )
}).pipe(
  Stream.filter((event) => event._tag === "PermissionRequested" || event._tag === "PermissionAnswered"),
  Stream.map((event) => `${event._tag}: ${event.request.description}`),
  Stream.runCollect,
  Effect.provide(
    Permission.layer((request) => Effect.succeed(request.action === "book" ? Permission.allow : Permission.deny()))
  )
)
// => ["PermissionRequested: book 2 seats at Chez Léon", "PermissionAnswered: book 2 seats at Chez Léon"]
// #endregion

// #region effect-ai-openai
// continues the example "scripted"

/** @effect/ai's OpenAI model at `apiUrl`: OpenAI's own (`https://api.openai.com/v1`) or a compatible server. */
const OpenAi = (apiUrl: string, apiKey: Redacted.Redacted) =>
  OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
    Layer.provide(OpenAiClient.layer({ apiUrl, apiKey })),
    Layer.provide(FetchHttpClient.layer)
  )

/** No `model`: the loop asks the LanguageModel the environment provides. */
const forecast = (apiUrl: string, apiKey: Redacted.Redacted) =>
  Agent.run({ toolkit: kit, prompt: "Weather in Paris?", maxSteps: 5, modelTimeout: "1 minute" }).pipe(
    Effect.provide(OpenAi(apiUrl, apiKey))
  )
// => { reason: "NoCalls", text: "It is sunny in Paris.", steps: [2 steps], usage: { inputTokens: 20, ... } }
// #endregion

// #region anthropic-http
// continues the example "scripted"

/** A model over Anthropic's Messages API with plain HTTP: each request is rebuilt from the prompt and the steps. */
const anthropic = (apiUrl: string, apiKey: string): Agent.Model<HttpClient.HttpClient> => (transcript, context) =>
  Effect.gen(function*() {
    const prompt = transcript[0]
    const messages: Array<Anthropic.MessageParam> = [
      { role: "user", content: typeof prompt.content === "string" ? prompt.content : "" }
    ]
    for (const step of context.steps) {
      const answer = step.response.raw as Anthropic.Message
      messages.push(
        { role: "assistant", content: answer.content },
        ...Anthropic.results(step.response.calls, step.outcomes)
      )
    }
    const message = yield* HttpClientRequest.post(`${apiUrl}/v1/messages`).pipe(
      HttpClientRequest.setHeaders({ "x-api-key": apiKey, "anthropic-version": "2023-06-01" }),
      HttpClientRequest.bodyUnsafeJson({
        model: "claude-sonnet-4-5",
        max_tokens: 1024,
        messages,
        tools: Anthropic.tools(context.toolkit)
      }),
      HttpClient.execute,
      Effect.flatMap((response) => response.json),
      Effect.map((json) => json as Anthropic.Message)
    )
    const calls = yield* Anthropic.calls(message)
    const text = message.content
      .filter((block): block is Anthropic.TextBlock => block.type === "text")
      .map((block) => block.text)
      .join("")
    return { text, calls, raw: message }
  })

const viaHttp = (apiUrl: string, apiKey: string) =>
  Agent.run({ toolkit: kit, prompt: "Weather in Paris?", model: anthropic(apiUrl, apiKey) }).pipe(
    Effect.provide(FetchHttpClient.layer)
  )
// => { reason: "NoCalls", text: "Sunny in Paris.", steps: [2 steps] }
// #endregion

describe("docs/agent.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./agent.md", import.meta.url), new URL("./agent.test.ts", import.meta.url)))

  it.effect("a scripted model: two calls, then the answer", () =>
    Effect.gen(function*() {
      const result = yield* weather
      expect(result.reason).toBe("NoCalls")
      expect(result.text).toBe("Sunny, 22 °C in Paris / Sunny, 22 °C in Bogotá")
      expect(result.steps).toHaveLength(2)
      expect(result.transcript.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"])
    }))

  it.effect("the stream prints each call and the end", () =>
    Effect.gen(function*() {
      const lines: Array<unknown> = []
      const log = vi.spyOn(console, "log").mockImplementation((line) => void lines.push(line))
      yield* Effect.ensuring(printed, Effect.sync(() => log.mockRestore()))
      expect(lines).toEqual([
        "step 0: get_weather \"{\\\"city\\\":\\\"Paris\\\"}\"",
        "step 0: call_1 done in 0 ms",
        "step 0: get_weather \"{\\\"city\\\":\\\"Bogotá\\\"}\"",
        "step 0: call_2 done in 0 ms",
        "NoCalls: Sunny, 22 °C in Paris / Sunny, 22 °C in Bogotá"
      ])
    }))

  it.effect("stop conditions: a terminating batch ends the run", () =>
    Effect.gen(function*() {
      const result = yield* bounded
      expect(result.reason).toBe("Terminated")
      expect(result.steps).toHaveLength(2)
    }))

  it.effect("a model failure is the run's typed failure", () =>
    Effect.gen(function*() {
      expect(yield* failing).toBe("ModelFailed: the model failed at step 0: rate limited")
    }))

  it.effect("permission requests are announced and answered before the call runs", () =>
    Effect.gen(function*() {
      expect(Chunk.toReadonlyArray(yield* booking)).toEqual([
        "PermissionRequested: book 2 seats at Chez Léon",
        "PermissionAnswered: book 2 seats at Chez Léon"
      ])
    }))

  it.scoped("@effect/ai's OpenAI model, against a local scripted server", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, { text: "It is sunny in Paris." }]
      })
      const result = yield* forecast(server.url, Redacted.make("sk-test"))
      expect(result.reason).toBe("NoCalls")
      expect(result.text).toBe("It is sunny in Paris.")
      expect(result.steps).toHaveLength(2)
      expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 10 })
    }))

  it.scoped("a plain-HTTP Anthropic model, built from the steps", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "anthropic",
        turns: [{ calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, (request) => {
          const results = request.body.messages.at(-1).content
          return { text: results[0]?.content === "Sunny, 22 °C in Paris" ? "Sunny in Paris." : "no result seen" }
        }]
      })
      const result = yield* viaHttp(server.url, "sk-ant-test")
      expect(result.reason).toBe("NoCalls")
      expect(result.text).toBe("Sunny in Paris.")
      const [, second] = yield* server.requests
      expect(second.body.messages.map((message: { readonly role: string }) => message.role)).toEqual([
        "user",
        "assistant",
        "user"
      ])
    }))
})
