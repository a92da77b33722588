/**
 * `glob`, `grep`, `list_dir`: walks of the workspace that respect `.gitignore` files (at every level, as git does),
 * skip `node_modules` and `.git`, never follow symbolic links (a link could lead outside the workspace), and cap
 * what they return with a note saying so.
 *
 * The walk reads directories with `node:fs` (`withFileTypes`, one call per directory instead of a stat per entry);
 * `.gitignore` rules are applied with the `ignore` package and globs with `picomatch`.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import ignore from "ignore"
import type { Dirent } from "node:fs"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import picomatch from "picomatch"
import { reasonOf } from "../internal/reason.js"
import * as Tool from "../Tool.js"
import { WorkspaceError } from "./errors.js"
import type { Root } from "./paths.js"
import { display, resolve } from "./paths.js"

export const MAX_GLOB_RESULTS = 500
export const MAX_GREP_MATCHES = 200
export const MAX_LIST_ENTRIES = 500
/** Files larger than this are not searched by `grep`. */
export const MAX_GREP_FILE_BYTES = 2 * 1024 * 1024
const MAX_MATCH_LINE = 300

/** Folders no walk enters. */
export const ALWAYS_SKIPPED: ReadonlySet<string> = new Set([".git", "node_modules"])

interface Context {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly root: Root
}

interface Entry {
  readonly absolute: string
  /** Relative to the walk's base, with `/`. */
  readonly relative: string
  readonly name: string
  readonly kind: "file" | "directory" | "link"
  readonly depth: number
}

type Matcher = { readonly base: string; readonly ignores: (relative: string) => boolean }

const loadGitignore = (dir: string): Effect.Effect<Matcher | undefined> =>
  Effect.promise(() => fs.readFile(nodePath.join(dir, ".gitignore"), "utf8").catch(() => undefined)).pipe(
    Effect.map((text) => {
      if (text === undefined) return undefined
      const rules = ignore().add(text)
      return { base: dir, ignores: (relative: string) => rules.ignores(relative) }
    })
  )

/**
 * Walks `start` depth first in name order, calling `visit` for every entry that is not ignored: it answers
 * `"stop"` to end the walk, `"skip"` not to enter a folder. `.gitignore` files from the workspace root down to
 * `start` apply too.
 */
const walk = (
  ctx: Context,
  start: string,
  visit: (entry: Entry) => "continue" | "skip" | "stop"
): Effect.Effect<void> =>
  Effect.gen(function*() {
    // the .gitignore files above the start, from the root down
    const inherited: Array<Matcher> = []
    const chain: Array<string> = []
    for (let dir = start;; dir = nodePath.dirname(dir)) {
      chain.unshift(dir)
      if (dir === ctx.root.path || nodePath.dirname(dir) === dir) break
    }
    for (const dir of chain.slice(0, -1)) {
      const matcher = yield* loadGitignore(dir)
      if (matcher !== undefined) inherited.push(matcher)
    }
    const isIgnored = (matchers: ReadonlyArray<Matcher>, absolute: string, directory: boolean) =>
      matchers.some((m) => {
        const relative = nodePath.relative(m.base, absolute).split(nodePath.sep).join("/")
        return relative !== "" && !relative.startsWith("..") && m.ignores(directory ? `${relative}/` : relative)
      })
    let stopped = false
    const go = (dir: string, depth: number, matchers: ReadonlyArray<Matcher>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const own = yield* loadGitignore(dir)
        const active = own === undefined ? matchers : [...matchers, own]
        const entries = yield* Effect.promise(() =>
          fs.readdir(dir, { withFileTypes: true }).catch(() => [] as Array<Dirent>)
        )
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        for (const dirent of entries) {
          if (stopped) return
          const absolute = nodePath.join(dir, dirent.name)
          const kind = dirent.isSymbolicLink() ? "link" : dirent.isDirectory() ? "directory" : "file"
          if (kind === "directory" && ALWAYS_SKIPPED.has(dirent.name)) continue
          if (isIgnored(active, absolute, kind === "directory")) continue
          const entry: Entry = {
            absolute,
            relative: nodePath.relative(start, absolute).split(nodePath.sep).join("/"),
            name: dirent.name,
            kind,
            depth
          }
          const next = visit(entry)
          if (next === "stop") {
            stopped = true
            return
          }
          if (kind === "directory" && next === "continue") yield* go(absolute, depth + 1, active)
        }
      })
    yield* go(start, 0, inherited)
  })

const failWith = (message: string) => Effect.fail(new WorkspaceError({ message }))

const directoryOf = (ctx: Context, given: string | undefined) =>
  Effect.gen(function*() {
    const absolute = yield* resolve(ctx.fs, ctx.path, ctx.root, given)
    const shown = display(ctx.path, ctx.root, absolute)
    const info = yield* ctx.fs.stat(absolute).pipe(
      Effect.catchAll(() => failWith(`${shown} does not exist; check the path`))
    )
    return { absolute, shown, isDirectory: info.type === "Directory" }
  })

const toRoot = (ctx: Context, absolute: string): string =>
  nodePath.relative(ctx.root.path, absolute).split(nodePath.sep).join("/")

