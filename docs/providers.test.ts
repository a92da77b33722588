/**
 * The examples of docs/providers.md, run. Each `// #region name` below is the code of the block marked
 * `<!-- example: name -->` in the page, imports aside. The provider examples are fed the responses of
 * test/fixtures/providers (copied from each provider's documentation); the @effect/ai ones run a real
 * `@effect/ai-openai` language model against the scripted server of test/providers/scriptedServer.ts.
 */
import { LanguageModel, Prompt, Tool as AiTool, Toolkit as AiToolkit } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as EffectAi from "../src/EffectAi.js"
import { Anthropic, Executor, Gemini, OpenAiChat, OpenAiResponses, Tool, Toolkit } from "../src/index.js"
import * as ScriptedServer from "../test/providers/scriptedServer.js"
import { fixtures } from "../test/providers/toolkit.js"
import { checkExamples } from "./examples.js"

// #region toolkit
const Weather = Tool.make("get_weather", {
  description: "Get the current weather in a given location",
  parameters: {
    location: Schema.String.annotations({ description: "The city and country, e.g. Paris, France" }),
    unit: Schema.optional(Schema.Literal("celsius", "fahrenheit"))
  },
  handler: ({ location, unit = "celsius" }) =>
    Effect.succeed(`Sunny, ${unit === "celsius" ? "22 °C" : "72 °F"} in ${location}`)
})

const kit = Toolkit.make(Weather)
// #endregion

// #region openai-chat
// continues the example "toolkit"

interface ChatRequest {
  readonly model: string
  readonly messages: ReadonlyArray<OpenAiChat.Message>
  readonly tools?: ReadonlyArray<unknown>
}

const firstChatRequest: ChatRequest = {
  model: "gpt-4.1",
  messages: [{ role: "user", content: "What's the weather like in Paris and Bogotá?" }],
  tools: OpenAiChat.tools(kit)
}

/** The request after this completion: its message, then one tool message per call (and media, if any). */
const nextChatRequest = (request: ChatRequest, completion: OpenAiChat.ChatCompletion) =>
  Effect.gen(function*() {
    const calls = yield* OpenAiChat.calls(completion)
    const outcomes = yield* Executor.run(kit, calls)
    return {
      ...request,
      messages: [...request.messages, completion.choices[0].message, ...OpenAiChat.results(calls, outcomes)]
    }
  })
// => messages: [user, assistant (2 tool_calls),
//   { role: "tool", tool_call_id: "call_12345xyz", content: "Sunny, 22 °C in Paris, France" },
//   { role: "tool", tool_call_id: "call_67890abc", content: "Sunny, 72 °F in Bogotá, Colombia" }]
// #endregion

// #region openai-responses
// continues the example "toolkit"

interface ResponsesRequest {
  readonly model: string
  readonly input: ReadonlyArray<OpenAiResponses.InputItem>
  readonly tools?: ReadonlyArray<unknown>
}

const firstResponsesRequest: ResponsesRequest = {
  model: "o4-mini",
  input: [{ role: "user", content: "What's the weather like in Paris and Bogotá?" }],
  tools: OpenAiResponses.tools(kit)
}

/** The request after this response: its output items as they came, then one function_call_output per call. */
const nextResponsesRequest = (request: ResponsesRequest, response: OpenAiResponses.Response) =>
  Effect.gen(function*() {
    const calls = yield* OpenAiResponses.calls(response)
    const outcomes = yield* Executor.run(kit, calls)
    return { ...request, input: [...request.input, ...response.output, ...OpenAiResponses.results(calls, outcomes)] }
  })
// => input: [user, reasoning, function_call, function_call,
//   { type: "function_call_output", call_id: "call_12345xyz", output: "Sunny, 22 °C in Paris, France" },
//   { type: "function_call_output", call_id: "call_67890abc", output: "Sunny, 72 °F in Bogotá, Colombia" }]
// #endregion

// #region anthropic
// continues the example "toolkit"

interface MessagesRequest {
  readonly model: string
  readonly max_tokens: number
  readonly messages: ReadonlyArray<Anthropic.MessageParam>
  readonly tools?: ReadonlyArray<unknown>
}

const firstMessagesRequest: MessagesRequest = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [{ role: "user", content: "What's the weather like in San Francisco and New York?" }],
  tools: Anthropic.tools(kit)
}

