/**
 * Asking the user mid-call.
 *
 * A handler asks with `Tool.elicit({ message, schema })` (a form) or `Tool.elicit({ message, url })` (a page to
 * open) and gets a {@link Result}: {@link Accept} with the answer decoded by the schema, {@link Decline} (the user
 * said no) or {@link Cancel} (the user dismissed the question, or nobody could be asked). `Tool.elicit` asks
 * whatever {@link Elicitor} the host provided:
 * - `McpServer` provides one for every call it serves, bound to the calling client: the question becomes
 *   `elicitation/create` when the client declared the capability for that mode (form or URL); otherwise it goes
 *   to the host's own `Elicitor`, if any, else the answer is `Cancel`;
 * - the `agent-tools call` command asks on the terminal;
 * - `McpClient.connect`, given an `Elicitor` in its context, declares the elicitation capability and answers a
 *   server's `elicitation/create` by asking it (filling the form's defaults into an accepted answer, SEP-1034);
 * - with no `Elicitor` at all the answer is `Cancel`, never `Decline`: nobody refused anything.
 *
 * An `Elicitor` answers raw {@link Request}s: the form is MCP's restricted JSON Schema ({@link RequestedSchema}, a
 * flat object of strings, numbers, booleans and choices), the answer raw JSON ({@link Content}). Decoding is
 * `Tool.elicit`'s job, so every `Elicitor` (a terminal, a dialog, a test) is a few lines.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------------------------
// results
// ---------------------------------------------------------------------------------------------------------------

/**
 * The user answered: `content` is the answer (decoded by the schema in `Tool.elicit`; raw {@link Content} from an
 * {@link Elicitor}; `undefined` for a URL or a plain confirmation).
 *
 * @example
 * ```ts
 * import { Elicitation } from "effect-agent-tools"
 *
 * const answer: Elicitation.Accept<{ readonly name: string }> = Elicitation.accept({ name: "Ada" })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Accept<out A> {
  readonly _tag: "Accept"
  readonly content: A
}

/**
 * The user explicitly said no.
 *
 * @example
 * ```ts
 * import { Elicitation } from "effect-agent-tools"
 *
 * const refused: Elicitation.Decline = Elicitation.decline
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Decline {
  readonly _tag: "Decline"
}

/**
 * Nobody answered: the user dismissed the question, or there was nobody to ask (no `Elicitor`, no terminal, a
 * client without the capability).
 *
 * @example
 * ```ts
 * import { Elicitation } from "effect-agent-tools"
 *
 * const dismissed: Elicitation.Cancel = Elicitation.cancel
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Cancel {
  readonly _tag: "Cancel"
}

/**
 * What asking gave: {@link Accept}, {@link Decline} or {@link Cancel}, told apart by `_tag`.
 *
 * @example
 * ```ts
 * import { Elicitation } from "effect-agent-tools"
 *
 * const describe = (result: Elicitation.Result<{ readonly name: string }>): string => {
 *   switch (result._tag) {
 *     case "Accept":
 *       return `hello, ${result.content.name}`
 *     case "Decline":
 *       return "the user said no"
 *     case "Cancel":
 *       return "nobody answered"
 *   }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Result<A> = Accept<A> | Decline | Cancel

/**
 * An accepted answer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Elicitation } from "effect-agent-tools"
 *
 * // an elicitor that always fills in the same name
 * const Always = Elicitation.layer(() => Effect.succeed(Elicitation.accept({ name: "Ada" })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const accept = <A>(content: A): Accept<A> => ({ _tag: "Accept", content })

/**
 * The answer of a user who said no.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Elicitation } from "effect-agent-tools"
 *
 * const Grumpy = Elicitation.layer(() => Effect.succeed(Elicitation.decline))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const decline: Decline = { _tag: "Decline" }

/**
 * The answer when nobody answered.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Elicitation } from "effect-agent-tools"
 *
 * const Away = Elicitation.layer(() => Effect.succeed(Elicitation.cancel))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const cancel: Cancel = { _tag: "Cancel" }

// ---------------------------------------------------------------------------------------------------------------
// requests
// ---------------------------------------------------------------------------------------------------------------

/**
 * What every form field may carry: a label (`title`), a help text (`description`) and a prefilled `default`.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const label = (name: string, field: Elicitation.FieldCommon<unknown>) => field.title ?? name
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface FieldCommon<D> {
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly default?: D | undefined
}

/**
 * A text field; `format` is one of MCP's `email`, `uri`, `date`, `date-time`.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const email: Elicitation.StringField = { type: "string", format: "email", title: "Email" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface StringField extends FieldCommon<string> {
  readonly type: "string"
  readonly minLength?: number | undefined
  readonly maxLength?: number | undefined
  readonly format?: "email" | "uri" | "date" | "date-time" | undefined
}

/**
 * A number field (`integer` for whole numbers).
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const age: Elicitation.NumberField = { type: "integer", minimum: 0, default: 30 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface NumberField extends FieldCommon<number> {
  readonly type: "number" | "integer"
  readonly minimum?: number | undefined
  readonly maximum?: number | undefined
}

/**
 * A yes/no field.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const verified: Elicitation.BooleanField = { type: "boolean", default: true }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface BooleanField extends FieldCommon<boolean> {
  readonly type: "boolean"
}

/**
 * One choice among strings: `enum` lists the values (with `enumNames`, the deprecated way of labelling them), or
 * `oneOf` lists `{ const, title }` pairs (SEP-1330 titled choices).
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const status: Elicitation.ChoiceField = { type: "string", enum: ["active", "inactive"], default: "active" }
 * const size: Elicitation.ChoiceField = {
 *   type: "string",
 *   oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ChoiceField =
  & FieldCommon<string>
  & { readonly type: "string" }
  & (
    | { readonly enum: ReadonlyArray<string>; readonly enumNames?: ReadonlyArray<string> | undefined }
    | { readonly oneOf: ReadonlyArray<{ readonly const: string; readonly title: string }> }
  )

/**
 * Several choices among strings: `items.enum` lists the values, or `items.anyOf` lists `{ const, title }` pairs.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const tags: Elicitation.MultiChoiceField = { type: "array", items: { type: "string", enum: ["a", "b"] } }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface MultiChoiceField extends FieldCommon<ReadonlyArray<string>> {
  readonly type: "array"
  readonly minItems?: number | undefined
  readonly maxItems?: number | undefined
  readonly items:
    | { readonly type: "string"; readonly enum: ReadonlyArray<string> }
    | { readonly anyOf: ReadonlyArray<{ readonly const: string; readonly title: string }> }
}

/**
 * One field of a form, as MCP restricts it.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const kind = (field: Elicitation.Field): string =>
 *   field.type === "array" ? "several choices" : "enum" in field || "oneOf" in field ? "one choice" : field.type
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Field = StringField | NumberField | BooleanField | ChoiceField | MultiChoiceField

/**
 * A form: MCP's `requestedSchema`, a flat object whose properties are {@link Field}s.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const form: Elicitation.RequestedSchema = {
 *   type: "object",
 *   properties: { name: { type: "string", title: "Name" } },
 *   required: ["name"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestedSchema {
  readonly type: "object"
  readonly properties: { readonly [name: string]: Field }
  readonly required?: ReadonlyArray<string> | undefined
}

/**
 * One question, as an {@link Elicitor} gets it: a form (`mode: "form"`, with `requestedSchema`) or a page the
 * user should open (`mode: "url"`, with `url`; accepting means they went there).
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const question: Elicitation.Request = {
 *   message: "Which branch?",
 *   mode: "form",
 *   requestedSchema: { type: "object", properties: { branch: { type: "string" } }, required: ["branch"] }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly message: string
  readonly mode: "form" | "url"
  readonly requestedSchema?: RequestedSchema | undefined
  readonly url?: string | undefined
  /**
   * The name the question goes by when it reaches an MCP 2026-07-28 client, as the key of `inputRequests` in an
   * `input_required` result (see `Tool.elicit`); none for a question that names none.
   */
  readonly key?: string | undefined
}

