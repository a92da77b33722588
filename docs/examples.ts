/**
 * Keeps the examples of a doc page and the code that runs them the same text.
 *
 * Each ```` ```ts ```` block of a page is marked `<!-- example: name -->` and is, imports aside, exactly the code
 * between `// #region name` and `// #endregion` in the page's test file, which runs it and checks what the page
 * says it gives. Every name an example imports must be imported by the test file from the same module
 * (`effect-agent-tools` standing for `../src/index.js`), and every region must be shown on the page.
 */
import { expect } from "@effect/vitest"
import * as fs from "node:fs"

export const checkExamples = (page: URL, source: URL): void => {
  const text = fs.readFileSync(page, "utf8")
  const code = fs.readFileSync(source, "utf8")
  const regions = new Map<string, string>()
  for (const match of code.matchAll(/^\/\/ #region (\S+)\n([\s\S]*?)^\/\/ #endregion$/gm)) {
    regions.set(match[1], match[2].trim())
  }
  const imported = new Set<string>()
  for (const match of code.matchAll(/^import (?:type )?\{([^}]+)\} from "([^"]+)"/gm)) {
    const module = /^\.\.\/src\/index\.js$/.test(match[2]) ? "effect-agent-tools" : match[2]
    for (const name of match[1].split(",")) imported.add(`${name.trim()} from ${module}`)
  }
  const blocks = [...text.matchAll(/^(<!-- example: (\S+) -->\n)?```ts\n([\s\S]*?)^```$/gm)]
  expect(blocks.length).toBeGreaterThan(0)
  const shown = new Set<string>()
  for (const [, , name, block] of blocks) {
    expect(name, `a \`\`\`ts block without <!-- example: name -->:\n${block}`).toBeDefined()
    shown.add(name)
    const lines = block.split("\n")
    for (const line of lines) {
      const imports = /^import (?:type )?\{([^}]+)\} from "([^"]+)"$/.exec(line)
      if (imports === null) continue
      for (const each of imports[1].split(",")) {
        expect(imported, `example ${name} imports ${each.trim()} from ${imports[2]}`).toContain(
          `${each.trim()} from ${imports[2]}`
        )
      }
    }
    const body = lines.filter((line) => !line.startsWith("import ")).join("\n").trim()
    expect(body, `example ${name}`).toBe(regions.get(name))
  }
  expect([...regions.keys()].filter((name) => !shown.has(name))).toEqual([])
}
