/**
 * `Tool.elicit` against the `Elicitor` it finds: the form a schema becomes (MCP's restricted JSON Schema: flat,
 * primitives, defaults, every kind of choice), the answer decoded (defaults filled in), every kind of result,
 * `Cancel` with nobody to ask, the errors; and the `agent-tools call` terminal `Elicitor` on a scripted terminal.
 * Over MCP (both ends) it is in McpServer.inCall.test.ts and McpClient.elicitation.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Cause, Effect, Either, Exit, Schema } from "effect"
import { PassThrough } from "node:stream"
import { terminalElicitor } from "../src/cli/commands.js"
import { Elicitation, Tool, ToolError, ToolResult } from "../src/index.js"

/** An Elicitor that records what it is asked and gives one answer. */
const answering = (answer: Elicitation.Result<Elicitation.Content>) => {
  const asked: Array<Elicitation.Request> = []
  const layer = Elicitation.layer((request) =>
    Effect.sync(() => {
      asked.push(request)
      return answer
    })
  )
  return { asked, layer }
}

const Profile = {
  name: Schema.String.annotations({ title: "Name", description: "Your full name" }),
  age: Schema.optionalWith(Schema.Int.annotations({ title: "Age" }), { default: () => 30 }),
  score: Schema.Number.pipe(Schema.between(0, 100), Schema.annotations({ default: 95.5 })),
  verified: Schema.optional(Schema.Boolean)
}

/** The message of a defect: what a programmer error reads like. */
const defectOf = <A, E>(exit: Exit.Exit<A, E>): string => {
  if (Exit.isSuccess(exit)) return "no defect"
  const defect = Cause.dieOption(exit.cause)
  return defect._tag === "Some" && defect.value instanceof Error ? defect.value.message : Cause.pretty(exit.cause)
}

