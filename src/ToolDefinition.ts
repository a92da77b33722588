/**
 * A tool as each provider wants it in a request: OpenAI chat completions, OpenAI responses, Anthropic, Gemini, and
 * MCP's `tools/list` entry. The parameters are the `ToolSchema` projection for that provider; `strict` appears
 * only when true.
 *
 * @since 0.1.0
 */
import type { Annotations, Any, JsonSchema } from "./Tool.js"
import * as ToolSchema from "./ToolSchema.js"

/**
 * `{ type: "function", function: { name, description, parameters, strict? } }`: OpenAI chat completions (and the
 * stdio tool-provider header line).
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAiChat {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description: string
    readonly parameters: JsonSchema
    readonly strict?: true
  }
}

/**
 * `{ type: "function", name, description, parameters, strict? }`: the OpenAI responses API.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAiResponses {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly strict?: true
}

/**
 * `{ name, description, input_schema }`: Anthropic's messages API.
 *
 * @since 0.1.0
 * @category models
 */
export interface Anthropic {
  readonly name: string
  readonly description: string
  readonly input_schema: JsonSchema
}

/**
 * `{ name, description, parameters? }`: a Gemini function declaration (parameters left out when there are none,
 * since Gemini refuses an object schema with no properties).
 *
 * @since 0.1.0
 * @category models
 */
export interface Gemini {
  readonly name: string
  readonly description: string
  readonly parameters?: JsonSchema
}

