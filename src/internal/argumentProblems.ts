/**
 * Turns a decoding failure into lines a model can act on: `path: expected <what>, got <what came>`.
 *
 * Built only when a call fails (the hot path never formats anything). No Effect internals, no ParseError trees,
 * no stacks: the expectations are read from the schema (the same constraints that are served as JSON Schema), so
 * the error text and the served schema say the same thing.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"
import { formatPath } from "./jsonSchema.js"

/** One problem, before it becomes a `ToolError.ArgumentProblem`. */
export interface Problem {
  readonly path: string
  readonly message: string
}

/** At most this many problems are listed; the rest are counted. */
export const MAX_PROBLEMS = 20

/** A value shown back to the model is cut to about this many characters. */
export const PREVIEW_LENGTH = 80

// ---------------------------------------------------------------------------------------------------------------
// previews of what came
// ---------------------------------------------------------------------------------------------------------------

/**
 * A short, safe rendering of a value: JSON-like, cut to `limit` characters with the full size stated, never
 * recursing deeper than a few levels (so a 100k-deep value or a 10 MB string costs nothing here).
 */
export const preview = (value: unknown, limit: number = PREVIEW_LENGTH): string => {
  let budget = limit
  const render = (u: unknown, depth: number): string => {
    if (budget <= 0) return "…"
    switch (typeof u) {
      case "string": {
        if (u.length + 2 <= budget) {
          const s = JSON.stringify(u)
          budget -= s.length
          return s
        }
        const cut = JSON.stringify(u.slice(0, Math.max(budget - 2, 8)))
        budget = 0
        return `${cut.slice(0, -1)}…" (${u.length} characters)`
      }
      case "number":
      case "boolean": {
        const s = String(u)
        budget -= s.length
        return s
      }
      case "undefined":
        return "nothing"
      case "bigint":
        return `${u}n`
      case "object": {
        if (u === null) {
          budget -= 4
          return "null"
        }
        if (Array.isArray(u)) {
          if (depth >= 3) return `[…${u.length} items]`
          const parts: Array<string> = []
          budget -= 2
          for (let i = 0; i < u.length; i++) {
            if (budget <= 0) {
              parts.push(`…${u.length - i} more`)
              break
            }
            parts.push(render(u[i], depth + 1))
            budget -= 1
          }
          return `[${parts.join(",")}]`
        }
        if (depth >= 3) return "{…}"
        const keys = Object.keys(u)
        const parts: Array<string> = []
        budget -= 2
        for (let i = 0; i < keys.length; i++) {
          if (budget <= 0) {
            parts.push(`…${keys.length - i} more`)
            break
          }
          const key = JSON.stringify(keys[i])
          budget -= key.length + 2
          parts.push(`${key}:${render((u as Record<string, unknown>)[keys[i]], depth + 1)}`)
        }
        return `{${parts.join(",")}}`
      }
      default:
        return `a ${typeof u}`
    }
  }
  return render(value, 0)
}

// ---------------------------------------------------------------------------------------------------------------
// what was expected, read from the schema
// ---------------------------------------------------------------------------------------------------------------

const DateFromSelfSchemaId = Symbol.for("effect/SchemaId/DateFromSelf")

const article = (noun: string): string => (/^[aeiou]/i.test(noun) ? "an " : "a ") + noun

const listLiterals = (values: ReadonlyArray<unknown>): string =>
  values.length === 1 ? JSON.stringify(values[0]) : `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`

/** The literal values of a union of literals (or enums), when that is all it is. */
const literalValues = (ast: AST.AST): ReadonlyArray<unknown> | undefined => {
  switch (ast._tag) {
    case "Literal":
      return [ast.literal]
    case "Enums":
      return ast.enums.map(([, v]) => v)
    case "Union": {
      const out: Array<unknown> = []
      for (const t of ast.types) {
        const values = literalValues(t)
        if (values === undefined) return undefined
        out.push(...values)
      }
      return out
    }
    case "Suspend":
      return literalValues(ast.f())
    default:
      return undefined
  }
}

/** Constraints of a chain of refinements, read from their JSON Schema hooks, outermost winning. */
const constraintText = (c: Record<string, unknown>, noun: string): string => {
  const parts: Array<string> = []
  const min = c.minLength as number | undefined
  const max = c.maxLength as number | undefined
  if (min !== undefined && max !== undefined && min === max) {
    parts.push(`of exactly ${min} character${min === 1 ? "" : "s"}`)
  } else if (min !== undefined && max !== undefined) {
    parts.push(`of ${min} to ${max} characters`)
  } else {
    if (min !== undefined) parts.push(`of at least ${min} character${min === 1 ? "" : "s"}`)
    if (max !== undefined) parts.push(`of at most ${max} character${max === 1 ? "" : "s"}`)
  }
  const minItems = c.minItems as number | undefined
  const maxItems = c.maxItems as number | undefined
  if (minItems !== undefined) parts.push(`with at least ${minItems} item${minItems === 1 ? "" : "s"}`)
  if (maxItems !== undefined) parts.push(`with at most ${maxItems} item${maxItems === 1 ? "" : "s"}`)
  if (c.minimum !== undefined && c.maximum !== undefined) parts.push(`between ${c.minimum} and ${c.maximum}`)
  else {
    if (c.minimum !== undefined) parts.push(`>= ${c.minimum}`)
    if (c.maximum !== undefined) parts.push(`<= ${c.maximum}`)
  }
  if (c.exclusiveMinimum !== undefined) parts.push(`> ${c.exclusiveMinimum}`)
  if (c.exclusiveMaximum !== undefined) parts.push(`< ${c.exclusiveMaximum}`)
  if (c.multipleOf !== undefined) parts.push(`that is a multiple of ${c.multipleOf}`)
  if (c.pattern !== undefined) parts.push(`matching /${c.pattern}/`)
  if (c.format !== undefined) parts.push(`in ${c.format} format`)
  return [article(noun), ...parts].join(" ")
}

