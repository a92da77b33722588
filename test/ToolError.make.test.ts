/**
 * The executor makes its error values with `makeError` (no validation, no stack trace): each must be the value
 * `new Class(fields)` gives, whichever way a program looks at it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Equal, Schema } from "effect"
import { inspect } from "node:util"
import { ToolError } from "../src/index.js"
import { McpClientError } from "../src/internal/mcpClient.js"
import { makeError, makeErrorValue, makeProblem } from "../src/internal/tool.js"

const plainArgs = Symbol.for("effect/Data/Error/plainArgs")

const problems = [
  { path: "options.depth", message: "expected an integer, got 1.5" },
  { path: "tags[1]", message: "expected a string, got 5" }
]

const cases = [
  { Class: ToolError.ToolNotFound, fields: { tool: "reed", available: ["read", "write"] } },
  {
    Class: ToolError.InvalidArguments,
    fields: { tool: "read", problems: problems.map((p) => new ToolError.ArgumentProblem(p)) },
    fast: { tool: "read", problems: problems.map(makeProblem) }
  },
  { Class: ToolError.ToolFailure, fields: { tool: "read", message: "no such file", error: { code: 2 } } },
  { Class: ToolError.ToolFailure, fields: { tool: "read", message: "no such file", error: undefined } },
  { Class: ToolError.ToolDefect, fields: { tool: "read", reason: "boom", cause: Cause.die(new Error("boom")) } },
  { Class: ToolError.ToolTimeout, fields: { tool: "read", timeout: Duration.seconds(2) } },
  { Class: ToolError.PermissionDenied, fields: { tool: "bash", description: "rm -rf /", reason: "no" } },
  { Class: ToolError.PermissionDenied, fields: { tool: "bash", description: "rm -rf /" } },
  { Class: ToolError.ToolInterrupted, fields: { tool: "read", partial: { lines: 3 } } },
  { Class: ToolError.ToolInterrupted, fields: { tool: "read" } },
  { Class: ToolError.ToolOutcomeUnknown, fields: { tool: "send", idempotencyKey: "k" } },
  { Class: ToolError.ToolOutcomeUnknown, fields: { tool: "send" } },
  // the error a closed MCP session keeps
  { Class: McpClientError, fields: { reason: "Closed", message: "the MCP client of the MCP server \"x\" was closed" } }
] as const

/** Made as errors were before `makeError`: by the constructor, with an empty stack trace. */
const withoutTrace = <A>(make: () => A): A => {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return make()
  } finally {
    Error.stackTraceLimit = limit
  }
}

/**
 * Own properties, but for the stack and `Data.Error`'s record of its arguments (used by its `toJSON` only, which is
 * compared on its own: `makeError` keeps it only for errors with fields `Error` hides).
 */
const descriptors = (value: object) =>
  Reflect.ownKeys(value).filter((key) => key !== "stack" && key !== plainArgs).map((key) => {
    const { enumerable, value: own } = Object.getOwnPropertyDescriptor(value, key)!
    return [key, enumerable, own]
  })

describe("makeError", () => {
  for (const { Class, fields, ...rest } of cases) {
    it(`makes the ${Class._tag} that new ${Class._tag}(${Object.keys(fields).join(", ")}) makes`, () => {
      const made = withoutTrace(() => new (Class as any)(fields) as ToolError.ToolError)
      const make = Class === McpClientError ? makeErrorValue : makeError
      const fast = make(Class as any, "fast" in rest ? rest.fast : fields) as ToolError.ToolError
      expect(fast).toBeInstanceOf(Class)
      expect(fast).toBeInstanceOf(Error)
      expect(ToolError.isToolError(fast)).toBe(Class !== McpClientError)
      expect(Schema.is(Class as any)(fast)).toBe(true)
      expect(fast._tag).toBe(made._tag)
      expect(fast.name).toBe(made.name)
      expect(fast.message).toBe(made.message)
      expect(ToolError.toModelText(fast)).toBe(ToolError.toModelText(made))
      expect(String(fast)).toBe(String(made))
      expect(descriptors(fast)).toEqual(descriptors(made))
      expect(JSON.stringify(fast)).toBe(JSON.stringify(made))
      expect(Schema.encodeSync(Class as any)(fast)).toEqual(Schema.encodeSync(Class as any)(made))
      // no trace of where it was made: the name and the message, as an error made with an empty trace reads
      expect(fast.stack).toBe(`${made.name}: ${made.message}`)
      expect(inspect(fast)).toBe(inspect(made))
      expect(Equal.equals(fast, made)).toBe(Equal.equals(made, withoutTrace(() => new (Class as any)(fields))))
      expect(Cause.pretty(Cause.fail(fast))).toContain(made.message.split("\n")[0]!)
    })
  }

  it("an ArgumentProblem made fast equals one made by its constructor", () => {
    const fast = makeProblem(problems[0]!)
    const made = new ToolError.ArgumentProblem(problems[0]!)
    expect(fast).toBeInstanceOf(ToolError.ArgumentProblem)
    expect(descriptors(fast)).toEqual(descriptors(made))
    expect(Equal.equals(fast, made)).toBe(true)
  })

  it("errors made by their constructor keep their own stack", () => {
    const made = new ToolError.ToolNotFound({ tool: "x", available: [] })
    expect(Object.getOwnPropertyDescriptor(made, "stack")).toBeDefined()
    expect(made.stack).toContain("ToolError.make.test")
    const mcp = new McpClientError({ reason: "Closed", message: "closed" })
    expect(Object.getOwnPropertyDescriptor(mcp, "stack")).toBeDefined()
    expect(mcp.stack).toContain("ToolError.make.test")
  })
})