/** The request after this message: the model's content, then one user message of tool_result blocks. */
const nextMessagesRequest = (request: MessagesRequest, message: Anthropic.Message) =>
  Effect.gen(function*() {
    const calls = yield* Anthropic.calls(message)
    const outcomes = yield* Executor.run(kit, calls)
    return {
      ...request,
      messages: [
        ...request.messages,
        { role: "assistant" as const, content: message.content },
        ...Anthropic.results(calls, outcomes)
      ]
    }
  })
// => messages: [user, assistant (text, 2 tool_use), { role: "user", content: [
//   { type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: "Sunny, 22 °C in San Francisco, CA" },
//   { type: "tool_result", tool_use_id: "toolu_01CEXAMPLE", content: "Sunny, 72 °F in New York, NY" }] }]
// #endregion

// #region gemini
// continues the example "toolkit"

interface GenerateContentRequest {
  readonly contents: ReadonlyArray<Gemini.Content>
  readonly tools?: ReadonlyArray<{ readonly functionDeclarations: ReadonlyArray<unknown> }>
}

const firstGeminiRequest: GenerateContentRequest = {
  contents: [{ role: "user", parts: [{ text: "What's the weather like in Paris and Bogotá?" }] }],
  tools: [{ functionDeclarations: Gemini.tools(kit) }]
}

/** The request after this response: the model's content as it came, then one content of function responses. */
const nextGeminiRequest = (request: GenerateContentRequest, response: Gemini.GenerateContentResponse) =>
  Effect.gen(function*() {
    const calls = yield* Gemini.calls(response)
    const outcomes = yield* Executor.run(kit, calls)
    const answer = response.candidates?.[0]?.content
    return {
      ...request,
      contents: [...request.contents, ...(answer === undefined ? [] : [answer]), ...Gemini.results(calls, outcomes)]
    }
  })
// => contents: [user, model (2 functionCall parts), { role: "user", parts: [
//   { functionResponse: { name: "get_weather", response: { output: "Sunny, 22 °C in Paris, France" } } },
//   { functionResponse: { name: "get_weather", response: { output: "Sunny, 72 °F in Bogotá, Colombia" } } }] }]
// #endregion

// #region effect-ai-toolkit
// continues the example "toolkit"

const answer = LanguageModel.generateText({
  prompt: "What's the weather like in Paris?",
  toolkit: EffectAi.toolkit(kit)
})
// => response.toolResults: [{ name: "get_weather", isFailure: false, result: "Sunny, 22 °C in Paris, France" }]
// #endregion

// #region effect-ai-step
// continues the example "toolkit"

/** The prompt after one model turn: the turn itself, then the outcomes of its calls, run as one batch. */
const nextPrompt = (prompt: Prompt.Prompt) =>
  Effect.gen(function*() {
    const response = yield* LanguageModel.generateText({
      prompt,
      toolkit: EffectAi.toolkit(kit),
      disableToolCallResolution: true
    })
    const calls = yield* EffectAi.calls(response)
    const outcomes = yield* Executor.run(kit, calls)
    return Prompt.merge(
      Prompt.merge(prompt, Prompt.fromResponseParts(response.content)),
      EffectAi.results(calls, outcomes)
    )
  })
// => [user, assistant (2 tool calls), tool (2 tool results)]
// #endregion

// #region effect-ai-from-toolkit
const Forecast = AiTool.make("forecast", {
  description: "The forecast for a city",
  parameters: { city: Schema.String, days: Schema.Int },
  success: Schema.String
})
const Forecasts = AiToolkit.make(Forecast)
const ForecastHandlers = Forecasts.toLayer({
  forecast: ({ city, days }) => Effect.succeed(`${days} days of sun in ${city}`)
})

const forecasts = Effect.gen(function*() {
  const forecastKit = yield* EffectAi.fromToolkit(Forecasts, {
    forecast: { resource: ({ city }) => `city:${city}`, timeout: "10 seconds" }
  })
  return yield* Executor.run(forecastKit, [
    { id: "1", name: "forecast", arguments: "{\"city\":\"Oslo\",\"days\":3}" },
    { id: "2", name: "forecast", arguments: "{\"city\":\"Oslo\",\"days\":\"many\"}" }
  ])
}).pipe(Effect.provide(ForecastHandlers))
// => [Right("3 days of sun in Oslo"), Left(InvalidArguments: "invalid arguments: days: expected an integer, got \"many\"")]
// #endregion