describe("Tool.elicit", () => {
  describe("the answer", () => {
    it.effect("with nobody to ask, the answer is Cancel, never Decline", () =>
      Effect.gen(function*() {
        expect(yield* Tool.elicit({ message: "Who?", schema: Profile })).toEqual(Elicitation.cancel)
        expect(yield* Tool.elicit({ message: "Sign in", url: "https://example.com" })).toEqual(Elicitation.cancel)
        expect(yield* Tool.elicit({ message: "Go ahead?" })).toEqual(Elicitation.cancel)
      }))

    it.effect("an accepted form is decoded by the schema; a field left out takes its default", () =>
      Effect.gen(function*() {
        const { layer } = answering(Elicitation.accept({ name: "Ada", verified: true }))
        const result = yield* Effect.provide(Tool.elicit({ message: "Who?", schema: Profile }), layer)
        expect(result).toEqual(Elicitation.accept({ name: "Ada", age: 30, score: 95.5, verified: true }))
      }))

    it.effect("what the user typed wins over a default", () =>
      Effect.gen(function*() {
        const { layer } = answering(Elicitation.accept({ name: "Ada", age: 36, score: 12 }))
        const result = yield* Effect.provide(Tool.elicit({ message: "Who?", schema: Profile }), layer)
        expect(result).toEqual(Elicitation.accept({ name: "Ada", age: 36, score: 12 }))
      }))

    it.effect("decline and cancel are given back as they came", () =>
      Effect.gen(function*() {
        const declined = answering(Elicitation.decline)
        expect(yield* Effect.provide(Tool.elicit({ message: "Who?", schema: Profile }), declined.layer))
          .toEqual(Elicitation.decline)
        const cancelled = answering(Elicitation.cancel)
        expect(yield* Effect.provide(Tool.elicit({ message: "Who?", schema: Profile }), cancelled.layer))
          .toEqual(Elicitation.cancel)
      }))

    it.effect("an answer that does not decode is an ElicitationError, worded like an argument check", () =>
      Effect.gen(function*() {
        const { layer } = answering(Elicitation.accept({ age: 3.5, score: 101 }))
        const error = yield* Effect.flip(Effect.provide(Tool.elicit({ message: "Who?", schema: Profile }), layer))
        expect(error._tag).toBe("ElicitationError")
        expect(error.message).toBe(
          "the answer does not match the form: name: missing required property, expected a string; " +
            "age: expected an integer, got 3.5; score: expected a number between 0 and 100, got 101"
        )
      }))

    it.effect("a page: the Elicitor gets the URL; accepting gives no content", () =>
      Effect.gen(function*() {
        const { asked, layer } = answering(Elicitation.accept({ ignored: "yes" }))
        const result = yield* Effect.provide(Tool.elicit({ message: "Sign in", url: "https://example.com/a" }), layer)
        expect(result).toEqual(Elicitation.accept(undefined))
        expect(asked).toEqual([{ message: "Sign in", mode: "url", url: "https://example.com/a" }])
      }))

    it.effect("a confirmation is a form of no fields, and accepting gives no content", () =>
      Effect.gen(function*() {
        const { asked, layer } = answering(Elicitation.accept({}))
        expect(yield* Effect.provide(Tool.elicit({ message: "Go ahead?" }), layer)).toEqual(
          Elicitation.accept(undefined)
        )
        expect(asked).toEqual([{
          message: "Go ahead?",
          mode: "form",
          requestedSchema: { type: "object", properties: {}, required: [] }
        }])
      }))

    it.effect("an Elicitor's failure is the handler's failure; in a call, its message is what the model reads", () =>
      Effect.gen(function*() {
        const broken = Elicitation.layer(() =>
          Effect.fail(new Elicitation.ElicitationError({ message: "the dialog could not open" }))
        )
        const Ask = Tool.make("ask", {
          description: "Ask a name",
          handler: () =>
            Effect.map(
              Tool.elicit({ message: "Who?", schema: { name: Schema.String } }),
              (answer) => answer._tag === "Accept" ? `hello ${answer.content.name}` : answer._tag
            )
        })
        const outcome = yield* Effect.provide(Tool.execute(Ask, { id: "1", arguments: {} }), broken)
        expect(Either.mapLeft(outcome, ToolError.toModelText)).toEqual(Either.left("Error: the dialog could not open"))
        const accepted = yield* Effect.provide(
          Tool.execute(Ask, { id: "2", arguments: {} }),
          answering(Elicitation.accept({ name: "Ada" })).layer
        )
        expect(Either.map(accepted, ToolResult.toText)).toEqual(Either.right("hello Ada"))
      }))
  })

  describe("the form", () => {
    const formOf = (schema: Tool.ParametersInput) =>
      Effect.gen(function*() {
        const { asked, layer } = answering(Elicitation.cancel)
        yield* Effect.provide(Tool.elicit({ message: "Fill in", schema }), layer)
        return asked[0].requestedSchema
      })

    it.effect("primitives with titles, descriptions, bounds, formats and defaults; required as the schema says", () =>
      Effect.gen(function*() {
        expect(
          yield* formOf({
            ...Profile,
            email: Schema.String.annotations({ jsonSchema: { type: "string", format: "email" } }),
            code: Schema.String.pipe(Schema.minLength(2), Schema.maxLength(8), Schema.pattern(/^[A-Z]+$/))
          })
        ).toEqual({
          type: "object",
          properties: {
            name: { type: "string", title: "Name", description: "Your full name" },
            age: { type: "integer", title: "Age", description: "an integer", default: 30 },
            score: {
              type: "number",
              description: "a number between 0 and 100",
              minimum: 0,
              maximum: 100,
              default: 95.5
            },
            verified: { type: "boolean" },
            email: { type: "string", format: "email" },
            // a form cannot carry a pattern: the description says it, the decoder checks it when the answer comes
            code: {
              type: "string",
              description: "a string matching the pattern ^[A-Z]+$",
              minLength: 2,
              maxLength: 8
            }
          },
          required: ["name", "score", "email", "code"]
        })
      }))

    it.effect("every kind of choice (SEP-1330): untitled, titled, legacy enumNames, and their multi-selects", () =>
      Effect.gen(function*() {
        const titled = Schema.Union(
          Schema.Literal("s").annotations({ title: "Small" }),
          Schema.Literal("l").annotations({ title: "Large" })
        )
        expect(
          yield* formOf({
            status: Schema.optionalWith(Schema.Literal("active", "inactive"), { default: () => "active" as const }),
            size: titled,
            legacy: Schema.Literal("a", "b").annotations({
              jsonSchema: { type: "string", enum: ["a", "b"], enumNames: ["Alpha", "Beta"] }
            }),
            tags: Schema.Array(Schema.Literal("x", "y")).pipe(Schema.maxItems(2)),
            sizes: Schema.optional(Schema.Array(titled))
          })
        ).toEqual({
          type: "object",
          properties: {
            status: { type: "string", enum: ["active", "inactive"], default: "active" },
            size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
            legacy: { type: "string", enum: ["a", "b"], enumNames: ["Alpha", "Beta"] },
            tags: {
              type: "array",
              description: "an array of at most 2 item(s)",
              maxItems: 2,
              items: { type: "string", enum: ["x", "y"] }
            },
            sizes: { type: "array", items: { anyOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] } }
          },
          required: ["size", "legacy", "tags"]
        })
      }))

    it.effect("a Struct or a Class works as well as fields", () =>
      Effect.gen(function*() {
        class Login extends Schema.Class<Login>("Login")({ user: Schema.String }) {}
        const expected = { type: "object", properties: { user: { type: "string" } }, required: ["user"] }
        expect(yield* formOf(Schema.Struct({ user: Schema.String }))).toEqual(expected)
        expect(yield* formOf(Login)).toEqual(expected)
      }))

    it.effect("a schema that cannot be a form is a defect naming the field", () =>
      Effect.gen(function*() {
        const attempt = (schema: Tool.ParametersInput) =>
          Effect.map(
            Effect.exit(
              Effect.provide(Tool.elicit({ message: "Fill in", schema }), answering(Elicitation.cancel).layer)
            ),
            defectOf
          )
        expect(yield* attempt({ address: Schema.Struct({ city: Schema.String }) })).toBe(
          "Tool.elicit: the schema cannot be asked as a form: \"address\": a form is flat: nested objects cannot be " +
            "asked; a form field is a string, a number, an integer, a boolean, a choice of strings (a union of string " +
            "literals) or several choices of strings (an array of string literals)"
        )
        expect(yield* attempt({ level: Schema.Literal(1, 2, 3) })).toContain(
          "\"level\": numeric choices cannot be asked"
        )
        expect(yield* attempt({ note: Schema.NullOr(Schema.String) })).toContain(
          "\"note\": a union other than a choice of string literals cannot be asked"
        )
        expect(yield* attempt({ lines: Schema.Array(Schema.String) })).toContain(
          "\"lines\": an array is asked only as several choices of strings"
        )
        expect(yield* attempt(Schema.Record({ key: Schema.String, value: Schema.String }))).toContain(
          "a record cannot be asked as a form"
        )
      }))

    it.effect("a page needs a URL, and a question is a form or a page, not both", () =>
      Effect.gen(function*() {
        expect(defectOf(yield* Effect.exit(Tool.elicit({ message: "Go", url: "not a url" })))).toBe(
          "Tool.elicit: \"not a url\" is not a URL"
        )
        const both = { message: "Go", url: "https://example.com", schema: { a: Schema.String } }
        expect(defectOf(yield* Effect.exit(Tool.elicit(both as never)))).toBe(
          "Tool.elicit: give a schema (a form) or a url (a page to open), not both"
        )
      }))
  })
})

