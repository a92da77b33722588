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

/** A property name in a preview is cut to this many characters. */
const KEY_PREVIEW_LENGTH = 32

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
          // a key is the model's text as much as a value is: a megabyte-long one is cut like a string
          const name = keys[i]
          const key = name.length <= KEY_PREVIEW_LENGTH
            ? JSON.stringify(name)
            : `${JSON.stringify(name.slice(0, KEY_PREVIEW_LENGTH)).slice(0, -1)}…"`
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

/**
 * What a node expects depends on the node alone, and nodes are immutable: each is described once, the first time
 * a call fails on it. An invalid batch then costs the decoder's verdict and the values' previews, not a walk of
 * the schema's annotations per problem.
 */
const memo = <A>(describe: (ast: AST.AST) => A): (ast: AST.AST) => A => {
  const described = new WeakMap<AST.AST, A>()
  return (ast) => {
    if (described.has(ast)) return described.get(ast)!
    const text = describe(ast)
    described.set(ast, text)
    return text
  }
}

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
const refinementExpectation = (ast: AST.Refinement): string | undefined => refinementMemo(ast)

const describeRefinementNode = (ast: AST.AST): string | undefined => {
  if (!AST.isRefinement(ast)) return undefined
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

const refinementMemo = memo(describeRefinementNode)

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
export const describe = (ast: AST.AST): string => describeMemo(ast)

const describeNode = (ast: AST.AST): string => {
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

const describeMemo = memo(describeNode)

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

// ---------------------------------------------------------------------------------------------------------------
// the common case, without the decoder
// ---------------------------------------------------------------------------------------------------------------

/**
 * What {@link flatDecoder} says of an input: the decoded value, the problems, or undefined when it cannot tell
 * and Effect's decoder must.
 */
export type Verdict = object | Array<Problem> | undefined

/** A property's type, compiled: whether a value decodes to itself, and the line {@link fromIssue} gives if not. */
interface Check {
  /** True: the value decodes to itself; false: refused; undefined: a filter threw (the decoder throws the same). */
  readonly test: (u: unknown) => boolean | undefined
  /** The problem with a value `test` refused, worded as {@link fromIssue} words the decoder's issue for it. */
  readonly explain: (u: unknown) => string
  /** Whether the type holds `undefined`, so that a missing required property decodes (to `undefined`). */
  readonly holdsUndefined: boolean
}

/**
 * Decides the usual shape of tool parameters without Effect's decoder: an object (no index signatures) whose
 * properties are strings, numbers, booleans, literals, `undefined`, refinements of those (a chain over one base;
 * their own filters decide), or unions of those (nested or not), with no transformation, no message annotation and no parse
 * options anywhere. What the decoder would give for such a schema is the input's own values, in the schema's
 * property order, and its issues come in a fixed order (unknown keys first, then the properties) that
 * {@link fromIssue} words in fixed ways: the verdict gives the same value, or the same problems, in a fraction of
 * the time (and, for an input parsed from the model's text that has its keys in that order, no copy: `owned`
 * says nobody else holds the input). Anything else (a nested object, an array, a `Date`, a symbol key) is left to the decoder: undefined
 * for the schema, or for one input. A test checks that the two agree, value and wording, on generated inputs.
 */
export const flatDecoder = (
  ast: AST.AST,
  options: AST.ParseOptions
): ((input: Record<string, unknown>, owned: boolean) => Verdict) | undefined => {
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0 || ast.propertySignatures.length === 0) {
    return undefined
  }
  if (!plain(ast)) return undefined
  const names: Array<string> = []
  const paths: Array<string> = []
  const optional: Array<boolean> = []
  const checks: Array<Check> = []
  const types: Array<AST.AST> = []
  for (const ps of ast.propertySignatures) {
    if (typeof ps.name !== "string") return undefined
    const check = compile(ps.type, options)
    if (check === undefined) return undefined
    names.push(ps.name)
    paths.push(formatPath([ps.name]))
    optional.push(ps.isOptional)
    checks.push(check)
    types.push(ps.type)
  }
  const known = new Set(names)
  const unexpected = `unexpected property; the known properties are ${names.join(", ")}`
  const hasOwn = Object.prototype.hasOwnProperty

  /** The decoder's issues, in its order, once the input is known to fail; undefined where a filter threw. */
  const problems = (input: Record<string, unknown>, keys: ReadonlyArray<string | symbol>): Verdict => {
    const out: Array<Problem> = []
    let dropped = 0
    for (const key of keys) {
      if (known.has(key as string)) continue
      if (out.length < MAX_PROBLEMS) out.push({ path: formatPath([key]), message: unexpected })
      else dropped++
    }
    for (let i = 0; i < names.length; i++) {
      const name = names[i]
      if (!hasOwn.call(input, name)) {
        if (optional[i] || checks[i].holdsUndefined) continue
        if (out.length < MAX_PROBLEMS) {
          out.push({ path: paths[i], message: `missing required property, expected ${describe(types[i])}` })
        } else dropped++
        continue
      }
      const value = input[name]
      const ok = checks[i].test(value)
      if (ok === undefined) return undefined
      if (ok) continue
      if (out.length < MAX_PROBLEMS) out.push({ path: paths[i], message: checks[i].explain(value) })
      else dropped++
    }
    if (dropped > 0) out.push({ path: "", message: `…and ${dropped} more problem${dropped === 1 ? "" : "s"}` })
    return out
  }

  return (input, owned) => {
    const keys = Reflect.ownKeys(input)
    let excess = false
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]
      if (typeof key !== "string") return undefined
      if (!known.has(key)) excess = true
    }
    if (excess) return problems(input, keys)
    let inOrder = true
    let next = 0
    for (let i = 0; i < names.length; i++) {
      const name = names[i]
      if (!hasOwn.call(input, name)) {
        if (optional[i]) continue
        // a required property that is missing decodes when its type holds `undefined`, and the decoder then
        // sets it to `undefined`: rare enough to leave to it
        return checks[i].holdsUndefined ? undefined : problems(input, keys)
      }
      const ok = checks[i].test(input[name])
      if (ok === undefined) return undefined
      if (!ok) return problems(input, keys)
      if (keys[next++] !== name) inOrder = false
    }
    // what the decoder gives is a copy in the schema's order: an input already in that order that nobody else
    // holds (parsed here from the model's text) is that copy
    if (owned && inOrder) return input
    const output: Record<string, unknown> = {}
    for (let i = 0; i < names.length; i++) {
      const name = names[i]
      if (hasOwn.call(input, name)) output[name] = input[name]
    }
    return output
  }
}