const DATE_TIME = "a date-time string (ISO 8601)"

const decodesToDate = (ast: AST.Transformation): boolean => {
  let to = ast.to
  while (AST.isRefinement(to)) to = to.from
  return AST.isDeclaration(to) && to.annotations[AST.SchemaIdAnnotationId] === DateFromSelfSchemaId
}

/** What a chain of refinements expects, when it says more than "a valid <base type>". */
const refinementExpectation = (ast: AST.Refinement): string | undefined => {
  const message = Option.getOrUndefined(AST.getMessageAnnotation(ast))
  if (message !== undefined) {
    // A message annotation is the author's own wording for this failure: use it when it is a plain string.
    const text = message(new ParseResult.Type(ast as AST.AST, undefined))
    if (typeof text === "string") return text
    if (typeof text === "object" && text !== null && "message" in text && typeof text.message === "string") {
      return text.message
    }
  }
  const constraints: Record<string, unknown> = {}
  let base: AST.AST = ast
  let described: string | undefined
  while (AST.isRefinement(base)) {
    const hook = Option.getOrUndefined(AST.getJSONSchemaAnnotation(base)) as Record<string, unknown> | undefined
    if (hook === undefined) {
      described ??= Option.getOrUndefined(AST.getDescriptionAnnotation(base))
    } else {
      for (const [k, v] of Object.entries(hook)) if (!(k in constraints)) constraints[k] = v
    }
    base = base.from
  }
  if (AST.isTransformation(base) && decodesToDate(base)) return DATE_TIME
  const noun = constraints.type === "integer" ? "integer" : nounOf(base)
  delete constraints.type
  if (Object.keys(constraints).length > 0 || noun === "integer") return constraintText(constraints, noun)
  return described
}

const describeRefinement = (ast: AST.Refinement): string => refinementExpectation(ast) ?? `a valid ${nounOf(ast)}`

const nounOf = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "TupleType":
      return "array"
    case "TypeLiteral":
      return "object"
    case "Transformation":
      return nounOf(ast.from)
    case "Refinement":
      return nounOf(ast.from)
    default:
      return "value"
  }
}

/** What a schema node expects, in words: `a string`, `an integer >= 0`, `one of "a", "b"`. */
export const describe = (ast: AST.AST): string => {
  const literals = literalValues(ast)
  if (literals !== undefined) return listLiterals(literals)
  switch (ast._tag) {
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean"
    case "TypeLiteral":
      return ast.indexSignatures.length > 0 && ast.propertySignatures.length === 0 ? "an object (a map)" : "an object"
    case "ObjectKeyword":
      return "an object"
    case "TupleType":
      return ast.elements.length === 0 ? "an array" : `an array of ${ast.elements.length} items`
    case "TemplateLiteral":
      return `a string matching /${AST.getTemplateLiteralRegExp(ast).source}/`
    case "Refinement":
      return describeRefinement(ast)
    case "Transformation": {
      if (decodesToDate(ast)) return DATE_TIME
      // `NumberFromString` says "a string to be decoded into a number": more useful than "a string"
      const from = Option.getOrUndefined(AST.getDescriptionAnnotation(ast.from))
      const builtIn = from !== undefined && from === AST.stringKeyword.annotations[AST.DescriptionAnnotationId]
      return from !== undefined && !builtIn ? from : describe(ast.from)
    }
    case "Suspend":
      return describe(ast.f())
    case "Union": {
      const seen = new Set<string>()
      for (const t of ast.types) if (!AST.isUndefinedKeyword(t)) seen.add(describe(t))
      return [...seen].join(" or ")
    }
    case "UnknownKeyword":
    case "AnyKeyword":
      return "any value"
    case "NeverKeyword":
      return "no value (this property is not allowed)"
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "nothing"
    default:
      return Option.getOrElse(AST.getDescriptionAnnotation(ast), () => "a valid value")
  }
}

// ---------------------------------------------------------------------------------------------------------------
// walking the issue
// ---------------------------------------------------------------------------------------------------------------

const mismatch = (ast: AST.AST, actual: unknown): string => `expected ${describe(ast)}, got ${preview(actual)}`