// ---------------------------------------------------------------------------------------------------------------
// the terminal
// ---------------------------------------------------------------------------------------------------------------

/**
 * A terminal that types the next answer each time a prompt (a line ending in `: ` or `] `) is up, and ends its
 * input when it runs out of answers. Gives what was written on it.
 */
const scriptedTerminal = (answers: ReadonlyArray<string>, options: { readonly tty?: boolean } = {}) => {
  const input = Object.assign(new PassThrough(), { isTTY: options.tty ?? true })
  const output = Object.assign(new PassThrough(), { isTTY: options.tty ?? true })
  const queue = [...answers]
  let screen = ""
  output.on("data", (chunk: Buffer) => {
    screen += chunk.toString()
    if (/(: |\] )$/.test(screen)) {
      const next = queue.shift()
      setTimeout(() => (next === undefined ? input.end() : input.write(`${next}\n`)), 0)
    }
  })
  return { terminal: { input, output }, screen: () => screen }
}

const askOn = (
  layer: Layer.Layer<Elicitation.Elicitor>,
  request: Elicitation.Request
) => Effect.flatMap(Elicitation.Elicitor, (elicitor) => elicitor.elicit(request)).pipe(Effect.provide(layer))

const form: Elicitation.Request = {
  message: "About you",
  mode: "form",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Name" },
      age: { type: "integer", default: 30 },
      size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
      tags: { type: "array", items: { type: "string", enum: ["x", "y", "z"] } },
      subscribed: { type: "boolean" }
    },
    required: ["name", "size"]
  }
}

