import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { Tool, ToolError, ToolResult, ToolSchema } from "../src/index.js"

type Json = { readonly [key: string]: unknown }

const project = (fields: Schema.Struct.Fields, target: ToolSchema.Target = "standard"): Json =>
  ToolSchema.jsonSchema(Schema.Struct(fields) as unknown as Schema.Schema.AnyNoContext, { target })

const propertiesOf = (schema: Json): Json => schema.properties as Json

/** Every sub-schema of a JSON Schema, with its path (property names are map keys, never schema keywords). */
const subSchemas = (schema: unknown, path = "#"): Array<[string, Json]> => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return []
  const out: Array<[string, Json]> = [[path, schema as Json]]
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" || key === "$defs" || key === "patternProperties") {
      for (const [name, sub] of Object.entries(value as Json)) out.push(...subSchemas(sub, `${path}/${key}/${name}`))
    } else if (key === "anyOf" || key === "prefixItems" || key === "allOf") {
      const members = value as Array<unknown>
      members.forEach((sub, i) => out.push(...subSchemas(sub, `${path}/${key}/${i}`)))
    } else if (key === "items" || key === "additionalProperties" || key === "propertyNames" || key === "not") {
      out.push(...subSchemas(value, `${path}/${key}`))
    }
  }
  return out
}

const noop = () => Effect.succeed("")

const failureText = (result: Either.Either<unknown, ToolError.ToolError>): string =>
  Either.isLeft(result) ? ToolError.toModelText(result.left) : "accepted"

interface Category {
  readonly name: string
  readonly subcategories: ReadonlyArray<Category>
}
const Category = Schema.Struct({
  name: Schema.String,
  subcategories: Schema.Array(Schema.suspend((): Schema.Schema<Category> => Category))
}).annotations({ identifier: "Category" })

const CategoryBody = {
  type: "object",
  properties: {
    name: { type: "string" },
    subcategories: { type: "array", items: { $ref: "#/$defs/Category" } }
  },
  required: ["name", "subcategories"],
  additionalProperties: false
}

class Person extends Schema.Class<Person>("Person")({
  name: Schema.String.annotations({ description: "full name" }),
  age: Schema.optional(Schema.Int)
}, { description: "someone the tool acts for" }) {}

enum Color {
  Red = "red",
  Green = "green"
}
enum Level {
  Low,
  High
}

/** A schema with a bit of everything, for the rules that hold everywhere. */
const Everything = {
  path: Schema.String.annotations({ description: "where" }),
  count: Schema.Int.pipe(Schema.between(0, 10)),
  name: Schema.NonEmptyString,
  when: Schema.optional(Schema.Date),
  mode: Schema.optional(Schema.Literal("fast", "slow")),
  color: Schema.Enums(Color),
  email: Schema.NullOr(Schema.String),
  owner: Person,
  address: Schema.Struct({ city: Schema.String }).annotations({ identifier: "Address", title: "Address" }),
  edits: Schema.Array(Schema.Struct({ line: Schema.Int, text: Schema.optional(Schema.String) })),
  shape: Schema.Union(
    Schema.TaggedStruct("circle", { radius: Schema.Number }),
    Schema.TaggedStruct("square", { side: Schema.Number })
  ),
  amount: Schema.NumberFromString,
  retries: Schema.optionalWith(Schema.Int, { default: () => 3 })
}

