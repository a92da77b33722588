/**
 * One Schema, correct projections: the JSON Schema of a tool's parameters as each provider wants it, and the check
 * of a model's arguments against the same schema.
 *
 * Targets:
 * - `"standard"`: JSON Schema draft 2020-12, what MCP serves. An object root with `type`, `properties` and
 *   `required` always present; no `$schema`, `$id` or auto-generated titles; descriptions kept; named sub-schemas
 *   inlined; `$ref`/`$defs` only for recursion. Transformations serve their encoded side (`Schema.Date` is a
 *   string with `format: "date-time"`, `NumberFromString` and `Schema.BigInt` strings with the `pattern` their
 *   decoder reads).
 * - `"openai-strict"`: every property in `required`, optional ones nullable (`anyOf [T, {type: "null"}]`; a
 *   nullable enum lists `null` last), `additionalProperties: false` on every object, keywords OpenAI refuses
 *   (`minLength`, `maxLength`, `default`, `examples`) left out (the decoder still enforces them); records, tuples and
 *   unconstrained values refused. Decoding a strict tool's arguments maps `null` back to absent.
 * - `"gemini"`: the OpenAPI subset Gemini takes: nullable as `nullable: true`, no `additionalProperties`, `enum`
 *   only on strings (the allowed numbers or booleans go into the description instead), `format` only `enum` and
 *   `date-time` on strings, `int32`/`int64` on integers, `float`/`double` on numbers; recursion, records, tuples,
 *   unconstrained values and objects without properties refused.
 *
 * A tool whose schema came from elsewhere (`Tool.fromJsonSchema`: every MCP and stdio-provider tool) is projected
 * by the same rules, whatever it is written in: its local `$ref`s are inlined (only recursion keeps one), draft-07
 * spellings read as 2020-12, `nullable: true` and type arrays as unions with `null`, `allOf` merged, `oneOf` read as
 * `anyOf`, `const` as a one-value `enum`, `$schema` and every keyword the target does not take left out. Either the
 * result is in the provider's subset, or the projection throws `UnsupportedSchemaError` saying what it cannot serve
 * and where (a record, a tuple, an array of unconstrained items, a `$ref` outside the schema, a schema that inlines
 * to more than 10,000 nodes). The tool's decoder still checks the whole schema it was given.
 *
 * Decoding under a strict projection: a Schema-backed tool made with `strict: true` maps `null` back to absent
 * for its optional properties; a JSON-Schema tool does so for any optional property whose schema does not admit
 * `null`, whichever projection the model was served (a `null` there cannot have meant anything else).
 *
 * Known gaps, where the served schema admits what the decoder refuses (the model gets an `invalid arguments` line):
 * - a refinement on the decoded side of a transformation (`Schema.Trim.pipe(Schema.minLength(1))`) has no encoded
 *   form, so it is not served;
 * - `Schema.Int` is served as `type: "integer"` but also wants a safe integer (within ±(2^53 - 1));
 * - `minLength`/`maxLength` count code points in JSON Schema, UTF-16 units in the decoder (an emoji is 1 and 2);
 * - `format: "date-time"` admits a leap second (`23:59:60`), which no JS `Date` holds;
 * - a record admits a `__proto__` key, which the argument guard refuses (and an object a `constructor` key holding
 *   a `prototype`), and `number` admits no infinity from JSON (`1e400` is refused as out of range);
 * - for a JSON-Schema tool, a `pattern` RE2 cannot compile (a lookahead, a backreference) is not checked locally:
 *   patterns run on RE2, in linear time, so that a remote server's `^(a+)+$` cannot freeze the host; the server
 *   that wrote the pattern still checks its own input.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import * as JsonSchemas from "./internal/jsonSchema.js"
import * as Internal from "./internal/tool.js"
import type { Any, JsonSchema } from "./Tool.js"
import { isTool, KernelId } from "./Tool.js"
import type { ToolError } from "./ToolError.js"

/**
 * Where a projection is served.
 *
 * @since 0.1.0
 * @category models
 */
export type Target = JsonSchemas.Target

/**
 * Thrown when a schema cannot be served for a target (a programmer error). `path` names the offending field.
 *
 * @since 0.1.0
 * @category errors
 */
export const UnsupportedSchemaError = JsonSchemas.UnsupportedSchemaError

/**
 * Thrown when a schema cannot be served for a target (a programmer error). `path` names the offending field.
 *
 * @since 0.1.0
 * @category errors
 */
export type UnsupportedSchemaError = JsonSchemas.UnsupportedSchemaError

/**
 * The JSON Schema of a tool's parameters, or of any object Schema, for a target (default `"standard"`). A tool's
 * projections are computed once and cached. Throws `UnsupportedSchemaError` when the target refuses the shape.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, ToolSchema } from "effect-agent-tools"
 *
 * const Search = Tool.make("search", {
 *   description: "Search the docs",
 *   parameters: { query: Schema.String, limit: Schema.optional(Schema.Int) },
 *   handler: () => Effect.succeed("no results")
 * })
 *
 * console.log(ToolSchema.jsonSchema(Search, { target: "openai-strict" }))
 * // {
 * //   type: "object",
 * //   properties: {
 * //     query: { type: "string" },
 * //     limit: { anyOf: [{ type: "integer" }, { type: "null" }], description: "an integer" }
 * //   },
 * //   required: ["query", "limit"],
 * //   additionalProperties: false
 * // }
 * ```
 *
 * @since 0.1.0
 * @category projections
 */
export const jsonSchema = (
  self: Any | Schema.Schema.AnyNoContext,
  options?: { readonly target?: Target | undefined }
): JsonSchema => {
  const target = options?.target ?? "standard"
  if (isTool(self)) {
    const cached = self.projections.get(target)
    if (cached !== undefined) return cached
    const projected = JsonSchemas.project(self.inputSchema, target)
    self.projections.set(target, projected)
    return projected
  }
  return JsonSchemas.project(JsonSchemas.standard(self.ast), target)
}

/**
 * Checks a model's arguments (a JSON string, empty meaning `{}`, or an already-parsed value) against a tool's
 * parameters without running it: the decoded parameters, or the error the model would see (`InvalidArguments`;
 * `ToolDefect` if a refinement of the tool's own throws).
 *
 * @example
 * ```ts
 * import { Effect, Either, Schema } from "effect"
 * import { Tool, ToolSchema } from "effect-agent-tools"
 *
 * const Read = Tool.make("read", {
 *   description: "Read a file",
 *   parameters: { path: Schema.String },
 *   handler: () => Effect.succeed("")
 * })
 * const checked = ToolSchema.decodeArguments(Read, "{\"path\": 3}")
 * console.log(Either.isLeft(checked) && checked.left.message) // invalid arguments: path: expected a string, got 3
 * ```
 *
 * @since 0.1.0
 * @category validation
 */
export const decodeArguments = (tool: Any, args: unknown): Either.Either<unknown, ToolError> =>
  Internal.prepare(tool[KernelId], args)
