/**
 * A `.gitignore`'s rules (src/internal/gitignore.ts): the `ignore` package's answers, except that a rule of
 * several `**`, which its RegExp can take minutes over on a deep path, is matched by RE2.
 */
import { describe, expect, it } from "@effect/vitest"
import ignore from "ignore"
import * as Gitignore from "../src/internal/gitignore.js"

/** Files and the paths (a folder's with a trailing /) on which the rules must answer as the `ignore` package does. */
const files: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  [
    "dist/\n*.log\n!keep.log\n/build\ndocs/**/*.tmp\n# a comment\n\n\\#hash\n",
    ["dist/", "dist/a.js", "x/dist/", "a.log", "x/keep.log", "build/", "x/build/", "docs/a/b.tmp", "#hash", "a.ts"]
  ],
  [
    "a/**/b/**/c\n**/x/**/y.txt\n!a/**/b/**/keep/**/c\n",
    ["a/b/c", "a/1/b/2/c", "a/b/c/", "ab/c", "x/y.txt", "q/x/r/y.txt", "a/b/keep/c", "a/1/b/keep/2/c", "a/b/d"]
  ],
  [
    "**/gen/**/*.ts\n!**/gen/**/keep.ts\ngen2/**/x/**/\n",
    ["gen/a.ts", "s/gen/d/a.ts", "gen/keep.ts", "s/gen/d/keep.ts", "gen2/x/", "gen2/a/x/b/", "gen2/a/x/b", "a.ts"]
  ],
  [
    "*.md\n!**/docs/**/README.md\n**/docs/**/draft/**\n",
    ["a.md", "docs/README.md", "x/docs/y/README.md", "docs/draft/a.md", "x/docs/y/draft/z/a.ts", "docs/a.ts"]
  ]
]

describe("gitignore", () => {
  it("answers as the ignore package does, rules of several ** included", () => {
    for (const [text, paths] of files) {
      const ours = Gitignore.make(text)
      const theirs = ignore().add(text)
      for (const path of paths) expect([text, path, ours.ignores(path)]).toEqual([text, path, theirs.ignores(path)])
    }
  })

  it("a rule of ten ** against a path 500 folders deep answers at once (minutes in the ignore package)", () => {
    const rules = Gitignore.make("a/**/".repeat(10) + "c\n*.log\n")
    const deep = "a/".repeat(500)
    const started = performance.now()
    expect(rules.ignores(`${deep}b`)).toBe(false)
    expect(rules.ignores(`${deep}c`)).toBe(true)
    expect(rules.ignores(`${deep}x.log`)).toBe(true)
    expect(performance.now() - started).toBeLessThan(500)
  })
})
