/**
 * The example check of `npm run check` (scripts/check-examples.mjs) on pages made here: a broken example is reported
 * with its page and line, an example that says what it continues is checked with that code, and one that says so
 * wrongly is reported.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { checkPages, examplesOf } from "../scripts/check-examples.mjs"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "examples-"))

const page = (name: string, lines: ReadonlyArray<string>): string => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, lines.join("\n"))
  return file
}

const broken = page("broken.md", [
  "# A page",
  "",
  "```ts",
  "const fine: number = 1",
  "```",
  "",
  "```ts",
  "",
  "const n: number = \"one\"",
  "```"
])

const continued = page("continued.md", [
  "<!-- example: first -->",
  "```ts",
  "import { join } from \"node:path\"",
  "export const base = join(\"a\", \"b\")",
  "```",
  "<!-- example: second -->",
  "```ts",
  "// continues the previous example",
  "import { join } from \"node:path\"",
  "const more: string = join(base, \"c\")",
  "```",
  "```ts",
  "// continues the examples \"first\" and \"second\"",
  "const all: string = more + base",
  "```",
  "```ts",
  "const alone: string = base",
  "```"
])

const wrong = page("wrong.md", [
  "```ts",
  "// continues the example \"nowhere\"",
  "const x = 1",
  "```",
  "```ts",
  "// given: root: string",
  "const length: number = root.length",
  "```"
])

/** The problems of the pages, checked in one program as `npm run check` checks the real ones, by page name. */
let problems: Map<string, Array<string>>

beforeAll(() => {
  problems = new Map()
  for (const problem of checkPages([broken, continued, wrong])) {
    const [, name, rest] = /^.*?([a-z]+\.md):(.*)$/.exec(problem)!
    problems.set(name, [...(problems.get(name) ?? []), `${name}:${rest}`])
  }
}, 60_000)

describe("the example check", () => {
  it("reports a broken example with its page and line, and passes the ones that compile", () => {
    expect(problems.get("broken.md")).toEqual([
      "broken.md:9: TS2322: Type 'string' is not assignable to type 'number'."
    ])
  })

  it("checks an example with the ones it says it continues, their imports merged, and no other", () => {
    expect(problems.get("continued.md")).toEqual(["continued.md:17: TS2304: Cannot find name 'base'."])
  })

  it("reports an example that continues one the page does not have; declares what a given line names", () => {
    expect(problems.get("wrong.md")).toEqual([
      "wrong.md:2: the example continues another, but there is no earlier example \"nowhere\" on the page"
    ])
  })

  it("finds every block of a page with its name and first line", () => {
    const examples = examplesOf(
      "p.md",
      "text\n<!-- example: a -->\n```ts\nconst a = 1\n```\n\n```ts\n// continues the previous example\n```\n"
    )
    expect(examples.map((e) => [e.line, e.name, e.continues])).toEqual([[4, "a", []], [8, undefined, [0]]])
  })
})