describe("the agent-tools terminal Elicitor", () => {
  it.live("without a terminal the answer is Cancel", () =>
    Effect.gen(function*() {
      const { terminal } = scriptedTerminal([], { tty: false })
      expect(yield* askOn(terminalElicitor(terminal), form)).toEqual(Elicitation.cancel)
    }))

  it.live("asks field by field: Enter keeps a default or skips, a choice by number, bad input asked again", () =>
    Effect.gen(function*() {
      const { screen, terminal } = scriptedTerminal(["", "Ada", "3.5", "", "2", "x, z", "maybe", "y", ""])
      const result = yield* askOn(terminalElicitor(terminal), form)
      expect(result).toEqual(
        Elicitation.accept({ name: "Ada", age: 30, size: "l", tags: ["x", "z"], subscribed: true })
      )
      expect(screen()).toBe(
        "About you\n" +
          "  Name [text]: " +
          "    this one is required\n" +
          "  Name [text]: " +
          "  age [a whole number, default 30]: " +
          "    type a whole number\n" +
          "  age [a whole number, default 30]: " +
          "  size [one of 1) Small, 2) Large]: " +
          "  tags [any of x, y, z, comma-separated, optional]: " +
          "  subscribed [y/n, optional]: " +
          "    answer y or n\n" +
          "  subscribed [y/n, optional]: " +
          "Send? [Y/n] "
      )
    }))

  it.live("n at the end declines; the end of input cancels", () =>
    Effect.gen(function*() {
      const declining = scriptedTerminal(["Ada", "", "Small", "", "", "n"])
      expect(yield* askOn(terminalElicitor(declining.terminal), form)).toEqual(Elicitation.decline)
      const leaving = scriptedTerminal(["Ada"])
      expect(yield* askOn(terminalElicitor(leaving.terminal), form)).toEqual(Elicitation.cancel)
    }))

  it.live("a page: shows the URL, y means done", () =>
    Effect.gen(function*() {
      const page: Elicitation.Request = { message: "Sign in", mode: "url", url: "https://example.com/login" }
      const { screen, terminal } = scriptedTerminal(["y"])
      expect(yield* askOn(terminalElicitor(terminal), page)).toEqual(Elicitation.accept({}))
      expect(screen()).toBe("Sign in\nOpen: https://example.com/login\nDone? [y/N] ")
      const refused = scriptedTerminal([""])
      expect(yield* askOn(terminalElicitor(refused.terminal), page)).toEqual(Elicitation.decline)
    }))
})
