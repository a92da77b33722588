/**
 * Glob patterns that come from outside (a model's `glob` pattern, `grep`'s `include`, `list_dir`'s `ignore`),
 * compiled for a linear-time engine.
 *
 * A glob library that compiles to JavaScript's `RegExp` inherits its backtracking: every `*` becomes `[^/]*`, and
 * ten of them (`*a*a*a*a*a*a*a*a*a*a*b`) against a file name of 41 characters took picomatch 35 s, on one thread,
 * where no timeout could fire. Here a glob is translated to an RE2 expression (regex.ts's engine, re2js), which
 * matches in time linear in the path whatever the pattern, so the same match takes microseconds.
 *
 * The syntax, with `/` separating a path's names and every name matched, dot files too:
 * - `*` any run of characters within a name, `?` one character, `[abc]` `[a-z]` `[!a]` (or `[^a]`) `[[:alpha:]]`
 *   one character of a class;
 * - `**` as a whole name, any number of names (`**\/*.ts`, `src/**`, `a/**\/b`); elsewhere it is `*`;
 * - `{a,b}` either alternative, nested as deep as wanted; `{1..5}` a number of the range (up to 1,000 numbers);
 * - `@(a|b)`, `?(a|b)`, `*(a|b)`, `+(a|b)` one, at most one, any number, at least one of the alternatives;
 * - `\x` the character `x` itself; anything else is itself (`(`, `|`, `+`, `$`, `.`).
 * `!(a|b)` (anything but) has no linear-time translation and is refused, saying what to write instead. A leading
 * `./` is dropped. With `basename`, a pattern without `/` is matched against a path's last name.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { RE2JS } from "re2js"

/** Patterns longer than this are refused before compiling (a glob is a line, not a program). */
export const MAX_GLOB_LENGTH = 4096

/** The most numbers a `{m..n}` range may stand for. */
const MAX_RANGE = 1000

export interface Options {
  /** A pattern without `/` is matched against the last name of a path (`*.ts` finds `src/a.ts`). */
  readonly basename?: boolean | undefined
  /**
   * Git's syntax (`.gitignore` lines): no braces and no extglobs, so `{`, `(` and `|` are themselves; `*`, `?`,
   * `**`, classes and `\` as above.
   */
  readonly gitignore?: boolean | undefined
}

/** A compiled glob: whether a path (names separated by `/`) matches it. */
export interface Matcher {
  readonly test: (path: string) => boolean
}

/** A glob that cannot be compiled, with what to do about it. */
export class GlobError extends Data.TaggedError("GlobError")<{
  /** What is wrong. */
  readonly reason: string
  /** What the sender can do instead. */
  readonly hint: string
}> {
  override get message(): string {
    return `invalid glob pattern: ${this.reason}; ${this.hint}`
  }
}

/** A character as RE2 reads it literally: punctuation escaped, anything else as it is. */
const literal = (c: string): string => (/[\\^$.*+?()[\]{}|-]/.test(c) ? `\\${c}` : c)

/** The index of the `]` closing a class that opens at `open`, or -1: `]` first (after `!` or `^`) is a member. */
const classEnd = (pattern: string, open: number): number => {
  let i = open + 1
  if (pattern[i] === "!" || pattern[i] === "^") i++
  if (pattern[i] === "]") i++
  for (; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") i++
    else if (c === "[" && pattern[i + 1] === ":") {
      const close = pattern.indexOf(":]", i + 2)
      if (close !== -1) i = close + 1
    } else if (c === "]") return i
  }
  return -1
}

/** The class `[...]` from `open` to `close` as RE2: members escaped, ranges and POSIX classes kept. */
const classOf = (pattern: string, open: number, close: number): string => {
  let i = open + 1
  let out = "["
  if (pattern[i] === "!" || pattern[i] === "^") {
    out += "^"
    i++
  }
  for (; i < close; i++) {
    const c = pattern[i]
    if (c === "[" && pattern[i + 1] === ":") {
      const end = pattern.indexOf(":]", i + 2)
      if (end !== -1 && end < close) {
        out += pattern.slice(i, end + 2)
        i = end + 1
        continue
      }
    }
    if (c === "\\" && i + 1 < close) {
      out += literal(pattern[++i])
      continue
    }
    // a - between two members is a range; anywhere else it is a member
    out += c === "-" && i > open + 1 && i + 1 < close && out !== "[" && out !== "[^" ? "-" : literal(c)
  }
  return `${out}]`
}

/**
 * The index of the character closing a group that opens at `open` (`}` for `{`, `)` for `(`), skipping escapes,
 * classes and nested groups of either kind, and whether a separator (`,` for braces, `|` for parentheses) appears
 * at its own level; -1 when it is never closed.
 */
const groupEnd = (pattern: string, open: number): { readonly close: number; readonly separated: boolean } => {
  const closer = pattern[open] === "{" ? "}" : ")"
  const separator = pattern[open] === "{" ? "," : "|"
  const stack: Array<string> = []
  let separated = false
  for (let i = open + 1; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") {
      i++
    } else if (c === "[") {
      const end = classEnd(pattern, i)
      if (end !== -1) i = end
    } else if (c === "{") {
      stack.push("}")
    } else if (c === "(") {
      stack.push(")")
    } else if (stack.length > 0 && c === stack[stack.length - 1]) {
      stack.pop()
    } else if (stack.length === 0 && c === closer) {
      return { close: i, separated }
    } else if (stack.length === 0 && c === separator) {
      separated = true
    }
  }
  return { close: -1, separated }
}

