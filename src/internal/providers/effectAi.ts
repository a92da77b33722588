/**
 * @effect/ai interop: our tools as @effect/ai tools, its responses as our calls, our outcomes as its prompt, its
 * toolkit as ours. The only file besides `EffectAi.ts` that imports @effect/ai.
 *
 * @internal
 */
import * as AiError from "@effect/ai/AiError"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as AiTool from "@effect/ai/Tool"
import type * as AiToolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { AiToolsFor, Parameters, ToolkitOptions, ToolOptions } from "../../EffectAi.js"
import type { ProviderFormatError } from "../../ProviderFormat.js"
import * as Tool from "../../Tool.js"
import { toModelText, ToolNotFound } from "../../ToolError.js"
import * as Toolkit from "../../Toolkit.js"
import * as ToolSchema from "../../ToolSchema.js"
import type { Outcome, ToolCall } from "../executor.js"
import { paired } from "./content.js"
import type { MakeFile } from "./promptParts.js"
import { mediaLabel, placed } from "./promptParts.js"
import { listCalls, reader } from "./shape.js"

// ---------------------------------------------------------------------------------------------------------------
// our toolkit for @effect/ai
// ---------------------------------------------------------------------------------------------------------------

// `{}` decodes any value that is not null as it is: the arguments reach our tool as the model sent them
const parametersOf = (tool: Tool.Any): Parameters =>
  Schema.Struct({}).annotations({
    jsonSchema: tool.strict ? ToolSchema.jsonSchema(tool, { target: "openai-strict" }) : tool.inputSchema
  })

const aiToolOf = (tool: Tool.Any): AiTool.Any => {
  let made = AiTool.make(tool.name, {
    description: tool.description,
    success: Schema.Unknown,
    failure: Schema.String,
    failureMode: "return"
  }).setParameters(parametersOf(tool))
  const { annotations } = tool
  if (tool.title !== undefined) made = made.annotate(AiTool.Title, tool.title)
  if (annotations.readOnly !== undefined) made = made.annotate(AiTool.Readonly, annotations.readOnly)
  if (annotations.destructive !== undefined) made = made.annotate(AiTool.Destructive, annotations.destructive)
  if (annotations.idempotent !== undefined) made = made.annotate(AiTool.Idempotent, annotations.idempotent)
  if (annotations.openWorld !== undefined) made = made.annotate(AiTool.OpenWorld, annotations.openWorld)
  return made
}

const promptFile: MakeFile<Prompt.FilePart> = (mediaType, data, name) =>
  Prompt.filePart({ mediaType, data, ...(name === undefined ? {} : { fileName: name }) })

export const toolkit = <T extends Tool.Any>(
  kit: Toolkit.Toolkit<T>,
  options?: ToolkitOptions
): AiToolkit.WithHandler<AiToolsFor<T>> => {
  const tools: Record<string, AiTool.Any> = {}
  for (const tool of kit.tools) tools[tool.name] = aiToolOf(tool)
  const timeout = options?.timeout
  let calls = 0
  // the result is JSON for @effect/ai: it is already what goes to the model, encoded or not
  const handle = (name: string, params: unknown): Effect.Effect<
    Omit<AiTool.HandlerResult<AiTool.Any>, "result"> & {
      readonly result: unknown
    },
    never,
    any
  > => {
    const tool = Toolkit.lookup(kit, name)
    if (Option.isNone(tool)) {
      const text = toModelText(new ToolNotFound({ tool: name, available: Toolkit.names(kit) }))
      return Effect.succeed({ isFailure: true, result: text, encodedResult: text })
    }
    // @effect/ai hands a handler no call id: the call gets one of its own
    const id = `effect-ai-call-${++calls}`
    return Effect.map(Tool.execute(tool.value, { id, arguments: params }, { timeout }), (outcome) => {
      const { isFailure, result } = placed(outcome, undefined)
      return { isFailure, result, encodedResult: result }
    })
  }
  return { tools, handle } as unknown as AiToolkit.WithHandler<AiToolsFor<T>>
}

// ---------------------------------------------------------------------------------------------------------------
// calls and results
// ---------------------------------------------------------------------------------------------------------------

const read = reader("effectAi")

/** The calls the provider ran itself, whose results came with the response: not ours to run. */
const ranByProvider = (part: { readonly providerExecuted?: unknown }): boolean => part.providerExecuted === true

export const calls: (
  response: { readonly content: ReadonlyArray<Response.AnyPart> } | ReadonlyArray<Response.AnyPart>
) => Either.Either<ReadonlyArray<ToolCall>, ProviderFormatError> = listCalls(read, {
  whole: "a response",
  field: "content",
  item: "response part",
  type: "tool-call",
  id: "id",
  arguments: "params",
  argumentsExpected: "the parameters",
  skip: ranByProvider
})