/**
 * A raw answer to a form: field name to value.
 *
 * @example
 * ```ts
 * import type { Elicitation } from "effect-agent-tools"
 *
 * const content: Elicitation.Content = { name: "Ada", age: 36, verified: true, tags: ["a"] }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Content {
  readonly [name: string]: string | number | boolean | ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * Asking failed: the answer does not match the form (`the answer does not match the form: age: expected an
 * integer, got "x"`), or the question could not reach the user (the MCP client answered with an error, the
 * connection went away). A handler that does not catch it ends its call with that message.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Elicitation, Tool } from "effect-agent-tools"
 *
 * const askAge = Tool.elicit({ message: "How old are you?", schema: { age: Schema.Int } }).pipe(
 *   Effect.catchTag("ElicitationError", () => Effect.succeed(Elicitation.cancel))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ElicitationError extends Schema.TaggedError<ElicitationError>("effect-agent-tools/ElicitationError")(
  "ElicitationError",
  {
    message: Schema.String,
    cause: Schema.optional(Schema.Defect)
  }
) {}

// ---------------------------------------------------------------------------------------------------------------
// the service
// ---------------------------------------------------------------------------------------------------------------

/** The elicitor when none is provided: there is nobody to ask, and nobody declined either. */
const nobodyToAsk = { elicit: (): Effect.Effect<Result<Content>, ElicitationError> => Effect.succeed(cancel) }

/**
 * Whoever answers questions: a terminal prompt, a dialog, an MCP client, a test. It answers raw requests
 * (`Tool.elicit` builds the form and decodes the answer) and should answer {@link Cancel} when it cannot ask. A
 * `Context.Reference`: when none is provided, the default answers `Cancel` to everything.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Elicitation } from "effect-agent-tools"
 *
 * // declines every form, opens no page
 * const Cautious = Layer.succeed(Elicitation.Elicitor, {
 *   elicit: (request) => Effect.succeed(request.mode === "url" ? Elicitation.cancel : Elicitation.decline)
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Elicitor extends Context.Reference<Elicitor>()("effect-agent-tools/Elicitor", {
  defaultValue: (): { readonly elicit: (request: Request) => Effect.Effect<Result<Content>, ElicitationError> } =>
    nobodyToAsk
}) {}

/**
 * An {@link Elicitor} from a function.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Elicitation } from "effect-agent-tools"
 *
 * // accepts every form as it is offered, defaults and all
 * const AcceptDefaults = Elicitation.layer((request) =>
 *   Effect.succeed(request.mode === "form" ? Elicitation.accept({}) : Elicitation.decline)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  elicit: (request: Request) => Effect.Effect<Result<Content>, ElicitationError>
): Layer.Layer<Elicitor> => Layer.succeed(Elicitor, { elicit })