/**
 * MCP's tool hints, named as on the wire.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

/**
 * `{ name, title?, description, inputSchema, outputSchema?, annotations? }`: an MCP `tools/list` entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Mcp {
  readonly name: string
  readonly title?: string
  readonly description: string
  readonly inputSchema: JsonSchema
  readonly outputSchema?: JsonSchema
  readonly annotations?: McpAnnotations
}

/**
 * The formats, named as the functions of this module.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "openAiChat" | "openAiResponses" | "anthropic" | "gemini" | "mcp"

/**
 * Every format, in a fixed order: the one spelling of a provider format, used by `Toolkit.definitions`, the CLI's
 * `--format` and the provider modules alike.
 *
 * @example
 * ```ts
 * import { ToolDefinition } from "effect-agent-tools"
 *
 * console.log(ToolDefinition.formats) // ["openAiChat", "openAiResponses", "anthropic", "gemini", "mcp"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const formats: readonly ["openAiChat", "openAiResponses", "anthropic", "gemini", "mcp"] = [
  "openAiChat",
  "openAiResponses",
  "anthropic",
  "gemini",
  "mcp"
]

/**
 * The definition type of each format.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definitions {
  readonly openAiChat: OpenAiChat
  readonly openAiResponses: OpenAiResponses
  readonly anthropic: Anthropic
  readonly gemini: Gemini
  readonly mcp: Mcp
}

const parametersFor = (tool: Any): JsonSchema =>
  ToolSchema.jsonSchema(tool, { target: tool.strict ? "openai-strict" : "standard" })

/**
 * The OpenAI chat completions definition.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, ToolDefinition } from "effect-agent-tools"
 *
 * const Upper = Tool.make("upper", {
 *   description: "Uppercase a string",
 *   parameters: { text: Schema.String },
 *   handler: ({ text }) => Effect.succeed(text.toUpperCase())
 * })
 * console.log(JSON.stringify(ToolDefinition.openAiChat(Upper)))
 * // {"type":"function","function":{"name":"upper","description":"Uppercase a string","parameters":{...}}}
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const openAiChat = (tool: Any): OpenAiChat => ({
  type: "function",
  function: {
    name: tool.name,
    description: tool.description,
    parameters: parametersFor(tool),
    ...(tool.strict ? { strict: true as const } : {})
  }
})

/**
 * The OpenAI responses API definition.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, ToolDefinition } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", strict: true, handler: () => Effect.succeed("noon") })
 * console.log(ToolDefinition.openAiResponses(Now).strict) // true
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const openAiResponses = (tool: Any): OpenAiResponses => ({
  type: "function",
  name: tool.name,
  description: tool.description,
  parameters: parametersFor(tool),
  ...(tool.strict ? { strict: true as const } : {})
})

/**
 * The Anthropic messages API definition.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, ToolDefinition } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * console.log(ToolDefinition.anthropic(Now).input_schema) // { type: "object", properties: {}, ... }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const anthropic = (tool: Any): Anthropic => ({
  name: tool.name,
  description: tool.description,
  input_schema: tool.inputSchema
})

/**
 * The Gemini function declaration. Throws `ToolSchema.UnsupportedSchemaError` for shapes Gemini cannot take
 * (recursion, records, tuples).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, ToolDefinition } from "effect-agent-tools"
 *
 * const Find = Tool.make("find", {
 *   description: "Find a user",
 *   parameters: { email: Schema.NullOr(Schema.String) },
 *   handler: () => Effect.succeed("none")
 * })
 * console.log(ToolDefinition.gemini(Find).parameters) // { ..., email: { type: "string", nullable: true } }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const gemini = (tool: Any): Gemini => {
  const parameters = ToolSchema.jsonSchema(tool, { target: "gemini" })
  const empty = typeof parameters.properties === "object" && parameters.properties !== null &&
    Object.keys(parameters.properties).length === 0
  return empty
    ? { name: tool.name, description: tool.description }
    : { name: tool.name, description: tool.description, parameters }
}

/**
 * MCP's hints from a tool's annotations: every hint the tool states, nothing it leaves unstated (so a client
 * applies MCP's defaults exactly where the author said nothing).
 *
 * @example
 * ```ts
 * import { ToolDefinition } from "effect-agent-tools"
 *
 * console.log(ToolDefinition.mcpAnnotations({ readOnly: true })) // { readOnlyHint: true }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const mcpAnnotations = (annotations: Annotations): McpAnnotations | undefined => {
  const out: {
    title?: string
    readOnlyHint?: boolean
    destructiveHint?: boolean
    idempotentHint?: boolean
    openWorldHint?: boolean
  } = {}
  if (annotations.title !== undefined) out.title = annotations.title
  if (annotations.readOnly !== undefined) out.readOnlyHint = annotations.readOnly
  if (annotations.destructive !== undefined) out.destructiveHint = annotations.destructive
  if (annotations.idempotent !== undefined) out.idempotentHint = annotations.idempotent
  if (annotations.openWorld !== undefined) out.openWorldHint = annotations.openWorld
  return Object.keys(out).length === 0 ? undefined : out
}

/**
 * The MCP `tools/list` entry.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, ToolDefinition } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", {
 *   description: "The time",
 *   title: "Current time",
 *   annotations: { readOnly: true },
 *   handler: () => Effect.succeed("noon")
 * })
 * console.log(ToolDefinition.mcp(Now).annotations) // { readOnlyHint: true }
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const mcp = (tool: Any): Mcp => {
  const annotations = mcpAnnotations(tool.annotations)
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(annotations === undefined ? {} : { annotations })
  }
}

/**
 * The definition of a tool in the given format.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Tool, ToolDefinition } from "effect-agent-tools"
 *
 * const Now = Tool.make("now", { description: "The time", handler: () => Effect.succeed("noon") })
 * const definition = ToolDefinition.make(Now, "anthropic")
 * ```
 *
 * @since 0.1.0
 * @category definitions
 */
export const make = <F extends Format>(tool: Any, format: F): Definitions[F] => {
  switch (format) {
    case "openAiChat":
      return openAiChat(tool) as Definitions[F]
    case "openAiResponses":
      return openAiResponses(tool) as Definitions[F]
    case "anthropic":
      return anthropic(tool) as Definitions[F]
    case "gemini":
      return gemini(tool) as Definitions[F]
    default:
      return mcp(tool) as Definitions[F]
  }
}
