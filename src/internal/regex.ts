/**
 * Regular expressions that come from outside (a model's `grep` pattern), compiled for a linear-time engine.
 *
 * JavaScript's `RegExp` backtracks: `^(a+)+$` against 29 `a`s and a `!` runs for about 16 seconds on one thread,
 * and since matching is synchronous no timeout, interruption or other request gets a turn meanwhile. RE2 (here
 * re2js, a port to JavaScript) matches in time linear in the input for any pattern, so the same search takes
 * microseconds. The price is syntax: RE2 has no backreferences and no lookaround. A pattern using them is refused
 * with a message that names the construct and says what to do instead, written for the model that sent it.
 *
 * Everyday JavaScript escapes RE2 spells differently (`\uXXXX`, `\u{X}`) are rewritten to RE2's `\x{...}`;
 * nothing else is translated, so a pattern means what RE2 documents.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { RE2JS } from "re2js"

/** Patterns longer than this are refused before compiling (a search pattern is a line, not a program). */
export const MAX_PATTERN_LENGTH = 4096

export interface Options {
  /** Letters match either case (RE2's `(?i)`). */
  readonly ignoreCase?: boolean | undefined
  /** `^` and `$` match at line breaks inside the input too (RE2's `(?m)`); without it, only at its ends. */
  readonly multiline?: boolean | undefined
  /** The pattern is plain text, matched as it is. */
  readonly literal?: boolean | undefined
}

/** A compiled pattern: whether it matches somewhere in a text. */
export interface Matcher {
  readonly test: (text: string) => boolean
}

/** A pattern that cannot be compiled, with what to do about it. */
export class RegexError extends Data.TaggedError("RegexError")<{
  /** What is wrong, e.g. RE2's own message. */
  readonly reason: string
  /** What the sender can do instead. */
  readonly hint: string
}> {
  override get message(): string {
    return `invalid regular expression (RE2 syntax): ${this.reason}; ${this.hint}`
  }
}

const DEFAULT_HINT = "correct the pattern"

/** RE2 syntax lacks these; each is named in the refusal, with what to write instead. */
const unsupported: ReadonlyArray<{ readonly test: RegExp; readonly reason: string; readonly hint: string }> = [
  {
    test: /^\\[1-9]/,
    reason: "backreferences (\\1, \\2, ...) are not supported",
    hint: "RE2 cannot match a repeat of an earlier group; search for the text itself"
  },
  {
    test: /^\\k</,
    reason: "named backreferences (\\k<name>) are not supported",
    hint: "RE2 cannot match a repeat of an earlier group; search for the text itself"
  },
  {
    test: /^\(\?<?[=!]/,
    reason: "lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported",
    hint: "match the surrounding text as part of the pattern instead"
  },
  {
    test: /^[*+?]\+/,
    reason: "possessive quantifiers (*+, ++, ?+) are not supported",
    hint: "drop the second +; RE2 never backtracks, so a plain quantifier is already as fast"
  }
]

/**
 * Rewrites JavaScript's `\uXXXX` and `\u{X}` to RE2's `\x{...}`, and finds the first construct RE2 lacks. Escapes
 * and character classes are skipped as units, so `[\1]` or `\(?=` are not mistaken for what they are not.
 */
const scan = (pattern: string): Either.Either<string, RegexError> => {
  let out = ""
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") {
      const unicode = /^\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})/.exec(pattern.slice(i, i + 10))
      if (unicode !== null) {
        out += `\\x{${unicode[1] ?? unicode[2]}}`
        i += unicode[0].length - 1
        continue
      }
      if (!inClass) {
        const found = unsupported.find((u) => u.test.test(pattern.slice(i, i + 3)))
        if (found !== undefined) return Either.left(new RegexError({ reason: found.reason, hint: found.hint }))
      }
      out += pattern.slice(i, i + 2)
      i++
      continue
    }
    if (inClass) {
      if (c === "]") inClass = false
    } else if (c === "[") {
      inClass = true
      // a "]" right after "[" or "[^" is a member, not the end
      const start = pattern[i + 1] === "^" ? i + 2 : i + 1
      if (pattern[start] === "]") {
        out += pattern.slice(i, start + 1)
        i = start
        continue
      }
    } else {
      const found = unsupported.find((u) => u.test.test(pattern.slice(i, i + 4)))
      if (found !== undefined) return Either.left(new RegexError({ reason: found.reason, hint: found.hint }))
    }
    out += c
  }
  return Either.right(out)
}

/** RE2's messages start with "error parsing regexp: "; the rest is what the sender needs. */
const re2Reason = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return text.replace(/^error parsing regexp: /, "")
}

/**
 * Compiles a pattern for RE2, or says why it cannot be. Plain text needs no compiling when case matters: it is
 * searched for with `includes`.
 */
export const compile = (pattern: string, options: Options = {}): Either.Either<Matcher, RegexError> => {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return Either.left(
      new RegexError({
        reason: `the pattern is ${pattern.length} characters long (at most ${MAX_PATTERN_LENGTH})`,
        hint: "search for a shorter distinctive part of the text"
      })
    )
  }
  // plain text (a literal, or a pattern without one metacharacter) is searched for as text: the same answers, faster
  if ((options.literal === true || !/[\\^$.*+?()[\]{}|]/.test(pattern)) && options.ignoreCase !== true) {
    return Either.right({ test: (text) => text.includes(pattern) })
  }
  const source = options.literal === true ? Either.right(RE2JS.quote(pattern)) : scan(pattern)
  if (Either.isLeft(source)) return Either.left(source.left)
  const flags = (options.ignoreCase === true ? RE2JS.CASE_INSENSITIVE : 0) |
    (options.multiline === true ? RE2JS.MULTILINE : 0)
  try {
    const re = RE2JS.compile(source.right, flags)
    return Either.right({ test: (text) => re.test(text) })
  } catch (error) {
    return Either.left(new RegexError({ reason: re2Reason(error), hint: DEFAULT_HINT }))
  }
}