/**
 * The calls of parts @effect/ai has decoded itself (what `generateText` and `streamText` give): the same as
 * {@link calls}, without checking a shape the decoding already guarantees (the agent loop's hot path).
 */
export const callsOfParts = (parts: ReadonlyArray<Response.AnyPart>): Array<ToolCall> => {
  const out: Array<ToolCall> = []
  for (const part of parts) {
    if (part.type === "tool-call" && !ranByProvider(part)) {
      out.push({ id: part.id, name: part.name, arguments: part.params })
    }
  }
  return out
}

export const results = (calls: ReadonlyArray<ToolCall>, outcomes: ReadonlyArray<Outcome>): Prompt.Prompt => {
  const toolParts: Array<Prompt.ToolResultPart> = []
  const userParts: Array<Prompt.UserMessagePart> = []
  for (const [call, outcome] of paired(calls, outcomes)) {
    const { isFailure, media, result } = placed(outcome, promptFile)
    toolParts.push(
      Prompt.toolResultPart({ id: call.id, name: call.name, isFailure, result, providerExecuted: false })
    )
    if (media.length > 0) userParts.push(Prompt.textPart({ text: mediaLabel(call) }), ...media)
  }
  const messages: Array<Prompt.Message> = []
  if (toolParts.length > 0) messages.push(Prompt.toolMessage({ content: toolParts }))
  if (userParts.length > 0) messages.push(Prompt.userMessage({ content: userParts }))
  return Prompt.fromMessages(messages)
}

// ---------------------------------------------------------------------------------------------------------------
// an @effect/ai toolkit as ours
// ---------------------------------------------------------------------------------------------------------------

/** An error `handle` itself raised (a result that fails its own schema): a bug of the tool, not its failure. */
const isHandleError = (error: unknown): boolean => AiError.isAiError(error) && error.module === "Toolkit"

const annotationsOf = (tool: AiTool.Any): Tool.Annotations => {
  const context = tool.annotations.unsafeMap
  const stated = <A>(tag: { readonly key: string }): A | undefined =>
    context.has(tag.key) ? context.get(tag.key) as A : undefined
  const out: { -readonly [K in keyof Tool.Annotations]: Tool.Annotations[K] } = {}
  const title = stated<string>(AiTool.Title)
  const readOnly = stated<boolean>(AiTool.Readonly)
  const destructive = stated<boolean>(AiTool.Destructive)
  const idempotent = stated<boolean>(AiTool.Idempotent)
  const openWorld = stated<boolean>(AiTool.OpenWorld)
  if (title !== undefined) out.title = title
  if (readOnly !== undefined) out.readOnly = readOnly
  if (destructive !== undefined) out.destructive = destructive
  if (idempotent !== undefined) out.idempotent = idempotent
  if (openWorld !== undefined) out.openWorld = openWorld
  return out
}

type AnyToolkit = AiToolkit.WithHandler<Record<string, AiTool.Any>>

const toolOf = (tool: AiTool.Any, withHandler: AnyToolkit, options: ToolOptions<any> | undefined): Tool.Any => {
  const parameters = tool.parametersSchema === AiTool.EmptyParams
    ? undefined
    : tool.parametersSchema as unknown as Schema.Schema<unknown, unknown>
  // `handle` decodes what it is given: it gets the parameters encoded again, as the model wrote them
  const encode = parameters === undefined
    ? () => Either.right({})
    : ParseResult.encodeUnknownEither(parameters)
  return Tool.make(tool.name, {
    ...options,
    description: AiTool.getDescription(tool as any) ?? "",
    annotations: annotationsOf(tool),
    parameters,
    success: tool.successSchema as Schema.Schema<unknown, unknown>,
    failure: tool.failureSchema as Schema.Schema<unknown, unknown>,
    handler: (params: unknown) =>
      Effect.flatMap(Effect.orDie(encode(params)), (encoded) => withHandler.handle(tool.name, encoded as never)).pipe(
        Effect.catchIf(isHandleError, Effect.die),
        Effect.flatMap(({ isFailure, result }) => isFailure ? Effect.fail(result) : Effect.succeed(result))
      )
  })
}

const fromWithHandler = (
  withHandler: AnyToolkit,
  options: Readonly<Record<string, ToolOptions<any> | undefined>> | undefined
): Toolkit.Toolkit<Tool.Any> =>
  Toolkit.make(
    ...Object.values(withHandler.tools).filter((tool) => AiTool.isUserDefined(tool)).map((tool) =>
      toolOf(tool, withHandler, options?.[tool.name])
    )
  )

export const fromToolkit = (
  toolkit: AnyToolkit | Effect.Effect<AnyToolkit, unknown, unknown>,
  options?: Readonly<Record<string, ToolOptions<any> | undefined>>
): any =>
  Effect.isEffect(toolkit)
    ? Effect.map(toolkit, (withHandler) => fromWithHandler(withHandler, options))
    : fromWithHandler(toolkit, options)
