/**
 * The pieces of "a `null` sent for an optional property means absent", the rule the `"openai-strict"` projection
 * asks a model to follow, shared by both decoders that apply it: a Schema-backed strict tool's (`tool.ts`, walking
 * the AST) and a JSON-Schema tool's (`ajv.ts`, walking the JSON Schema). Each walk decides which keys are optional
 * and not nullable at which depth; these functions do the rewriting, never changing their input: an object or
 * array is copied the first time something in it changes, and returned as it is when nothing does.
 *
 * @internal
 */

/** A rewrite of one value; the value itself when there is nothing to rewrite. */
export type Mapper = (value: unknown) => unknown

/** For an object: the `optional` keys holding `null` dropped, and each `nested` key's value rewritten. */
export const objectMapper = (
  optional: Iterable<string>,
  nested: ReadonlyArray<readonly [string, Mapper]>
): Mapper => {
  const keys = [...optional]
  return (u) => {
    if (typeof u !== "object" || u === null || Array.isArray(u)) return u
    const input = u as Record<string, unknown>
    let out = input
    for (const key of keys) {
      if (out[key] === null) {
        if (out === input) out = { ...input }
        delete out[key]
      }
    }
    for (const [key, inner] of nested) {
      const value = out[key]
      if (value === undefined) continue
      const mapped = inner(value)
      if (mapped !== value) {
        if (out === input) out = { ...input }
        out[key] = mapped
      }
    }
    return out
  }
}

/** For an array: every item rewritten. */
export const arrayMapper = (items: Mapper): Mapper => (u) => {
  if (!Array.isArray(u)) return u
  let out = u
  for (let i = 0; i < u.length; i++) {
    const mapped = items(u[i])
    if (mapped !== u[i]) {
      if (out === u) out = [...u]
      out[i] = mapped
    }
  }
  return out
}

/** Every rewrite in turn (the members of a union: each drops only the keys it declares optional). */
export const allOf = (steps: ReadonlyArray<Mapper>): Mapper | undefined =>
  steps.length === 0 ? undefined : steps.length === 1 ? steps[0] : (u) => steps.reduce((acc, step) => step(acc), u)
