/**
 * `@effect/ai` is an optional peer: the root module, and every module it reaches, must load without it. The rule
 * is kept by reading the import graph, not by memory: from src/index.ts, every relative import is followed, and
 * no module reached may import @effect/ai; across src, only the EffectAi module's internal file and the agent's
 * @effect/ai model (loaded by a dynamic `import()` when a run first asks it) do at run time, and the EffectAi and
 * Agent modules for their types.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src")

const importsOf = (file: string): ReadonlyArray<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/^(?:import|export)\s[^"']*?from\s+["']([^"']+)["']/gm)]
    .filter((match) => !/^import type /.test(match[0]))
    .map((match) => match[1])

const reachable = (entry: string): ReadonlySet<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith(".")) visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")))
    }
  }
  visit(entry)
  return seen
}

const allFiles = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? allFiles(path.join(dir, entry.name)) : [path.join(dir, entry.name)]
  ).filter((file) => file.endsWith(".ts"))

describe("@effect/ai stays optional", () => {
  it("no module the root index reaches imports @effect/ai at run time", () => {
    const files = reachable(path.join(src, "index.ts"))
    expect(files.size).toBeGreaterThan(10)
    const offenders = [...files].filter((file) =>
      importsOf(file).some((specifier) => specifier.startsWith("@effect/ai"))
    )
    expect(offenders.map((file) => path.relative(src, file))).toEqual([])
  })

  const importersOf = (pattern: RegExp): ReadonlyArray<string> =>
    allFiles(src).filter((file) => pattern.test(fs.readFileSync(file, "utf8"))).map((file) => path.relative(src, file))
      .sort()

  it("only the EffectAi module's internal file and the agent's @effect/ai model import it at run time", () => {
    expect(importersOf(/^import (?!type )[^"']*from\s+["']@effect\/ai(\/[^"']*)?["']/m)).toEqual([
      path.join("internal", "agentLanguageModel.ts"),
      path.join("internal", "providers", "effectAi.ts")
    ])
    expect(importersOf(/^import type [^"']*from\s+["']@effect\/ai(\/[^"']*)?["']/m)).toEqual([
      "Agent.ts",
      "EffectAi.ts",
      path.join("internal", "agentLanguageModel.ts"),
      path.join("internal", "providers", "effectAi.ts")
    ])
  })

  it("the agent's @effect/ai model is reached from the root only by a dynamic import, when a run needs it", () => {
    const files = reachable(path.join(src, "index.ts"))
    expect(files).toContain(path.join(src, "internal", "agent.ts"))
    expect(files).not.toContain(path.join(src, "internal", "agentLanguageModel.ts"))
    expect(importersOf(/import\("\.\/agentLanguageModel\.js"\)/)).toEqual([path.join("internal", "agent.ts")])
  })
})