export const glob = (ctx: Context) =>
  Tool.make("glob", {
    description:
      "Find files of the workspace whose path matches a glob pattern (e.g. `**/*.ts`, `src/**/test_*.py`). " +
      "Paths are matched relative to `path` (default the workspace root); .gitignore is respected.",
    parameters: {
      pattern: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "The glob pattern" }),
      path: Schema.optional(Schema.String.annotations({ description: "The folder to search (default the root)" }))
    },
    failure: WorkspaceError,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    handler: ({ path: given, pattern }) =>
      Effect.gen(function*() {
        const base = yield* directoryOf(ctx, given)
        if (!base.isDirectory) return yield* failWith(`${base.shown} is a file; give a folder to search`)
        const matches = picomatch(pattern, { dot: true })
        const found: Array<string> = []
        let total = 0
        yield* walk(ctx, base.absolute, (entry) => {
          if (entry.kind === "file" && matches(entry.relative)) {
            total++
            if (found.length < MAX_GLOB_RESULTS) found.push(toRoot(ctx, entry.absolute))
          }
          return "continue"
        })
        if (total === 0) return `no files match ${pattern} in ${base.shown}`
        const note = total > found.length
          ? `\n(showing ${found.length} of ${total} matches; narrow the pattern or the path)`
          : ""
        return found.join("\n") + note
      })
  })

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

export const grep = (ctx: Context) =>
  Tool.make("grep", {
    description: "Search the contents of the workspace's files for a regular expression (JavaScript syntax) or, " +
      "with literal, a plain string. Answers `file:line: text`; .gitignore is respected, binary files skipped.",
    parameters: {
      pattern: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "What to search for" }),
      path: Schema.optional(Schema.String.annotations({ description: "A folder or file (default the root)" })),
      include: Schema.optional(
        Schema.String.annotations({ description: "Only files whose name or path matches this glob (e.g. `*.ts`)" })
      ),
      literal: Schema.optional(Schema.Boolean.annotations({ description: "Treat pattern as a plain string" }))
    },
    failure: WorkspaceError,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    handler: ({ include, literal, path: given, pattern }) =>
      Effect.gen(function*() {
        let regexp: RegExp
        try {
          regexp = new RegExp(literal === true ? escapeRegExp(pattern) : pattern)
        } catch (error) {
          return yield* failWith(
            `invalid regular expression: ${reasonOf(error)}; ` +
              "set literal to search for the text as it is"
          )
        }
        const base = yield* directoryOf(ctx, given)
        const included = include === undefined ? undefined : picomatch(include, { dot: true, basename: true })
        const files: Array<string> = []
        if (base.isDirectory) {
          yield* walk(ctx, base.absolute, (entry) => {
            if (entry.kind === "file" && (included === undefined || included(entry.relative))) {
              files.push(entry.absolute)
            }
            return "continue"
          })
        } else {
          files.push(base.absolute)
        }
        const lines: Array<string> = []
        let total = 0
        for (const file of files) {
          const bytes = yield* Effect.promise(() =>
            fs.stat(file).then((s) => s.size <= MAX_GREP_FILE_BYTES ? fs.readFile(file) : undefined).catch(() =>
              undefined
            )
          )
          if (bytes === undefined || bytes.subarray(0, 8192).includes(0)) continue
          const text = bytes.toString("utf8").split("\n")
          for (let i = 0; i < text.length; i++) {
            if (!regexp.test(text[i])) continue
            total++
            if (lines.length < MAX_GREP_MATCHES) {
              const line = text[i].length > MAX_MATCH_LINE ? `${text[i].slice(0, MAX_MATCH_LINE)}…` : text[i]
              lines.push(`${toRoot(ctx, file)}:${i + 1}: ${line}`)
            }
          }
        }
        if (total === 0) return `no matches for ${pattern} in ${base.shown}`
        const note = total > lines.length ? `\n(showing ${lines.length} of ${total} matches; narrow the search)` : ""
        return lines.join("\n") + note
      })
  })

export const listDir = (ctx: Context) =>
  Tool.make("list_dir", {
    description: "List a folder of the workspace as a tree (folders end with /, links with @). .gitignore is " +
      "respected; node_modules and .git are skipped.",
    parameters: {
      path: Schema.optional(Schema.String.annotations({ description: "The folder (default the root)" })),
      ignore: Schema.optional(
        Schema.Array(Schema.String).annotations({ description: "Glob patterns of names or paths to leave out" })
      )
    },
    failure: WorkspaceError,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    handler: ({ ignore: patterns, path: given }) =>
      Effect.gen(function*() {
        const base = yield* directoryOf(ctx, given)
        if (!base.isDirectory) return yield* failWith(`${base.shown} is a file; use read_file to read it`)
        const skip = patterns === undefined || patterns.length === 0
          ? undefined
          : picomatch([...patterns], { dot: true, basename: true })
        const lines = [`${base.shown === "." ? "." : base.shown}/`]
        let total = 0
        yield* walk(ctx, base.absolute, (entry) => {
          if (skip !== undefined && skip(entry.relative)) return "skip"
          total++
          if (total <= MAX_LIST_ENTRIES) {
            const suffix = entry.kind === "directory" ? "/" : entry.kind === "link" ? "@" : ""
            lines.push(`${"  ".repeat(entry.depth + 1)}${entry.name}${suffix}`)
          }
          return "continue"
        })
        if (total > MAX_LIST_ENTRIES) {
          lines.push(`(showing ${MAX_LIST_ENTRIES} of ${total} entries; list a subfolder or add ignore patterns)`)
        }
        if (total === 0) lines.push("  (empty)")
        return lines.join("\n")
      })
  })
