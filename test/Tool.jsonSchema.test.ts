/**
 * Tools whose schema comes from elsewhere (`Tool.fromJsonSchema`, every `McpClient` and stdio-provider tool),
 * checked with Ajv: a hostile `pattern` cannot freeze the host, a schema is compiled on the tool's first call and
 * shared with every identical one, and a host refreshing tool lists keeps only what its live tools need (the
 * memory figures from a process of its own, `test/fixtures/ajv-refresh.ts`, with `--expose-gc`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as ChildProcess from "node:child_process"
import { McpClient, Tool, Toolkit, ToolSchema } from "../src/index.js"
import * as Ajv from "../src/internal/ajv.js"
import * as McpServer from "../src/McpServer.js"
import { fixture } from "./fixtures/compiled.js"

const CATASTROPHIC = "^(a+)+$"

/** 30 characters that make a backtracking engine try every way of splitting them: about 2^30 steps. */
const EVIL = "a".repeat(29) + "!"

const messageOf = (outcome: Either.Either<unknown, { readonly message: string }>): string =>
  Either.isLeft(outcome) ? outcome.left.message : "accepted"

const timed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const value = yield* self
    return { value, millis: performance.now() - started }
  })

describe("Tool.fromJsonSchema, checked with Ajv", () => {
  describe("patterns run in linear time", () => {
    it.scopedLive(
      "a remote server's ^(a+)+$ on 30 characters is answered at once, through McpClient",
      () =>
        Effect.gen(function*() {
          // the hostile server: it serves the pattern and checks nothing itself
          const Trap = Tool.fromJsonSchema("trap", {
            description: "Takes a name",
            parameters: { type: "object", properties: { name: { type: "string", pattern: CATASTROPHIC } } },
            validate: false,
            handler: () => Effect.succeed("reached the server")
          })
          const { url } = yield* McpServer.http(Toolkit.make(Trap), { name: "hostile", version: "1.0.0", port: 0 })
          const client = yield* McpClient.connect(McpClient.http(url))
          const remote = Option.getOrThrow(Toolkit.lookup(yield* client.toolkit, "trap"))
          const { millis, value } = yield* timed(Tool.execute(remote, { id: "c1", arguments: { name: EVIL } }))
          expect(messageOf(value)).toBe(
            `invalid arguments: name: expected a string matching /${CATASTROPHIC}/, got "${EVIL}"`
          )
          expect(millis).toBeLessThan(1000)
          const fine = yield* Tool.execute(remote, { id: "c2", arguments: { name: "aaa" } })
          expect(Either.isRight(fine)).toBe(true)
        }),
      { timeout: 120_000 }
    )

    it("patternProperties and propertyNames too", () => {
      const Keys = Tool.fromJsonSchema("keys", {
        description: "Keys by pattern",
        parameters: {
          type: "object",
          properties: {
            map: { type: "object", patternProperties: { [CATASTROPHIC]: { type: "integer" } } },
            names: { type: "object", propertyNames: { pattern: CATASTROPHIC } }
          }
        },
        handler: () => Effect.void
      })
      const started = performance.now()
      expect(messageOf(ToolSchema.decodeArguments(Keys, { map: { [EVIL.slice(0, -1)]: "x" } }))).toBe(
        `invalid arguments: map.${EVIL.slice(0, -1)}: expected an integer, got "x"`
      )
      expect(messageOf(ToolSchema.decodeArguments(Keys, { names: { [EVIL]: 1 } }))).toMatch(/^invalid arguments: names/)
      expect(performance.now() - started).toBeLessThan(1000)
    }, 120_000)

    it("a pattern RE2 cannot compile (a lookahead, a backreference) is not checked; the rest of the schema is", () => {
      const Odd = Tool.fromJsonSchema("odd", {
        description: "JavaScript-only patterns",
        parameters: {
          type: "object",
          properties: {
            email: { type: "string", pattern: "^(?!\\.)[a-z.]+@[a-z]+$" },
            twice: { type: "string", pattern: "^(a)\\1$" },
            count: { type: "integer" }
          }
        },
        handler: () => Effect.void
      })
      expect(messageOf(ToolSchema.decodeArguments(Odd, { email: ".x@y", twice: "ab" }))).toBe("accepted")
      expect(messageOf(ToolSchema.decodeArguments(Odd, { count: "1" }))).toBe(
        "invalid arguments: count: expected an integer, got \"1\""
      )
    })

    it("JavaScript syntax RE2 spells differently still works: \\u escapes, named groups", () => {
      const Js = Tool.fromJsonSchema("js", {
        description: "Patterns as JSON Schema writes them (ECMA-262)",
        parameters: {
          type: "object",
          properties: {
            accent: { type: "string", pattern: "^caf\\u00e9$" },
            year: { type: "string", pattern: "^(?<year>[0-9]{4})$" }
          }
        },
        handler: () => Effect.void
      })
      expect(messageOf(ToolSchema.decodeArguments(Js, { accent: "café", year: "2026" }))).toBe("accepted")
      expect(messageOf(ToolSchema.decodeArguments(Js, { accent: "cafe" }))).toMatch(/^invalid arguments: accent/)
      expect(messageOf(ToolSchema.decodeArguments(Js, { year: "26" }))).toMatch(/^invalid arguments: year/)
    })
  })

  describe("compiled on first use, shared by identical schemas", () => {
    const schema = (description: string) => ({
      type: "object",
      properties: { query: { type: "string", description, minLength: 1 }, limit: { type: "integer" } },
      required: ["query"]
    })

    it("making a tool compiles nothing; its first call compiles, and an identical schema reuses it", () => {
      const unique = `lazy ${Math.random()}`
      const before = Ajv.cachedValidators()
      const one = Tool.fromJsonSchema("one", {
        description: "One",
        parameters: schema(unique),
        handler: () => Effect.void
      })
      // the same schema as another object, its keys in another order: what a refreshed tools/list gives
      const { properties, required, type } = schema(unique)
      const two = Tool.fromJsonSchema("two", {
        description: "Two",
        parameters: { required, properties, type },
        handler: () => Effect.void
      })
      expect(Ajv.cachedValidators()).toBe(before)
      expect(messageOf(ToolSchema.decodeArguments(one, { query: "" }))).toBe(
        "invalid arguments: query: expected a string of at least 1 character, got \"\""
      )
      expect(Ajv.cachedValidators()).toBe(before + 1)
      expect(messageOf(ToolSchema.decodeArguments(two, { query: "" }))).toBe(
        "invalid arguments: query: expected a string of at least 1 character, got \"\""
      )
      expect(Ajv.cachedValidators()).toBe(before + 1)
    })

    it.effect("a schema valid but not compilable (a $ref to nothing) fails its calls as a defect, one line", () =>
      Effect.gen(function*() {
        const Dangling = Tool.fromJsonSchema("dangling", {
          description: "A reference to nothing",
          parameters: { type: "object", properties: { a: { $ref: "#/$defs/Missing" } } },
          handler: () => Effect.void
        })
        const outcome = yield* Tool.execute(Dangling, { id: "c1", arguments: { a: 1 } })
        expect(messageOf(outcome)).toMatch(
          /^tool "dangling" panicked: checking the arguments failed: can't resolve reference #\/\$defs\/Missing/
        )
      }))
  })

  describe("memory", () => {
    const growthOf = (env: Record<string, string>): number => {
      const run = ChildProcess.spawnSync(process.execPath, ["--expose-gc", fixture("ajv-refresh")], {
        env: { ...process.env, ...env },
        encoding: "utf8",
        timeout: 200_000
      })
      if (run.status !== 0) throw new Error(`the fixture failed: ${run.stderr}`)
      return JSON.parse(run.stdout).growth
    }
    const MB = 1024 * 1024

    it("40 refreshes of the same 500-tool list keep nothing more than the first (365 MB more before)", () => {
      expect(growthOf({ TOOLS: "500", REFRESHES: "40" })).toBeLessThan(2 * MB)
    }, 240_000)

    it(
      "40 refreshes that change every schema stay within the shared cache's bound (27 MB, and growing, without it)",
      () => {
        // 1,200 validators compiled, twice what the cache holds: the growth has levelled off at the bound (12 MB)
        expect(growthOf({ TOOLS: "30", REFRESHES: "40", CHANGING: "1" })).toBeLessThan(18 * MB)
      },
      240_000
    )
  })
})
