/**
 * The tool every row calls: `read_file { path: string, max_bytes?: number }` whose handler does nothing, so what is
 * measured is the library around it. The same parameters are given to each side of a comparison in that side's own
 * terms (an Effect Schema for us, B1 and `@effect/ai`; zod for the SDK's `McpServer`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"
import { ANSWER, DESCRIPTION, TOOL_NAME } from "./constants.js"

export { ANSWER, DESCRIPTION, TOOL_NAME }

export const parameters = {
  path: Schema.String.annotations({ description: "Absolute path to read" }),
  max_bytes: Schema.optional(Schema.Int)
}

/** The no-op tool as the row 1 statement has it: a handler that returns `Effect.void`. */
export const ReadFile = Tool.make(TOOL_NAME, {
  description: DESCRIPTION,
  parameters,
  handler: () => Effect.void
})

/** The same tool with a handler written as a generator: it completes without suspending, but is not a value. */
export const ReadFileGen = Tool.make(TOOL_NAME, {
  description: DESCRIPTION,
  parameters,
  handler: () =>
    Effect.gen(function*() {
      return yield* Effect.void
    })
})

/** The tool as the servers serve it: it answers a short text. */
export const ReadFileAnswering = Tool.make(TOOL_NAME, {
  description: DESCRIPTION,
  parameters,
  annotations: { readOnly: true },
  handler: () => Effect.succeed(ANSWER)
})

export const toolkit = Toolkit.make(ReadFile)

export interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/** `n` calls with valid arguments, as the raw JSON strings a model writes. */
export const validCalls = (n: number): Array<Call> =>
  Array.from({ length: n }, (_, i) => ({
    id: `call_${i}`,
    name: TOOL_NAME,
    arguments: `{"path":"/srv/data/file-${i}.txt","max_bytes":${1024 + i}}`
  }))

/** `n` calls whose every argument is wrong: `path` is a number, `max_bytes` a string. */
export const invalidCalls = (n: number): Array<Call> =>
  Array.from({ length: n }, (_, i) => ({
    id: `call_${i}`,
    name: TOOL_NAME,
    arguments: `{"path":${i},"max_bytes":"all"}`
  }))

/** Arguments for an MCP `tools/call`, already parsed (what a client sends). */
export const mcpArguments = (i: number): { readonly path: string; readonly max_bytes: number } => ({
  path: `/srv/data/file-${i}.txt`,
  max_bytes: 1024 + i
})
