import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as Regex from "../src/internal/regex.js"

const matcher = (pattern: string, options?: Regex.Options): Regex.Matcher => {
  const compiled = Regex.compile(pattern, options)
  if (Either.isLeft(compiled)) throw new Error(compiled.left.message)
  return compiled.right
}

const refusal = (pattern: string): string => {
  const compiled = Regex.compile(pattern)
  if (Either.isRight(compiled)) throw new Error(`${pattern} compiled`)
  return compiled.left.message
}

describe("regex", () => {
  it("a pattern that backtracks exponentially in JavaScript matches in linear time", () => {
    const pathological = matcher("^(a+)+$")
    // JavaScript's RegExp takes about 16 s on 29 characters; this is 100,000
    const line = "a".repeat(100_000) + "!"
    const started = performance.now()
    expect(pathological.test(line)).toBe(false)
    expect(pathological.test("a".repeat(29) + "!")).toBe(false)
    expect(performance.now() - started).toBeLessThan(500)
    expect(pathological.test("aaaa")).toBe(true)
  })

  it("everyday syntax works: classes, escapes, anchors, alternation, counted repeats, named groups", () => {
    expect(matcher("^export (const|function) \\w+").test("export const a = 1")).toBe(true)
    expect(matcher("\\d{3}-\\d{4}").test("call 555-1234")).toBe(true)
    expect(matcher("(?<word>ab)+c").test("xababc")).toBe(true)
    expect(matcher("[\\]x]").test("]")).toBe(true)
    expect(matcher("[]a]").test("]")).toBe(true)
    expect(matcher("c\\(1 \\+ 2\\)").test("c(1 + 2)")).toBe(true)
  })

  it("JavaScript's \\uXXXX and \\u{X} escapes mean the same code points", () => {
    expect(matcher("\\u0041\\u{1F600}").test("A😀")).toBe(true)
    expect(matcher("[\\u0041-\\u0043]+").test("ABC")).toBe(true)
  })

  it("ignoreCase folds case, Unicode included; multiline makes ^ and $ match at line breaks", () => {
    expect(matcher("todo").test("TODO: x")).toBe(false)
    expect(matcher("todo", { ignoreCase: true }).test("TODO: x")).toBe(true)
    expect(matcher("é", { ignoreCase: true }).test("É")).toBe(true)
    expect(matcher("^b$").test("a\nb")).toBe(false)
    expect(matcher("^b$", { multiline: true }).test("a\nb")).toBe(true)
  })

  it("literal patterns match as plain text, with or without ignoreCase", () => {
    expect(matcher("c(1 +", { literal: true }).test("c(1 + 2)")).toBe(true)
    expect(matcher("C(1 +", { literal: true }).test("c(1 + 2)")).toBe(false)
    expect(matcher("C(1 +", { literal: true, ignoreCase: true }).test("c(1 + 2)")).toBe(true)
  })

  it("backreferences, lookaround and possessive quantifiers are refused, naming the construct and the way out", () => {
    expect(refusal("(a)\\1")).toBe(
      "invalid regular expression (RE2 syntax): backreferences (\\1, \\2, ...) are not supported; RE2 cannot " +
        "match a repeat of an earlier group; search for the text itself"
    )
    expect(refusal("(?<q>['\"]).*\\k<q>")).toContain("named backreferences (\\k<name>) are not supported")
    for (const pattern of ["foo(?=bar)", "foo(?!bar)", "(?<=foo)bar", "(?<!foo)bar"]) {
      expect(refusal(pattern)).toBe(
        "invalid regular expression (RE2 syntax): lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not " +
          "supported; match the surrounding text as part of the pattern instead"
      )
    }
    expect(refusal("a++b")).toContain("possessive quantifiers (*+, ++, ?+) are not supported; drop the second +")
  })

  it("the same characters inside a class or after a backslash are not mistaken for those constructs", () => {
    expect(matcher("[(?=]+").test("=")).toBe(true)
    expect(matcher("\\(?=").test("(=")).toBe(true)
    expect(matcher("a\\++").test("a++")).toBe(true)
  })

  it("other syntax errors carry RE2's own words and a hint", () => {
    expect(refusal("c(1 +")).toBe(
      "invalid regular expression (RE2 syntax): missing closing ): `c(1 +`; correct the pattern"
    )
    expect(refusal("a{5000}")).toContain("invalid repeat count")
  })

  it("a pattern over the length cap is refused before compiling", () => {
    expect(refusal("a".repeat(Regex.MAX_PATTERN_LENGTH + 1))).toBe(
      `invalid regular expression (RE2 syntax): the pattern is ${Regex.MAX_PATTERN_LENGTH + 1} characters long ` +
        `(at most ${Regex.MAX_PATTERN_LENGTH}); search for a shorter distinctive part of the text`
    )
  })
})