const weather = (location: string, unit = "celsius") =>
  `Sunny, ${unit === "celsius" ? "22 °C" : "72 °F"} in ${location}`

describe("docs/providers.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./providers.md", import.meta.url), new URL("./providers.test.ts", import.meta.url)))

  it.effect("OpenAI chat: the next request carries one tool message per call", () =>
    Effect.gen(function*() {
      const completion = fixtures("openai-chat.json")["parallel-calls"] as OpenAiChat.ChatCompletion
      const next = yield* nextChatRequest(firstChatRequest, completion)
      expect(next.messages.slice(1)).toEqual([
        completion.choices[0].message,
        { role: "tool", tool_call_id: "call_12345xyz", content: weather("Paris, France") },
        { role: "tool", tool_call_id: "call_67890abc", content: weather("Bogotá, Colombia", "fahrenheit") }
      ])
    }))

  it.effect("OpenAI Responses: the next input carries one function_call_output per call", () =>
    Effect.gen(function*() {
      const response = fixtures("openai-responses.json")["parallel-calls"] as OpenAiResponses.Response
      const next = yield* nextResponsesRequest(firstResponsesRequest, response)
      expect(next.input.slice(1)).toEqual([
        ...response.output,
        { type: "function_call_output", call_id: "call_12345xyz", output: weather("Paris, France") },
        { type: "function_call_output", call_id: "call_67890abc", output: weather("Bogotá, Colombia", "fahrenheit") }
      ])
    }))

  it.effect("Anthropic: the next request carries one user message of tool_result blocks", () =>
    Effect.gen(function*() {
      const message = fixtures("anthropic.json")["parallel-calls"] as Anthropic.Message
      const next = yield* nextMessagesRequest(firstMessagesRequest, message)
      expect(next.messages.slice(1)).toEqual([
        { role: "assistant", content: message.content },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_01A09q90qw90lq917835lq9",
              content: weather("San Francisco, CA")
            },
            { type: "tool_result", tool_use_id: "toolu_01CEXAMPLE", content: weather("New York, NY", "fahrenheit") }
          ]
        }
      ])
    }))

  it.effect("Gemini: the next request carries one content of function responses, by name", () =>
    Effect.gen(function*() {
      const response = fixtures("gemini.json")["parallel-calls"] as Gemini.GenerateContentResponse
      const next = yield* nextGeminiRequest(firstGeminiRequest, response)
      expect(next.contents.slice(1)).toEqual([
        response.candidates![0].content,
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { output: weather("Paris, France") } } },
            {
              functionResponse: { name: "get_weather", response: { output: weather("Bogotá, Colombia", "fahrenheit") } }
            }
          ]
        }
      ])
    }))

  it.scoped("@effect/ai: generateText resolves the call through our tool", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{ calls: [{ name: "get_weather", arguments: { location: "Paris, France" } }] }]
      })
      const response = yield* Effect.provide(answer, server.layer)
      expect(response.toolResults.map(({ isFailure, name, result }) => ({ name, isFailure, result }))).toEqual([
        { name: "get_weather", isFailure: false, result: weather("Paris, France") }
      ])
    }))

  it.scoped("@effect/ai: one step with the calls run as a batch", () =>
    Effect.gen(function*() {
      const server = yield* ScriptedServer.make({
        dialect: "openai",
        turns: [{
          calls: [
            { name: "get_weather", arguments: { location: "Paris, France" } },
            { name: "get_weather", arguments: { location: "Bogotá, Colombia", unit: "fahrenheit" } }
          ]
        }]
      })
      const prompt = yield* Effect.provide(nextPrompt(Prompt.make("Weather in Paris and Bogotá?")), server.layer)
      expect(prompt.content.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
      const tool = prompt.content[2]
      expect(tool.role === "tool" && tool.content.map(({ id, result }) => ({ id, result }))).toEqual([
        { id: "call_0_0", result: weather("Paris, France") },
        { id: "call_0_1", result: weather("Bogotá, Colombia", "fahrenheit") }
      ])
    }))

  it.effect("@effect/ai: an @effect/ai toolkit through the executor", () =>
    Effect.gen(function*() {
      const [ok, bad] = yield* forecasts
      expect(ok._tag === "Right" && ok.right.content).toEqual([{ type: "text", text: "3 days of sun in Oslo" }])
      expect(bad._tag === "Left" && bad.left.message).toBe("invalid arguments: days: expected an integer, got \"many\"")
    }))
})
