/**
 * effect-agent-tools: the tool layer for LLM agents on Effect 3.
 *
 * Every module is one concept, imported as a namespace:
 *
 * ```ts
 * import { Tool, Toolkit, ToolError } from "effect-agent-tools"
 * ```
 *
 * `EffectAi` (the `@effect/ai` bridge) is a subpath only, `effect-agent-tools/EffectAi`: `@effect/ai` is an
 * optional peer dependency, and exporting it here would load it for everyone. `Agent` is here: its default model,
 * the @effect/ai `LanguageModel`, is loaded only when a run without a model of its own first asks it.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Agent from "./Agent.js"
/** @since 0.1.0 */
export * as Anthropic from "./Anthropic.js"
/** @since 0.1.0 */
export * as Elicitation from "./Elicitation.js"
/** @since 0.1.0 */
export * as Executor from "./Executor.js"
/** @since 0.1.0 */
export * as Gemini from "./Gemini.js"
/** @since 0.1.0 */
export * as Journal from "./Journal.js"
/** @since 0.1.0 */
export * as McpAuth from "./McpAuth.js"
/** @since 0.1.0 */
export * as McpClient from "./McpClient.js"
/** @since 0.1.0 */
export * as McpServer from "./McpServer.js"
/** @since 0.1.0 */
export * as Middleware from "./Middleware.js"
/** @since 0.1.0 */
export * as OpenAiChat from "./OpenAiChat.js"
/** @since 0.1.0 */
export * as OpenAiResponses from "./OpenAiResponses.js"
/** @since 0.1.0 */
export * as Permission from "./Permission.js"
/** @since 0.1.0 */
export * as ProviderFormat from "./ProviderFormat.js"
/** @since 0.1.0 */
export * as Recorder from "./Recorder.js"
/** @since 0.1.0 */
export * as ShellProgram from "./ShellProgram.js"
/** @since 0.1.0 */
export * as StdioProvider from "./StdioProvider.js"
/** @since 0.1.0 */
export * as Tool from "./Tool.js"
/** @since 0.1.0 */
export * as ToolDefinition from "./ToolDefinition.js"
/** @since 0.1.0 */
export * as ToolError from "./ToolError.js"
/** @since 0.1.0 */
export * as Toolkit from "./Toolkit.js"
/** @since 0.1.0 */
export * as ToolResult from "./ToolResult.js"
/** @since 0.1.0 */
export * as ToolSchema from "./ToolSchema.js"
/** @since 0.1.0 */
export * as Workspace from "./Workspace.js"
