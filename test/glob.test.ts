/**
 * Globs a model gives, compiled for RE2 (src/internal/glob.ts): linear in the path whatever the pattern, the same
 * answers as picomatch (what the tools used before) on everyday patterns, and refusals that say what to write.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import picomatch from "picomatch"
import * as Glob from "../src/internal/glob.js"

const matcher = (pattern: string | ReadonlyArray<string>, options?: Glob.Options): Glob.Matcher => {
  const compiled = Glob.compile(pattern, options)
  if (Either.isLeft(compiled)) throw new Error(compiled.left.message)
  return compiled.right
}

const refusal = (pattern: string): string => {
  const compiled = Glob.compile(pattern)
  if (Either.isRight(compiled)) throw new Error(`${pattern} compiled`)
  return compiled.left.message
}

/** Patterns and paths a model and a repository have, on which the two must agree. */
const everyday: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["*.ts", ["a.ts", ".a.ts", "a.tsx", "src/a.ts", "a.ts/b"]],
  ["**/*.ts", ["a.ts", "src/a.ts", "src/x/y/a.ts", ".hidden/a.ts", "src/a.js"]],
  ["src/**", ["src", "src/a", "src/a/b.ts", "srcs/a", "lib/src/a"]],
  ["src/**/test_*.py", ["src/test_a.py", "src/x/test_a.py", "src/x/y/test_.py", "test_a.py", "src/a_test.py"]],
  ["**/node_modules/**", ["node_modules/a", "x/node_modules/a/b", "node_modulesx/a"]],
  ["**", ["a", "a/b/c", ".git/x"]],
  ["a/**/b", ["a/b", "a/x/b", "a/x/y/b", "ab", "a/bb"]],
  ["*.{js,ts}", ["a.js", "a.ts", "a.md", "a.{js,ts}"]],
  ["{src,lib}/**/*.{ts,tsx}", ["src/a.ts", "lib/x/a.tsx", "test/a.ts", "src/a.js"]],
  ["{a,{b,c}}.txt", ["a.txt", "b.txt", "c.txt", "d.txt"]],
  ["file{1..3}.txt", ["file1.txt", "file3.txt", "file4.txt"]],
  ["?.ts", ["a.ts", "ab.ts", "/.ts"]],
  ["[a-c]*.md", ["a.md", "cz.md", "d.md", "A.md"]],
  ["[[:digit:]]*", ["1a", "a1"]],
  ["@(foo|bar).js", ["foo.js", "bar.js", "baz.js"]],
  ["*(a)b", ["b", "aaab", "ab", "cb"]],
  ["+(a)b", ["b", "aaab"]],
  ["a\\*b", ["a*b", "axb"]],
  ["./a.txt", ["a.txt", "b/a.txt"]],
  ["docs/*", ["docs/a.md", "docs/a/b.md", "docs"]],
  ["a+b$(c).txt", ["a+b$(c).txt", "aab$c.txt"]],
  ["**/.env*", [".env", "x/.env.local", "x/env"]]
]

describe("glob", () => {
  it("a pattern that backtracks polynomially in JavaScript matches in linear time", () => {
    // picomatch's RegExp took about 4 s for 41 characters; file names may be 255
    const stars = matcher("*a".repeat(10) + "*b")
    const name = "a".repeat(250) + "!"
    const started = performance.now()
    expect(stars.test(name)).toBe(false)
    expect(matcher("*(a)".repeat(8) + "b").test(name)).toBe(false)
    expect(matcher("**/".repeat(12) + "c").test("a/".repeat(100) + "!")).toBe(false)
    expect(performance.now() - started).toBeLessThan(500)
    expect(stars.test("a".repeat(20) + "b")).toBe(true)
  })

  it("agrees with picomatch on everyday patterns and paths", () => {
    for (const [pattern, paths] of everyday) {
      const ours = matcher(pattern)
      const theirs = picomatch(pattern, { dot: true })
      for (const path of paths) expect([pattern, path, ours.test(path)]).toEqual([pattern, path, theirs(path)])
    }
  })

  it("basename: a pattern without / matches a path's last name; one with / the whole path", () => {
    for (const [pattern, paths] of everyday) {
      const ours = matcher(pattern, { basename: true })
      // (picomatch's basename option also changes how some patterns with a / match: `src/**` misses `src/a`)
      const theirs = picomatch(pattern, { dot: true, basename: !pattern.includes("/") })
      for (const path of paths) expect([pattern, path, ours.test(path)]).toEqual([pattern, path, theirs(path)])
    }
    expect(matcher("*.ts", { basename: true }).test("src/x/a.ts")).toBe(true)
    expect(matcher("x/*.ts", { basename: true }).test("src/x/a.ts")).toBe(false)
  })

  it("several patterns: a path matches if it matches any", () => {
    const either = matcher(["*.md", "build"], { basename: true })
    expect(["docs/a.md", "x/build", "src/a.ts"].map(either.test)).toEqual([true, true, false])
  })

  it("a class negated with ! or ^, a ] first in a class, and an unclosed [ or { as itself", () => {
    expect(["a", "b"].map(matcher("[!a]").test)).toEqual([false, true])
    expect(["a", "b"].map(matcher("[^a]").test)).toEqual([false, true])
    expect(["]", "a", "b"].map(matcher("[]a]").test)).toEqual([true, true, false])
    expect(matcher("a[b").test("a[b")).toBe(true)
    expect(matcher("a{b").test("a{b")).toBe(true)
    expect(matcher("{a}").test("{a}")).toBe(true)
  })

  it("!(...) is refused saying what to write; so is a pattern over the length cap, before compiling", () => {
    expect(refusal("!(*.test).ts")).toBe(
      "invalid glob pattern: !(...) (anything but these) is not supported; name what you want instead " +
        "(`*.{ts,js}`), or match it and leave the matches out"
    )
    expect(refusal("*".repeat(Glob.MAX_GLOB_LENGTH + 1))).toBe(
      `invalid glob pattern: the pattern is ${Glob.MAX_GLOB_LENGTH + 1} characters long (at most ` +
        `${Glob.MAX_GLOB_LENGTH}); give a shorter pattern`
    )
    expect(refusal("[z-a]")).toMatch(/^invalid glob pattern: .*z-a.*; correct the pattern$/)
  })
})