/** Whether a union member failed on its outer shape (as opposed to matching it and failing inside). */
const failedAtTop = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return true
    case "Refinement":
      return issue.kind === "From" ? failedAtTop(issue.issue) : true
    case "Transformation":
      return issue.kind === "Encoded" ? failedAtTop(issue.issue) : false
    default:
      return false
  }
}

const messageOf = (issue: ParseResult.ParseIssue): string | undefined => {
  if (
    issue._tag === "Pointer" || issue._tag === "Composite" || issue._tag === "Missing" || issue._tag === "Unexpected"
  ) {
    return undefined
  }
  const annotation = Option.getOrUndefined(AST.getMessageAnnotation(issue.ast))
  if (annotation === undefined) return undefined
  const text = annotation(issue)
  if (typeof text === "string") return text
  if (typeof text === "object" && text !== null && "message" in text && typeof text.message === "string") {
    return text.message
  }
  return undefined
}

/** Every problem in a decoding failure, capped at {@link MAX_PROBLEMS} (the last line then counts the rest). */
export const fromIssue = (issue: ParseResult.ParseIssue): Array<Problem> => {
  const out: Array<Problem> = []
  let dropped = 0
  // The message is built only for a problem that is listed: past the cap only the count matters, and a 10 MB
  // array of wrong items must not be previewed and described five million times.
  const push = (path: ReadonlyArray<PropertyKey>, message: () => string) => {
    if (out.length < MAX_PROBLEMS) out.push({ path: formatPath(path), message: message() })
    else dropped++
  }
  const walk = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, parent: AST.AST | undefined) => {
    const custom = messageOf(issue)
    if (custom !== undefined) return push(path, () => custom)
    switch (issue._tag) {
      case "Pointer": {
        if (out.length >= MAX_PROBLEMS) return walk(issue.issue, path, parent) // only counted: no path needed
        const next = Array.isArray(issue.path) ? path.concat(issue.path) : path.concat([issue.path as PropertyKey])
        return walk(issue.issue, next, parent)
      }
      case "Missing":
        // `ast` is the property signature (or tuple element); what it expects is its type
        return push(path, () => `missing required property, expected ${describe(issue.ast.type)}`)
      case "Unexpected":
        return push(path, () => {
          const known = parent !== undefined && AST.isTypeLiteral(parent)
            ? parent.propertySignatures.map((ps) => String(ps.name))
            : []
          return known.length > 0
            ? `unexpected property; the known properties are ${known.join(", ")}`
            : "unexpected property"
        })
      case "Type":
        return push(path, () => issue.message ?? mismatch(issue.ast, issue.actual))
      case "Forbidden":
        return push(path, () => issue.message ?? "cannot be checked")
      case "Refinement": {
        if (issue.kind === "Predicate") {
          // a predicate that returned a string (`filter((s) => ok(s) || "must be absolute")`): the author's words
          const authored = issue.issue._tag === "Type" ? issue.issue.message : undefined
          if (authored !== undefined) return push(path, () => authored)
          return push(path, () => `expected ${describeRefinement(issue.ast)}, got ${preview(issue.actual)}`)
        }
        // A chain of refinements (`Int.pipe(between(0, 5))`) is described whole, whichever link failed or when the
        // value is not even of the base type: the model learns every constraint at once, as the served JSON Schema
        // states them (`expected an integer between 0 and 5`, not `expected a number`).
        let link: ParseResult.ParseIssue = issue.issue
        while (link._tag === "Refinement" && link.kind === "From") link = link.issue
        if (link._tag === "Refinement" && messageOf(link) === undefined) {
          const actual = link.actual
          return push(path, () => `expected ${describeRefinement(issue.ast)}, got ${preview(actual)}`)
        }
        // not even of the base type: the refinement's constraints, unless they say no more than the base type does
        // (past the cap the walk below counts the same one problem without describing it)
        const expected = out.length < MAX_PROBLEMS && link._tag === "Type" && link.message === undefined &&
            messageOf(link) === undefined
          ? refinementExpectation(issue.ast)
          : undefined
        if (expected !== undefined) {
          const actual = link.actual
          return push(path, () => `expected ${expected}, got ${preview(actual)}`)
        }
        return walk(issue.issue, path, parent)
      }
      case "Transformation":
        if (issue.kind === "Transformation") return push(path, () => mismatch(issue.ast, issue.actual))
        return walk(issue.issue, path, parent)
      case "Composite": {
        const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
        if (AST.isUnion(issue.ast)) {
          const deeper = issues.filter((i) => !failedAtTop(i))
          if (deeper.length === 1) return walk(deeper[0], path, issue.ast)
          // An optional property is a union with `undefined`; a value that came is judged by the other member alone
          const present = issues.filter((i) => !(i._tag === "Type" && AST.isUndefinedKeyword(i.ast)))
          if (present.length === 1) return walk(present[0], path, issue.ast)
          return push(path, () => mismatch(issue.ast, issue.actual))
        }
        for (const i of issues) walk(i, path, issue.ast)
        return
      }
    }
  }
  walk(issue, [], undefined)
  if (dropped > 0) out.push({ path: "", message: `…and ${dropped} more problem${dropped === 1 ? "" : "s"}` })
  return out
}