/** No parse options, decoding fallback or message annotation on the node: the decoder reads none of them here. */
const plain = (ast: AST.AST): boolean =>
  ast.annotations[AST.ParseOptionsAnnotationId] === undefined &&
  ast.annotations[AST.DecodingFallbackAnnotationId] === undefined &&
  ast.annotations[AST.MessageAnnotationId] === undefined

const got = (u: unknown): string => `, got ${preview(u)}`

/** A keyword or literal: the decoder's issue is a `Type` on the node, worded as a mismatch. */
const leaf = (ast: AST.AST): ((u: unknown) => boolean) | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    default:
      return undefined
  }
}

const compile = (ast: AST.AST, options: AST.ParseOptions): Check | undefined => {
  if (!plain(ast)) return undefined
  switch (ast._tag) {
    case "Refinement":
      return chain(ast, options)
    case "Union": {
      const members: Array<Check> = []
      const nested: Array<Check> = []
      const present: Array<Check> = []
      for (const member of ast.types) {
        const check = compile(member, options)
        if (check === undefined) return undefined
        members.push(check)
        if (AST.isUnion(member)) nested.push(check)
        if (!AST.isUndefinedKeyword(member)) present.push(check)
      }
      const expected = `expected ${describe(ast)}`
      // fromIssue: a member union that failed is the one "deeper" issue it follows; else the members other than
      // `undefined` (its `Type` issue is set aside when a value came), the one such member, or the union as a whole
      const explain = nested.length === 1
        ? nested[0].explain
        : present.length === 1
        ? present[0].explain
        : (u: unknown) => expected + got(u)
      return {
        // members in order, the first that takes the value wins, as the decoder tries them
        test: (u) => {
          for (const member of members) {
            const ok = member.test(u)
            if (ok !== false) return ok
          }
          return false
        },
        explain,
        holdsUndefined: members.some((member) => member.holdsUndefined)
      }
    }
    default: {
      const test = leaf(ast)
      if (test === undefined) return undefined
      const expected = `expected ${describe(ast)}`
      return { test, explain: (u) => expected + got(u), holdsUndefined: AST.isUndefinedKeyword(ast) }
    }
  }
}

/**
 * A chain of refinements over a keyword or literal. The decoder checks the base, then the filters from the
 * innermost out, and stops at the first that refuses; {@link fromIssue} words a refusal by the outermost link as
 * its author's message (a filter returning a string) or what the whole chain expects, a refusal further in as
 * what the whole chain expects, and a base of the wrong type as what the outermost link that says more than its
 * base type expects (else the base type).
 */
const chain = (outer: AST.Refinement, options: AST.ParseOptions): Check | undefined => {
  const links: Array<AST.Refinement> = []
  let base: AST.AST = outer
  while (AST.isRefinement(base)) {
    if (!plain(base)) return undefined
    links.push(base)
    base = base.from
  }
  const baseTest = plain(base) && !AST.isUndefinedKeyword(base) ? leaf(base) : undefined
  if (baseTest === undefined) return undefined
  let wrongType = `expected ${describe(base)}`
  for (const link of links) {
    const expected = refinementExpectation(link)
    if (expected !== undefined) {
      wrongType = `expected ${expected}`
      break
    }
  }
  const refused = `expected ${describeRefinement(outer)}`
  /** Index of the link whose filter refuses (innermost first), -1 for none, -2 when one throws. */
  const failing = (u: unknown): { readonly at: number; readonly issue: ParseResult.ParseIssue | undefined } => {
    for (let k = links.length - 1; k >= 0; k--) {
      let verdict: Option.Option<ParseResult.ParseIssue>
      try {
        verdict = links[k].filter(u, options, links[k])
      } catch {
        return { at: -2, issue: undefined }
      }
      if (Option.isSome(verdict)) return { at: k, issue: verdict.value }
    }
    return { at: -1, issue: undefined }
  }
  return {
    test: (u) => {
      if (!baseTest(u)) return false
      const { at } = failing(u)
      return at === -2 ? undefined : at === -1
    },
    explain: (u) => {
      if (!baseTest(u)) return wrongType + got(u)
      const { at, issue } = failing(u)
      // the outermost link's own filter refused: its author's words when it gave some
      if (at === 0 && issue !== undefined && issue._tag === "Type" && issue.message !== undefined) return issue.message
      return refused + got(u)
    },
    holdsUndefined: false
  }
}
