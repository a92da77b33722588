/**
 * The @effect/ai `LanguageModel` as the agent loop's model (`Agent.languageModel`, the default). Loaded
 * dynamically by `agent.ts` the first time a run asks it, never by the root module: with `EffectAi.ts` and
 * `providers/effectAi.ts`, one of the three files that import @effect/ai at run time.
 *
 * Each step asks with the transcript as a `Prompt`, our toolkit as @effect/ai tools (`EffectAi.toolkit`, made once
 * per toolkit) and `disableToolCallResolution: true`, so the calls come back to the loop, which runs them as one
 * batch. The transcript's messages are decoded once each (the model's own messages are already `Prompt` messages
 * and are kept as they are), so a long run does not decode its whole history on every step.
 *
 * @internal
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import type * as AiToolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { LanguageModelOptions, Message, Model, ModelContext, Turn, Usage } from "../Agent.js"
import type * as Tool from "../Tool.js"
import type * as Toolkit from "../Toolkit.js"
import { USAGE_FIELDS } from "./agent.js"
import * as EffectAi from "./providers/effectAi.js"

const aiToolkits = new WeakMap<Toolkit.Toolkit<Tool.Any>, AiToolkit.WithHandler<any>>()

const aiToolkitOf = (kit: Toolkit.Toolkit<Tool.Any>): AiToolkit.WithHandler<any> => {
  let made = aiToolkits.get(kit)
  if (made === undefined) aiToolkits.set(kit, made = EffectAi.toolkit(kit))
  return made
}

const decodeMessage = Schema.decodeUnknownEither(Prompt.Message)

const noOptions = (value: { readonly options?: unknown }): boolean => value.options === undefined

/**
 * The messages a run makes most, made directly: a prompt's text messages and the loop's own tool messages.
 * Decoding them with `Prompt.Message` gives the same (a test checks it) at many times the cost, on every run.
 */
const direct = (message: Message): Prompt.Message | undefined => {
  if (!noOptions(message)) return undefined
  switch (message.role) {
    case "system":
      return Prompt.makeMessage("system", { content: message.content })
    case "user":
      return typeof message.content === "string"
        ? Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: message.content })] })
        : undefined
    case "tool": {
      const content: Array<Prompt.ToolResultPart> = []
      for (const part of message.content) {
        if (part.type !== "tool-result" || !noOptions(part)) return undefined
        const { id, isFailure, name, providerExecuted, result } = part
        content.push(Prompt.makePart("tool-result", { id, name, isFailure, result, providerExecuted }))
      }
      return Prompt.makeMessage("tool", { content })
    }
    default:
      return undefined
  }
}

/** Messages made once each: a message of the transcript is the same object on every step. */
const made = new WeakMap<Message, Prompt.Message>()

/** A transcript message as a `Prompt` message; the model's own messages already are. */
export const promptMessage = (message: Message): Either.Either<Prompt.Message, ParseResult.ParseError> => {
  if (Prompt.isMessage(message)) return Either.right(message)
  const known = made.get(message)
  if (known !== undefined) return Either.right(known)
  const fast = direct(message)
  const result = fast === undefined ? decodeMessage(message) : Either.right(fast)
  if (Either.isRight(result)) made.set(message, result.right)
  return result
}

const promptOf = (transcript: ReadonlyArray<Message>): Either.Either<Prompt.Prompt, ParseResult.ParseError> => {
  const messages: Array<Prompt.Message> = []
  for (const message of transcript) {
    const result = promptMessage(message)
    if (Either.isLeft(result)) return Either.left(result.left)
    messages.push(result.right)
  }
  return Either.right(Prompt.fromMessages(messages))
}

const usageOf = (usage: Response.Usage | undefined): Usage | undefined => {
  if (usage === undefined) return undefined
  const out: { -readonly [K in keyof Usage]: number } = {}
  for (const field of USAGE_FIELDS) {
    const value = usage[field]
    if (typeof value === "number") out[field] = value
  }
  return out
}

const emptyAssistant = Prompt.makeMessage("assistant", { content: [] })

/** A response's parts (whole or streamed) as the loop's turn: its calls, its assistant message and text. */
const turnOf = (parts: ReadonlyArray<Response.AnyPart>, usage: Response.Usage | undefined): Turn => {
  const message = Prompt.fromResponseParts(parts).content.find((m) => m.role === "assistant") ?? emptyAssistant
  let text = ""
  if (message.role === "assistant") {
    for (const part of message.content) if (part.type === "text") text += part.text
  }
  return {
    text,
    calls: EffectAi.callsOfParts(parts),
    usage: usageOf(usage),
    message: message as Prompt.AssistantMessage
  }
}

export const make = (options: LanguageModelOptions | undefined): Model<LanguageModel.LanguageModel> =>
(
  transcript: ReadonlyArray<Message>,
  context: ModelContext
) =>
  Effect.flatMap(promptOf(transcript), (prompt) => {
    const request = { prompt, toolkit: aiToolkitOf(context.toolkit), disableToolCallResolution: true } as const
    if (!(options?.stream ?? context.streaming)) {
      return Effect.map(LanguageModel.generateText(request), (response) => turnOf(response.content, response.usage))
    }
    return Effect.suspend(() => {
      const parts: Array<Response.AnyPart> = []
      let usage: Response.Usage | undefined
      return LanguageModel.streamText(request).pipe(
        Stream.runForEach((part) => {
          parts.push(part)
          if (part.type === "text-delta") return context.textDelta(part.delta)
          if (part.type === "finish") usage = part.usage
          return Effect.void
        }),
        Effect.map(() => turnOf(parts, usage))
      )
    })
  })
