/**
 * What the package asks of an app that installs it: the library imports only its dependencies and peers (never a
 * dev dependency), optional peers (`@effect/platform-node`, `@effect/ai`, `@effect/sql*`) never from the root
 * index, and the CLI's own dependencies only from
 * src/cli/, which ships as one bundle. `npm run pack:check` installs the real tarball; this keeps the rule offline.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { builtinModules } from "node:module"
import * as path from "node:path"
import { root } from "./interop/peers.js"

const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(path.join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [path.join(dir, entry.name)]
      : []
  )

/** The package a specifier names (`@effect/platform/FileSystem` is `@effect/platform`), or undefined for a path. */
const packageOf = (specifier: string): string | undefined => {
  if (specifier.startsWith(".") || specifier.startsWith("node:") || builtinModules.includes(specifier)) return
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]
}

interface Imports {
  readonly static: Set<string>
  readonly dynamic: Set<string>
}

const importsOf = (files: ReadonlyArray<string>): Imports => {
  const found: Imports = { static: new Set(), dynamic: new Set() }
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8")
    for (
      const [, specifier] of text.matchAll(
        /^(?:import|export)(?:\s+type)?\s+(?:\*(?:\s+as\s+\w+)?|\{[^}]*\}|\w+(?:\s*,\s*\{[^}]*\})?)\s+from\s+"([^"]+)"/gm
      )
    ) {
      const name = packageOf(specifier)
      if (name !== undefined) found.static.add(name)
    }
    for (const [, specifier] of text.matchAll(/\bimport\("([^"]+)"\)/g)) {
      const name = packageOf(specifier)
      if (name !== undefined) found.dynamic.add(name)
    }
  }
  return found
}

/**
 * The packages the root index loads when imported: the static, value (not `import type`) imports of every module
 * reachable from src/index.ts through such imports. What a dynamic `import()` or a subpath-only module loads is not
 * among them.
 */
const loadedByRoot = (): Set<string> => {
  const found = new Set<string>()
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const text = fs.readFileSync(file, "utf8")
    for (
      const [, specifier] of text.matchAll(
        /^(?:import|export)\s+(?!type\b)(?:\*(?:\s+as\s+\w+)?|\{[^}]*\}|\w+(?:\s*,\s*\{[^}]*\})?)\s+from\s+"([^"]+)"/gm
      )
    ) {
      if (specifier.startsWith(".")) visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")))
      else {
        const name = packageOf(specifier)
        if (name !== undefined) found.add(name)
      }
    }
  }
  visit(path.join(root, "src/index.ts"))
  return found
}

const library = importsOf(sources(path.join(root, "src")).filter((f) => !f.includes(`${path.sep}cli${path.sep}`)))
const cli = importsOf(sources(path.join(root, "src/cli")))
const installed = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies)])

/** Peers a user installs only for the module that needs them: a journal, the @effect/ai bridge, `StdioProvider.main`. */
const OPTIONAL_PEERS = [
  "@effect/ai",
  "@effect/platform-node",
  "@effect/sql",
  "@effect/sql-pg",
  "@effect/sql-sqlite-node"
]

describe("the package", () => {
  it("effect and @effect/platform are peers, the modules' own needs optional ones; none is a dependency", () => {
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(
      ["@effect/platform", "effect", ...OPTIONAL_PEERS].sort()
    )
    expect(manifest.peerDependenciesMeta).toEqual(
      Object.fromEntries(OPTIONAL_PEERS.map((name) => [name, { optional: true }]))
    )
    for (const name of Object.keys(manifest.peerDependencies)) {
      expect(manifest.dependencies[name], name).toBeUndefined()
      expect(manifest.devDependencies[name], `${name} is installed for the repository itself`).toBeDefined()
    }
  })

  it("the library imports only its dependencies and peers; importing the root loads no optional peer", () => {
    expect([...library.static]).toEqual(
      expect.arrayContaining([
        "effect",
        "@effect/platform",
        "@modelcontextprotocol/server",
        "@modelcontextprotocol/client"
      ])
    )
    expect([...library.static, ...library.dynamic].filter((name) => !installed.has(name))).toEqual([])
    const loaded = loadedByRoot()
    expect(loaded).toContain("effect")
    expect(OPTIONAL_PEERS.filter((name) => loaded.has(name))).toEqual([])
    expect(library.dynamic).toContain("@effect/platform-node")
  })

  it("the CLI's own dependencies are dev dependencies, imported by src/cli/ alone", () => {
    for (const name of ["@effect/cli", "@effect/platform-node"]) {
      expect(cli.static.has(name), name).toBe(true)
      expect(manifest.devDependencies[name], name).toBeDefined()
      expect(manifest.dependencies[name], name).toBeUndefined()
    }
    for (const name of ["@effect/cli", "@effect/printer", "@effect/printer-ansi"]) {
      expect(library.static.has(name), name).toBe(false)
    }
  })
})
