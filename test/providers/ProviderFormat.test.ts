import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import type { Tool, ToolDefinition, Toolkit } from "../../src/index.js"
import { Anthropic, Executor, Gemini, OpenAiChat, OpenAiResponses, ProviderFormat } from "../../src/index.js"
import { fixtures, kit } from "./toolkit.js"

/** One step written once, for any provider module. */
const step = <D, Res, M, T extends Tool.Any>(
  format: ProviderFormat.Format<D, Res, M>,
  toolkit: Toolkit.Toolkit<T>,
  response: Res
) =>
  Effect.gen(function*() {
    const calls = yield* format.calls(response)
    return format.results(calls, yield* Executor.run(toolkit, calls))
  })

const chat: ProviderFormat.Format<
  ToolDefinition.OpenAiChat,
  OpenAiChat.ChatCompletion | OpenAiChat.AssistantMessage,
  OpenAiChat.ToolMessage | OpenAiChat.UserMessage
> = OpenAiChat
const responses: ProviderFormat.Format<ToolDefinition.OpenAiResponses, OpenAiResponses.Response, unknown> =
  OpenAiResponses
const anthropic: ProviderFormat.Format<ToolDefinition.Anthropic, Anthropic.Message, Anthropic.MessageParam> = Anthropic
const gemini: ProviderFormat.Format<ToolDefinition.Gemini, Gemini.GenerateContentResponse, Gemini.Content> = Gemini

describe("ProviderFormat", () => {
  it.effect("each provider module is a Format, so one step serves them all", () =>
    Effect.gen(function*() {
      const answered = [
        yield* step(chat, kit, fixtures("openai-chat.json")["parallel-calls"] as OpenAiChat.ChatCompletion),
        yield* step(responses, kit, fixtures("openai-responses.json")["parallel-calls"] as OpenAiResponses.Response),
        yield* step(anthropic, kit, fixtures("anthropic.json")["parallel-calls"] as Anthropic.Message),
        yield* step(gemini, kit, fixtures("gemini.json")["parallel-calls"] as Gemini.GenerateContentResponse)
      ]
      expect(answered.map((messages) => messages.length)).toEqual([2, 2, 1, 1])
    }))

  it.effect("a step over another provider's response fails with the ProviderFormatError, typed", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(step(chat, kit, fixtures("gemini.json")["parallel-calls"] as never))
      expect(failed._tag).toBe("ProviderFormatError")
      expect(failed.provider).toBe("openAiChat")
    }))

  it("the error survives a wire as its schema", () => {
    const error = Either.getLeft(Gemini.calls("x" as never))
    expect(error._tag).toBe("Some")
    const encoded = Schema.encodeSync(ProviderFormat.ProviderFormatError)(
      (error as { value: ProviderFormat.ProviderFormatError }).value
    )
    const decoded = Schema.decodeSync(ProviderFormat.ProviderFormatError)(encoded)
    expect(decoded.message).toBe(
      "not a Gemini generateContent response: expected a response, a candidate or a content, got a string \"x\""
    )
  })
})