describe("ToolSchema", () => {
  describe("standard", () => {
    it("serves an object root with type, properties and required even for a tool without parameters", () => {
      const empty = { type: "object", properties: {}, required: [], additionalProperties: false }
      const NoParameters = Tool.make("no_parameters", { description: "nothing to fill in", handler: noop })
      expect(ToolSchema.jsonSchema(NoParameters)).toEqual(empty)
      expect(ToolSchema.jsonSchema(Schema.Struct({}))).toEqual(empty)
      expect(ToolSchema.jsonSchema(NoParameters, { target: "openai-strict" })).toEqual(empty)
      expect(ToolSchema.jsonSchema(NoParameters, { target: "gemini" })).toEqual({
        type: "object",
        properties: {},
        required: []
      })
    })

    it("keeps required present when every property is optional", () => {
      expect(project({ limit: Schema.optional(Schema.Int) })).toMatchObject({ type: "object", required: [] })
    })

    it("writes no $schema, $id or title anywhere, not even the auto title of Int or a user's title", () => {
      for (const target of ["standard", "openai-strict", "gemini"] as const) {
        const schema = project(Everything, target)
        for (const [path, sub] of subSchemas(schema)) {
          expect(sub, `${target} ${path}`).not.toHaveProperty("$schema")
          expect(sub, `${target} ${path}`).not.toHaveProperty("$id")
          expect(sub, `${target} ${path}`).not.toHaveProperty("title")
        }
        expect(JSON.stringify(schema)).not.toContain("\"int\"")
      }
    })

    it("keeps descriptions written on a field's schema, on a property signature and on a Class", () => {
      const schema = project({
        path: Schema.String.annotations({ description: "Absolute path to read" }),
        depth: Schema.propertySignature(Schema.Number).annotations({ description: "how deep to go" }),
        limit: Schema.optional(Schema.Int).annotations({ description: "at most this many" }),
        owner: Person
      })
      expect(propertiesOf(schema)).toEqual({
        path: { type: "string", description: "Absolute path to read" },
        depth: { type: "number", description: "how deep to go" },
        limit: { type: "integer", description: "at most this many" },
        owner: {
          type: "object",
          properties: {
            name: { type: "string", description: "full name" },
            age: { type: "integer", description: "an integer" }
          },
          required: ["name"],
          additionalProperties: false,
          description: "someone the tool acts for"
        }
      })
      expect(ToolSchema.jsonSchema(Person)).toMatchObject({ description: "someone the tool acts for" })
    })

    it("leaves out the built-in description of a plain keyword", () => {
      expect(propertiesOf(project({ s: Schema.String, n: Schema.Number, b: Schema.Boolean }))).toEqual({
        s: { type: "string" },
        n: { type: "number" },
        b: { type: "boolean" }
      })
    })

    it("inlines named sub-schemas: an identifier-annotated Struct and a Class used as a field", () => {
      const Address = Schema.Struct({ city: Schema.String }).annotations({ identifier: "Address" })
      const schema = project({ home: Address, work: Schema.optional(Address), owner: Person })
      expect(schema).not.toHaveProperty("$defs")
      expect(JSON.stringify(schema)).not.toContain("$ref")
      const address = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
      expect(propertiesOf(schema).home).toMatchObject(address)
      expect(propertiesOf(schema).work).toMatchObject(address)
      expect(propertiesOf(schema).owner).toMatchObject({ type: "object", required: ["name"] })
    })

    it("keeps $ref and $defs for recursion at the root", () => {
      expect(ToolSchema.jsonSchema(Category)).toEqual({ ...CategoryBody, $defs: { Category: CategoryBody } })
    })

    it("keeps $ref and $defs for recursion under a field, and only there", () => {
      const schema = project({ tree: Category, label: Schema.Struct({ text: Schema.String }) })
      expect(schema).toEqual({
        type: "object",
        properties: {
          tree: { $ref: "#/$defs/Category" },
          label: {
            type: "object",
            properties: { text: { type: "string" } },
            required: ["text"],
            additionalProperties: false
          }
        },
        required: ["tree", "label"],
        additionalProperties: false,
        $defs: { Category: CategoryBody }
      })
    })

    it("leaves optional fields out of required and serves NullOr as anyOf [T, null]", () => {
      const schema = project({
        path: Schema.String,
        limit: Schema.optional(Schema.Int),
        exact: Schema.optionalWith(Schema.String, { exact: true }),
        email: Schema.NullOr(Schema.String)
      })
      expect(schema.required).toEqual(["path", "email"])
      expect(propertiesOf(schema).email).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] })
      expect(propertiesOf(schema).exact).toEqual({ type: "string" })
    })

    it("serves literals and Enums as one flat enum", () => {
      expect(propertiesOf(project({
        mode: Schema.Literal("fast", "slow"),
        level: Schema.Literal(1, 2, 3),
        on: Schema.Literal(true),
        color: Schema.Enums(Color),
        priority: Schema.Enums(Level)
      }))).toEqual({
        mode: { type: "string", enum: ["fast", "slow"] },
        level: { type: "integer", enum: [1, 2, 3] },
        on: { type: "boolean", enum: [true] },
        color: { type: "string", enum: ["red", "green"] },
        priority: { type: "integer", enum: [0, 1] }
      })
    })

    it("serves arrays as items and nested structs as closed objects", () => {
      expect(propertiesOf(project({
        tags: Schema.Array(Schema.String),
        options: Schema.Struct({
          depth: Schema.Int.pipe(Schema.between(0, 5)),
          follow: Schema.optional(Schema.Boolean)
        })
      }))).toEqual({
        tags: { type: "array", items: { type: "string" } },
        options: {
          type: "object",
          properties: {
            depth: { type: "integer", description: "a number between 0 and 5", minimum: 0, maximum: 5 },
            follow: { type: "boolean" }
          },
          required: ["depth"],
          additionalProperties: false
        }
      })
    })

    it("serves a record as additionalProperties: <value schema>", () => {
      expect(propertiesOf(project({ headers: Schema.Record({ key: Schema.String, value: Schema.Number }) }))).toEqual({
        headers: { type: "object", properties: {}, required: [], additionalProperties: { type: "number" } }
      })
    })

    it("serves unions and tagged unions as anyOf", () => {
      expect(propertiesOf(project({
        value: Schema.Union(Schema.String, Schema.Number),
        shape: Schema.Union(
          Schema.TaggedStruct("circle", { radius: Schema.Number }),
          Schema.TaggedStruct("square", { side: Schema.Number })
        )
      }))).toEqual({
        value: { anyOf: [{ type: "string" }, { type: "number" }] },
        shape: {
          anyOf: [
            {
              type: "object",
              properties: { _tag: { type: "string", enum: ["circle"] }, radius: { type: "number" } },
              required: ["_tag", "radius"],
              additionalProperties: false
            },
            {
              type: "object",
              properties: { _tag: { type: "string", enum: ["square"] }, side: { type: "number" } },
              required: ["_tag", "side"],
              additionalProperties: false
            }
          ]
        }
      })
    })

    it("serves refinements as keywords: Int as integer, minLength, between as minimum/maximum, pattern", () => {
      const properties = propertiesOf(project({
        count: Schema.Int,
        name: Schema.String.pipe(Schema.minLength(2)),
        ratio: Schema.Number.pipe(Schema.between(0, 1)),
        code: Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))
      }))
      expect(properties.count).toMatchObject({ type: "integer" })
      expect(properties.name).toMatchObject({ type: "string", minLength: 2 })
      expect(properties.ratio).toMatchObject({ type: "number", minimum: 0, maximum: 1 })
      expect(properties.code).toMatchObject({ type: "string", pattern: "^[A-Z]{3}$" })
    })

    it("keeps the stricter bound when refinements stack", () => {
      const count = propertiesOf(project({ count: Schema.Int.pipe(Schema.between(0, 10), Schema.between(2, 20)) }))
        .count
      expect(count).toMatchObject({ type: "integer", minimum: 2, maximum: 10 })
    })

    it("serves Schema.Date and Schema.DateFromString as date-time strings", () => {
      expect(propertiesOf(project({ when: Schema.Date, since: Schema.DateFromString }))).toEqual({
        when: { type: "string", format: "date-time" },
        since: { type: "string", format: "date-time" }
      })
    })

    it("serves a transformation's encoded side: NumberFromString as a numeric string, a default as optional", () => {
      const schema = project({
        amount: Schema.NumberFromString,
        retries: Schema.optionalWith(Schema.Int, { default: () => 3 }).annotations({ description: "how often" })
      })
      expect(schema.required).toEqual(["amount"])
      const amount = propertiesOf(schema).amount as Json
      expect(amount).toMatchObject({ type: "string", description: "a string to be decoded into a number" })
      expect(propertiesOf(schema).retries).toEqual({ type: "integer", description: "how often" })
      // the pattern admits what String(n) writes and only what Number(s) reads
      const pattern = new RegExp(amount.pattern as string)
      for (const ok of ["12", "-1.5", "1e+21", "2.5e-7", ".5", "NaN", "-Infinity"]) expect(ok).toMatch(pattern)
      for (const bad of ["", "abc", "1e", "12px", "--1", "0x1G"]) expect(bad).not.toMatch(pattern)
    })

    it("serves NumberFromString with its pattern even when annotated, and BigInt as an integer string", () => {
      const properties = propertiesOf(project({
        amount: Schema.NumberFromString.annotations({ description: "in cents" }),
        id: Schema.BigInt
      }))
      expect(properties.amount).toMatchObject({ type: "string", description: "in cents", pattern: expect.any(String) })
      expect(properties.id).toMatchObject({ type: "string", pattern: "^[+-]?[0-9]+$" })
    })

    it("serves a Schema.Class as parameters by its fields", () => {
      const Greet = Tool.make("greet", { description: "greet someone", parameters: Person, handler: noop })
      expect(ToolSchema.jsonSchema(Greet)).toEqual({
        type: "object",
        properties: {
          name: { type: "string", description: "full name" },
          age: { type: "integer", description: "an integer" }
        },
        required: ["name"],
        additionalProperties: false,
        description: "someone the tool acts for"
      })
    })

    it("gives a tool's projection and its parameters schema's projection alike, and caches the tool's", () => {
      const Read = Tool.make("read", { description: "read", parameters: Everything, handler: noop })
      for (const target of ["standard", "openai-strict"] as const) {
        expect(ToolSchema.jsonSchema(Read, { target })).toEqual(project(Everything, target))
        expect(ToolSchema.jsonSchema(Read, { target })).toBe(ToolSchema.jsonSchema(Read, { target }))
      }
      expect(ToolSchema.jsonSchema(Read)).toBe(Read.inputSchema)
    })

    it("refuses a union at the root when the tool is made", () => {
      expect(() =>
        Tool.make("either", {
          description: "one or the other",
          parameters: Schema.Union(Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String })),
          handler: noop
        })
      ).toThrow(
        "tool \"either\": parameters cannot be served as JSON Schema: parameters must be an object schema (Struct " +
          "fields, a Struct, or a Class); a union or a primitive cannot be the root of a tool's arguments"
      )
    })

    it("refuses a DateFromSelf field when the tool is made, naming the field", () => {
      expect(() =>
        Tool.make("schedule", {
          description: "schedule",
          parameters: { options: Schema.Struct({ when: Schema.DateFromSelf }) },
          handler: noop
        })
      ).toThrow(/^tool "schedule": parameters cannot be served as JSON Schema: at options\.when: a value of type/)
    })

    it("names the offending path on UnsupportedSchemaError", () => {
      try {
        project(
          { options: Schema.Struct({ headers: Schema.Record({ key: Schema.String, value: Schema.String }) }) },
          "openai-strict"
        )
        expect.unreachable()
      } catch (error) {
        expect(error).toBeInstanceOf(ToolSchema.UnsupportedSchemaError)
        expect((error as ToolSchema.UnsupportedSchemaError).path).toBe("options.headers")
      }
    })
  })

  describe("openai-strict", () => {
    it("lists every property in required and makes optional ones anyOf [T, null]", () => {
      expect(project({
        path: Schema.String.annotations({ description: "where" }),
        limit: Schema.optional(Schema.Int).annotations({ description: "how many" }),
        options: Schema.optional(Schema.Struct({ depth: Schema.Int }))
      }, "openai-strict")).toEqual({
        type: "object",
        properties: {
          path: { type: "string", description: "where" },
          limit: { anyOf: [{ type: "integer" }, { type: "null" }], description: "how many" },
          options: {
            anyOf: [
              {
                type: "object",
                properties: { depth: { type: "integer", description: "an integer" } },
                required: ["depth"],
                additionalProperties: false
              },
              { type: "null" }
            ]
          }
        },
        required: ["path", "limit", "options"],
        additionalProperties: false
      })
    })

    it("serves an optional enum as {type: [T, null], enum: [..., null]}, null last", () => {
      expect(propertiesOf(project({
        mode: Schema.optional(Schema.Literal("fast", "slow")),
        color: Schema.optional(Schema.Enums(Color)),
        level: Schema.optional(Schema.Enums(Level))
      }, "openai-strict"))).toEqual({
        mode: { type: ["string", "null"], enum: ["fast", "slow", null] },
        color: { type: ["string", "null"], enum: ["red", "green", null] },
        level: { type: ["integer", "null"], enum: [0, 1, null] }
      })
    })

    it("keeps a NullOr field as it is: required, with null last", () => {
      expect(propertiesOf(project({ email: Schema.NullOr(Schema.String) }, "openai-strict"))).toEqual({
        email: { anyOf: [{ type: "string" }, { type: "null" }] }
      })
    })

    it("puts additionalProperties: false on every object, nested, in array items and in $defs", () => {
      for (const schema of [project(Everything, "openai-strict"), project({ tree: Category }, "openai-strict")]) {
        const objects = subSchemas(schema).filter(([, sub]) =>
          sub.type === "object" || (Array.isArray(sub.type) && sub.type.includes("object"))
        )
        expect(objects.length).toBeGreaterThan(1)
        for (const [path, sub] of objects) {
          expect(sub.additionalProperties, path).toBe(false)
          expect(sub.required, path).toEqual(Object.keys(sub.properties as Json))
        }
      }
    })

    it("leaves out minLength, maxLength, default and examples", () => {
      const schema = project({
        name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20)).annotations({
          description: "who",
          default: "anonymous",
          examples: ["Ada"]
        })
      }, "openai-strict")
      expect(propertiesOf(schema).name).toEqual({ type: "string", description: "who" })
      expect(propertiesOf(project({ name: Schema.NonEmptyString })).name).toMatchObject({ minLength: 1 })
    })

    it("refuses a record, naming its path", () => {
      expect(() => project({ headers: Schema.Record({ key: Schema.String, value: Schema.String }) }, "openai-strict"))
        .toThrow(
          "at headers: a record (an object with arbitrary keys) is refused under strict mode; use a struct or an " +
            "array of entries"
        )
      expect(() =>
        Tool.make("fetch", {
          description: "fetch",
          strict: true,
          parameters: {
            request: Schema.Struct({ headers: Schema.Record({ key: Schema.String, value: Schema.String }) })
          },
          handler: noop
        })
      ).toThrow("at request.headers: a record")
    })

    it("refuses tuples and Schema.Unknown", () => {
      expect(() => project({ pair: Schema.Tuple(Schema.String, Schema.Number) }, "openai-strict")).toThrow(
        "at pair: a tuple is refused under strict mode; use an array or a struct"
      )
      expect(() => project({ anything: Schema.Unknown }, "openai-strict")).toThrow(
        "at anything: an unconstrained value (Schema.Unknown) is refused under strict mode"
      )
    })

    it("keeps recursion as $ref with strict $defs", () => {
      const schema = project({ tree: Schema.optional(Category) }, "openai-strict")
      expect(propertiesOf(schema).tree).toEqual({ anyOf: [{ $ref: "#/$defs/Category" }, { type: "null" }] })
      expect(schema.$defs).toEqual({ Category: CategoryBody })
    })

    const Search = Tool.make("search", {
      description: "search",
      strict: true,
      parameters: {
        query: Schema.String,
        limit: Schema.optional(Schema.Int),
        email: Schema.NullOr(Schema.String),
        filters: Schema.optional(
          Schema.Array(Schema.Struct({ field: Schema.String, value: Schema.optional(Schema.String) }))
        )
      },
      handler: (params) =>
        Effect.succeed({
          hasLimit: "limit" in params,
          email: params.email,
          filters: params.filters?.map((filter) => ({ hasValue: "value" in filter, value: filter.value ?? "" }))
        })
    })

    it.effect("maps null back to absent for an optional field of a strict tool", () =>
      Effect.gen(function*() {
        const result = yield* Tool.execute(Search, {
          id: "call_1",
          arguments: "{\"query\": \"q\", \"limit\": null, \"email\": \"a@b.c\", \"filters\": null}"
        })
        expect(Either.map(result, (r) => r.structured)).toEqual(Either.right({ hasLimit: false, email: "a@b.c" }))
        expect(ToolSchema.decodeArguments(Search, { query: "q", limit: null, email: null, filters: null })).toEqual(
          Either.right({ query: "q", email: null })
        )
      }))

    it.effect("maps null back to absent inside an array of structs", () =>
      Effect.gen(function*() {
        const result = yield* Tool.execute(Search, {
          id: "call_1",
          arguments: {
            query: "q",
            limit: 3,
            email: null,
            filters: [{ field: "a", value: null }, { field: "b", value: "x" }]
          }
        })
        expect(Either.map(result, (r) => r.structured)).toEqual(Either.right({
          hasLimit: true,
          email: null,
          filters: [{ hasValue: false, value: "" }, { hasValue: true, value: "x" }]
        }))
      }))

    it("keeps the null of a NullOr field and does not touch the caller's arguments", () => {
      const args = { query: "q", limit: null, email: null }
      expect(ToolSchema.decodeArguments(Search, args)).toEqual(Either.right({ query: "q", email: null }))
      expect(args).toEqual({ query: "q", limit: null, email: null })
    })

    it("refuses null for an optional field of a tool that is not strict", () => {
      const Lenient = Tool.make("lenient", {
        description: "not strict",
        parameters: { limit: Schema.optional(Schema.Int) },
        handler: noop
      })
      expect(failureText(ToolSchema.decodeArguments(Lenient, "{\"limit\": null}"))).toBe(
        "Error: invalid arguments: limit: expected an integer, got null"
      )
    })
  })

  describe("gemini", () => {
    it("serves nullable values as nullable: true", () => {
      expect(propertiesOf(project({
        email: Schema.NullOr(Schema.String).annotations({ description: "contact" }),
        mode: Schema.NullOr(Schema.Literal("fast", "slow"))
      }, "gemini"))).toEqual({
        email: { type: "string", nullable: true, description: "contact" },
        mode: { type: "string", enum: ["fast", "slow"], nullable: true }
      })
    })

    it("writes no additionalProperties anywhere", () => {
      const schema = project(Everything, "gemini")
      for (const [path, sub] of subSchemas(schema)) expect(sub, path).not.toHaveProperty("additionalProperties")
      expect(schema.required).toEqual([
        "path",
        "count",
        "name",
        "color",
        "email",
        "owner",
        "address",
        "edits",
        "shape",
        "amount"
      ])
    })

    it("refuses recursion, at the root and under a field", () => {
      expect(() => ToolSchema.jsonSchema(Category, { target: "gemini" })).toThrow(
        "a recursive schema is refused for Gemini, which has no $ref"
      )
      expect(() => project({ tree: Category }, "gemini")).toThrow(ToolSchema.UnsupportedSchemaError)
    })

    it("refuses a record instead of serving an object with no properties", () => {
      expect(() => project({ headers: Schema.Record({ key: Schema.String, value: Schema.String }) }, "gemini")).toThrow(
        "at headers: a record (an object with arbitrary keys) is refused for Gemini"
      )
    })

    it("refuses an open object with no properties from a raw JSON Schema", () => {
      const Raw = Tool.fromJsonSchema("raw", {
        description: "raw",
        parameters: {
          type: "object",
          properties: { meta: { type: "object", additionalProperties: true } },
          required: ["meta"]
        },
        handler: () => Effect.succeed("")
      })
      expect(() => ToolSchema.jsonSchema(Raw, { target: "gemini" })).toThrow(
        "at meta: a record (an object with arbitrary keys) is refused for Gemini"
      )
    })

    it("moves the values of a non-string enum into the description, since Gemini takes enum on strings only", () => {
      expect(propertiesOf(project({
        level: Schema.Literal(1, 2, 3),
        priority: Schema.Enums(Level).annotations({ description: "how urgent" }),
        mode: Schema.Literal("fast", "slow")
      }, "gemini"))).toEqual({
        level: { type: "integer", description: "one of 1, 2, 3" },
        priority: { type: "integer", description: "how urgent (one of 0, 1)" },
        mode: { type: "string", enum: ["fast", "slow"] }
      })
    })

    it("refuses tuples and Schema.Unknown", () => {
      expect(() => project({ pair: Schema.Tuple(Schema.String, Schema.Number) }, "gemini")).toThrow("at pair: a tuple")
      expect(() => project({ anything: Schema.Unknown }, "gemini")).toThrow("at anything: an unconstrained value")
    })
  })

  describe("documented gaps", () => {
    const Named = Tool.make("named", {
      description: "named",
      parameters: { name: Schema.Trim.pipe(Schema.minLength(1)) },
      handler: ({ name }) => Effect.succeed(name)
    })

    it("serves Trim then minLength without minLength, a constraint on the decoded side", () => {
      expect(propertiesOf(ToolSchema.jsonSchema(Named)).name).toEqual({
        type: "string",
        description: "a string that will be trimmed"
      })
    })

    it.effect("still refuses a blank string for Trim then minLength, with an invalid arguments line", () =>
      Effect.gen(function*() {
        expect(failureText(ToolSchema.decodeArguments(Named, { name: "   " }))).toBe(
          "Error: invalid arguments: name: expected a string of at least 1 character, got \"   \""
        )
        const ok = yield* Tool.execute(Named, { id: "call_1", arguments: { name: "  Ada " } })
        expect(Either.map(ok, ToolResult.toText)).toEqual(Either.right("Ada"))
      }))

    it("serves Int as integer while the decoder also wants it within ±(2^53 - 1)", () => {
      const Count = Tool.make("count", { description: "count", parameters: { n: Schema.Int }, handler: noop })
      expect(propertiesOf(ToolSchema.jsonSchema(Count)).n).toEqual({ type: "integer", description: "an integer" })
      expect(failureText(ToolSchema.decodeArguments(Count, "{\"n\": 1e20}"))).toBe(
        "Error: invalid arguments: n: expected an integer, got 100000000000000000000"
      )
    })

    it("counts string length in UTF-16 units where JSON Schema counts code points", () => {
      const Short = Tool.make("short", {
        description: "short",
        parameters: { s: Schema.String.pipe(Schema.maxLength(1)) },
        handler: noop
      })
      expect(propertiesOf(ToolSchema.jsonSchema(Short)).s).toMatchObject({ maxLength: 1 })
      // one code point (what a JSON Schema validator counts), two UTF-16 units (what the decoder counts)
      expect(Either.isLeft(ToolSchema.decodeArguments(Short, { s: "\u{1F600}" }))).toBe(true)
    })

    it("refuses a leap second that format date-time admits", () => {
      const At = Tool.make("at", { description: "at", parameters: { when: Schema.Date }, handler: noop })
      expect(Either.isLeft(ToolSchema.decodeArguments(At, { when: "2016-12-31T23:59:60Z" }))).toBe(true)
      expect(Either.isRight(ToolSchema.decodeArguments(At, { when: "2016-12-31T23:59:59Z" }))).toBe(true)
    })

    it("refuses a __proto__ key that a record's schema admits", () => {
      const Tags = Tool.make("tags", {
        description: "tags",
        parameters: { tags: Schema.Record({ key: Schema.String, value: Schema.String }) },
        handler: noop
      })
      expect(failureText(ToolSchema.decodeArguments(Tags, "{\"tags\": {\"__proto__\": \"x\"}}"))).toBe(
        "Error: invalid arguments: \"__proto__\" is not allowed as a property name"
      )
    })
  })
})