/** `{m..n}` as the numbers it stands for, or undefined when the body is not such a range. */
const range = (body: string): ReadonlyArray<string> | undefined => {
  const match = /^(-?\d+)\.\.(-?\d+)$/.exec(body)
  if (match === null) return undefined
  const [from, to] = [Number(match[1]), Number(match[2])]
  if (Math.abs(to - from) >= MAX_RANGE) return undefined
  const step = from <= to ? 1 : -1
  const out: Array<string> = []
  for (let n = from; n !== to + step; n += step) out.push(String(n))
  return out
}

const EXTGLOB: Readonly<Record<string, string>> = { "@": "", "?": "?", "*": "*", "+": "+" }

/**
 * Translates `pattern[from, to)` to RE2, splitting alternatives at `separator` (`,` inside braces, `|` inside an
 * extglob) when one is given.
 */
const translate = (
  pattern: string,
  from: number,
  to: number,
  git: boolean,
  separator?: "," | "|"
): Either.Either<string, GlobError> => {
  let out = ""
  for (let i = from; i < to; i++) {
    const c = pattern[i]
    const atNameStart = i === from || pattern[i - 1] === "/"
    if (c === separator) {
      out += "|"
    } else if (c === "\\") {
      out += i + 1 < to ? literal(pattern[++i]) : "\\\\"
    } else if (c === "*" && pattern[i + 1] === "*" && atNameStart && (i + 2 === to || pattern[i + 2] === "/")) {
      // `**` as a whole name: any number of names; `**/` may be none; `/**` may be nothing more, except in git's
      // syntax, where `abc/**` is what is inside abc, not abc itself
      if (i + 2 === to) {
        out = !out.endsWith("/") ? `${out}.*` : git ? `${out}.+` : `${out.slice(0, -1)}(?:/.*)?`
        i++
      } else {
        out += "(?:[^/]*/)*"
        i += 2
      }
    } else if (!git && pattern[i + 1] === "(" && (c in EXTGLOB || c === "!")) {
      const { close } = groupEnd(pattern, i + 1)
      if (close === -1 || close > to) {
        out += literal(c)
        continue
      }
      if (c === "!") {
        return Either.left(
          new GlobError({
            reason: "!(...) (anything but these) is not supported",
            hint: "name what you want instead (`*.{ts,js}`), or match it and leave the matches out"
          })
        )
      }
      const inner = translate(pattern, i + 2, close, git, "|")
      if (Either.isLeft(inner)) return inner
      out += `(?:${inner.right})${EXTGLOB[c]}`
      i = close
    } else if (c === "*") {
      while (pattern[i + 1] === "*") i++
      out += "[^/]*"
    } else if (c === "?") {
      out += "[^/]"
    } else if (c === "[") {
      const close = classEnd(pattern, i)
      if (close === -1 || close >= to) {
        out += literal(c)
      } else {
        out += classOf(pattern, i, close)
        i = close
      }
    } else if (c === "{" && !git) {
      const { close, separated } = groupEnd(pattern, i)
      const numbers = close === -1 || close > to ? undefined : range(pattern.slice(i + 1, close))
      if (numbers !== undefined) {
        out += `(?:${numbers.join("|")})`
        i = close
      } else if (close === -1 || close > to || !separated) {
        out += literal(c)
      } else {
        const inner = translate(pattern, i + 1, close, git, ",")
        if (Either.isLeft(inner)) return inner
        out += `(?:${inner.right})`
        i = close
      }
    } else {
      out += literal(c)
    }
  }
  return Either.right(out)
}

/** One pattern as an RE2 matcher of a whole path. */
const compileOne = (pattern: string, options: Options): Either.Either<Matcher, GlobError> => {
  if (pattern.length > MAX_GLOB_LENGTH) {
    return Either.left(
      new GlobError({
        reason: `the pattern is ${pattern.length} characters long (at most ${MAX_GLOB_LENGTH})`,
        hint: "give a shorter pattern"
      })
    )
  }
  const given = pattern.startsWith("./") ? pattern.slice(2) : pattern
  const source = translate(given, 0, given.length, options.gitignore === true)
  if (Either.isLeft(source)) return Either.left(source.left)
  let re: RE2JS
  try {
    re = RE2JS.compile(`^(?:${source.right})$`, RE2JS.DOTALL)
  } catch (error) {
    // the translation writes only what RE2 reads; this is a class RE2 refuses (`[z-a]`, an unknown POSIX name)
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, "")
    return Either.left(new GlobError({ reason, hint: "correct the pattern" }))
  }
  // `./a.txt` names a path from the base, as a pattern with a / does
  const byName = options.basename === true && !pattern.includes("/")
  return Either.right({
    test: byName ? (path) => re.matches(path.slice(path.lastIndexOf("/") + 1)) : (path) => re.matches(path)
  })
}

/**
 * Compiles one pattern, or several (a path matches if it matches any), or says why one cannot be.
 */
export const compile = (
  patterns: string | ReadonlyArray<string>,
  options: Options = {}
): Either.Either<Matcher, GlobError> => {
  const list = typeof patterns === "string" ? [patterns] : patterns
  const matchers: Array<Matcher> = []
  for (const pattern of list) {
    const compiled = compileOne(pattern, options)
    if (Either.isLeft(compiled)) return compiled
    matchers.push(compiled.right)
  }
  return Either.right(
    matchers.length === 1 ? matchers[0] : { test: (path) => matchers.some((matcher) => matcher.test(path)) }
  )
}
