/**
 * `glob`, `grep`, `list_dir`: walks of the workspace that respect `.gitignore` files (at every level, as git does),
 * skip `node_modules` and `.git`, never follow symbolic links (a link could lead outside the workspace), and cap
 * what they return with a note saying so.
 *
 * The walk reads directories with `node:fs` (`withFileTypes`, one call per directory instead of a stat per entry);
 * `.gitignore` rules are applied with the `ignore` package, a rule of several `**` with RE2
 * (internal/gitignore.ts); globs a model gives (`glob`'s pattern, `grep`'s `include`, `list_dir`'s `ignore`) are
 * matched by RE2 (internal/glob.ts): in time linear in each path, whatever the pattern.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as nodePath from "node:path"
import * as Gitignore from "../internal/gitignore.js"
import * as Glob from "../internal/glob.js"
import * as Regex from "../internal/regex.js"
import * as Tool from "../Tool.js"
import type { Dir, ReadRefused } from "./confined.js"
import { describeKind, openDir, readdir, readRegular } from "./confined.js"
import { WorkspaceError } from "./errors.js"
import type { Root, Target } from "./paths.js"
import { resolve, staysInside } from "./paths.js"

export const MAX_GLOB_RESULTS = 500
export const MAX_GREP_MATCHES = 200
export const MAX_LIST_ENTRIES = 500
/** Files larger than this are not searched by `grep`. */
export const MAX_GREP_FILE_BYTES = 2 * 1024 * 1024
/** Folders deeper than this below a walk's start are not entered (each level holds a descriptor open). */
export const MAX_WALK_DEPTH = 100
/** A `.gitignore` larger than this is not read. */
const MAX_GITIGNORE_BYTES = 1024 * 1024
const MAX_MATCH_LINE = 300

/** Folders no walk enters. */
export const ALWAYS_SKIPPED: ReadonlySet<string> = new Set([".git", "node_modules"])

interface Context {
  readonly root: Root
}

interface Entry {
  /** Relative to the walk's base, with `/`. */
  readonly relative: string
  /** Relative to the root, with `/`. */
  readonly fromRoot: string
  readonly name: string
  /** `other`: a FIFO, a device, a socket; nothing a walk reads. */
  readonly kind: "file" | "directory" | "link" | "other"
  readonly depth: number
  /** The folder the entry is in, open. */
  readonly dir: Dir
}

type Matcher = { readonly base: string; readonly ignores: (relative: string) => boolean }

/** The rules of `dir`'s `.gitignore`, read like any file of the workspace: a regular file, bounded. */
const loadGitignore = (ctx: Context, dir: Dir, base: string): Effect.Effect<Matcher | undefined> =>
  readRegular(ctx.root.dir, dir, ".gitignore", MAX_GITIGNORE_BYTES).pipe(
    Effect.map((bytes) => {
      const rules = Gitignore.make(Buffer.from(bytes).toString("utf8"))
      return { base, ignores: rules.ignores }
    }),
    Effect.orElseSucceed(() => undefined)
  )

const slashed = (relative: string): string => relative.split(nodePath.sep).join("/")

/**
 * Walks the folder `start` depth first in name order, calling `visit` for every entry that is not ignored: it
 * answers `"stop"` to end the walk, `"skip"` not to enter a folder. `.gitignore` files from the workspace root
 * down to `start` apply too. Folders are opened relative to their parent and never through a link, so a folder
 * replaced by a link mid-walk is skipped, not followed. Gives whether some folder was too deep to enter.
 */
const walk = (
  ctx: Context,
  start: Target,
  visit: (entry: Entry) => Effect.Effect<"continue" | "skip" | "stop">
): Effect.Effect<{ readonly tooDeep: boolean }> =>
  Effect.gen(function*() {
    // the .gitignore files above the start, from the root down, each folder resolved like any path
    const inherited: Array<Matcher> = []
    const chain: Array<string> = []
    for (let dir = nodePath.dirname(start.absolute); staysInside(nodePath.relative(ctx.root.path, dir));) {
      chain.unshift(dir)
      if (dir === ctx.root.path || nodePath.dirname(dir) === dir) break
      dir = nodePath.dirname(dir)
    }
    if (start.absolute !== ctx.root.path) {
      for (const dir of chain) {
        const matcher = yield* Effect.scoped(
          Effect.flatMap(
            Effect.option(resolve(ctx.root, dir)),
            (found) =>
              found._tag === "Some" && found.value.kind === "directory"
                ? loadGitignore(ctx, found.value.dir, dir)
                : Effect.succeed(undefined)
          )
        )
        if (matcher !== undefined) inherited.push(matcher)
      }
    }
    const isIgnored = (matchers: ReadonlyArray<Matcher>, absolute: string, directory: boolean) =>
      matchers.some((m) => {
        const relative = nodePath.relative(m.base, absolute)
        return relative !== "" && staysInside(relative) && m.ignores(`${slashed(relative)}${directory ? "/" : ""}`)
      })
    let stopped = false
    let tooDeep = false
    const go = (dir: Dir, absolute: string, depth: number, matchers: ReadonlyArray<Matcher>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const own = yield* loadGitignore(ctx, dir, absolute)
        const active = own === undefined ? matchers : [...matchers, own]
        const entries = yield* readdir(dir).pipe(Effect.orElseSucceed(() => []))
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        for (const dirent of entries) {
          if (stopped) return
          const path = nodePath.join(absolute, dirent.name)
          const kind = dirent.isSymbolicLink()
            ? "link"
            : dirent.isDirectory()
            ? "directory"
            : dirent.isFile()
            ? "file"
            : "other"
          if (kind === "directory" && ALWAYS_SKIPPED.has(dirent.name)) continue
          if (isIgnored(active, path, kind === "directory")) continue
          const next = yield* visit({
            relative: slashed(nodePath.relative(start.absolute, path)),
            fromRoot: slashed(nodePath.relative(ctx.root.path, path)),
            name: dirent.name,
            kind,
            depth,
            dir
          })
          if (next === "stop") {
            stopped = true
            return
          }
          if (kind !== "directory" || next !== "continue") continue
          if (depth + 1 >= MAX_WALK_DEPTH) {
            tooDeep = true
            continue
          }
          yield* Effect.scoped(
            Effect.flatMap(
              Effect.either(openDir(dir, dirent.name)),
              (child) => Either.isRight(child) ? go(child.right, path, depth + 1, active) : Effect.void
            )
          )
        }
      })
    yield* go(start.dir, start.absolute, 0, inherited)
    return { tooDeep }
  })

const TOO_DEEP_NOTE = `(folders more than ${MAX_WALK_DEPTH} levels down were not entered)`

const failWith = (message: string) => Effect.fail(new WorkspaceError({ message }))

/** The folder `given` names, resolved, or the refusal. */
const folder = (ctx: Context, given: string | undefined, ifFile: string) =>
  Effect.gen(function*() {
    const target = yield* resolve(ctx.root, given)
    if (target.kind === "absent") return yield* failWith(`${target.shown} does not exist; check the path`)
    if (target.kind !== "directory") return yield* failWith(`${target.shown} is a file; ${ifFile}`)
    return target
  })

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
    confined: () => `workspace:${ctx.root.path}`,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    handler: ({ path: given, pattern }) =>
      Effect.gen(function*() {
        const compiled = Glob.compile(pattern)
        if (Either.isLeft(compiled)) return yield* failWith(compiled.left.message)
        const matches = compiled.right
        const base = yield* folder(ctx, given, "give a folder to search")
        const found: Array<string> = []
        let total = 0
        const { tooDeep } = yield* walk(ctx, base, (entry) => {
          if (entry.kind === "file" && matches.test(entry.relative)) {
            total++
            if (found.length < MAX_GLOB_RESULTS) found.push(entry.fromRoot)
          }
          return Effect.succeed("continue")
        })
        const deep = tooDeep ? `\n${TOO_DEEP_NOTE}` : ""
        if (total === 0) return `no files match ${pattern} in ${base.shown}${deep}`
        const note = total > found.length
          ? `\n(showing ${found.length} of ${total} matches; narrow the pattern or the path)`
          : ""
        return found.join("\n") + note + deep
      }).pipe(Effect.scoped)
  })

/** Why a file was not searched, in words; undefined for a file that was. */
type Skipped = "binary" | "too large" | "not a regular file" | "unreadable" | "gone"

/** The kinds a walk counts, in the order it names them; a file gone since the folder was read is not one. */
const SKIP_ORDER: ReadonlyArray<Skipped> = ["binary", "too large", "not a regular file", "unreadable"]

const skipReason = (refusal: ReadRefused): Skipped =>
  refusal.reason === "missing"
    ? "gone"
    : refusal.reason === "too-large"
    ? "too large"
    : refusal.reason === "not-regular"
    ? "not a regular file"
    : "unreadable"

/** One line per skipped kind, e.g. `(3 files not searched: 2 binary, 1 larger than 2 MB)`. */
const skippedNote = (skipped: ReadonlyMap<Skipped, number>): string => {
  let total = 0
  const parts: Array<string> = []
  for (const reason of SKIP_ORDER) {
    const count = skipped.get(reason) ?? 0
    if (count === 0) continue
    total += count
    parts.push(`${count} ${reason === "too large" ? `larger than ${MAX_GREP_FILE_BYTES / 1024 / 1024} MB` : reason}`)
  }
  return total === 0 ? "" : `(${total} file${total === 1 ? "" : "s"} not searched: ${parts.join(", ")})`
}

export const grep = (ctx: Context) =>
  Tool.make("grep", {
    description: "Search the contents of the workspace's files for a regular expression (RE2 syntax, which has " +
      "no backreferences and no lookaround) or, with literal, a plain string. Answers `file:line: text`, one " +
      "line at a time; .gitignore is respected; binary files, files over " +
      `${MAX_GREP_FILE_BYTES / 1024 / 1024} MB and anything but regular files are not searched (and counted).`,
    parameters: {
      pattern: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "What to search for" }),
      path: Schema.optional(Schema.String.annotations({ description: "A folder or file (default the root)" })),
      include: Schema.optional(
        Schema.String.annotations({ description: "Only files whose name or path matches this glob (e.g. `*.ts`)" })
      ),
      literal: Schema.optional(Schema.Boolean.annotations({ description: "Treat pattern as a plain string" })),
      ignore_case: Schema.optional(Schema.Boolean.annotations({ description: "Match letters in either case" }))
    },
    failure: WorkspaceError,
    confined: () => `workspace:${ctx.root.path}`,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    handler: ({ ignore_case, include, literal, path: given, pattern }) =>
      Effect.gen(function*() {
        const compiled = Regex.compile(pattern, { literal, ignoreCase: ignore_case })
        if (Either.isLeft(compiled)) {
          return yield* failWith(
            literal === true
              ? compiled.left.message
              : `${compiled.left.message}; or set literal to search for the text as it is`
          )
        }
        const regex = compiled.right
        const included = include === undefined ? undefined : Glob.compile(include, { basename: true })
        if (included !== undefined && Either.isLeft(included)) return yield* failWith(included.left.message)
        const base = yield* resolve(ctx.root, given)
        const lines: Array<string> = []
        let total = 0
        /** Searches one file; gives why it was not searched, if it was not. */
        const search = (dir: Dir, name: string, fromRoot: string): Effect.Effect<Skipped | undefined> =>
          readRegular(ctx.root.dir, dir, name, MAX_GREP_FILE_BYTES).pipe(
            Effect.map((bytes): Skipped | undefined => {
              if (bytes.subarray(0, 8192).includes(0)) return "binary"
              const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8").split("\n")
              for (let i = 0; i < text.length; i++) {
                if (!regex.test(text[i])) continue
                total++
                if (lines.length < MAX_GREP_MATCHES) {
                  const line = text[i].length > MAX_MATCH_LINE ? `${text[i].slice(0, MAX_MATCH_LINE)}…` : text[i]
                  lines.push(`${fromRoot}:${i + 1}: ${line}`)
                }
              }
              return undefined
            }),
            Effect.catchAll((refusal) => Effect.succeed(skipReason(refusal)))
          )
        const notes: Array<string> = []
        if (base.kind === "absent") return yield* failWith(`${base.shown} does not exist; check the path`)
        if (base.kind === "directory") {
          const skipped = new Map<Skipped, number>()
          const count = (reason: Skipped | undefined) => {
            if (reason !== undefined) skipped.set(reason, (skipped.get(reason) ?? 0) + 1)
          }
          const { tooDeep } = yield* walk(ctx, base, (entry) => {
            if (entry.kind !== "file" && entry.kind !== "other") return Effect.succeed("continue")
            if (included !== undefined && !included.right.test(entry.relative)) return Effect.succeed("continue")
            if (entry.kind === "other") {
              count("not a regular file")
              return Effect.succeed("continue")
            }
            return Effect.as(Effect.map(search(entry.dir, entry.name, entry.fromRoot), count), "continue")
          })
          const note = skippedNote(skipped)
          if (note !== "") notes.push(note)
          if (tooDeep) notes.push(TOO_DEEP_NOTE)
        } else {
          // a file named on purpose: when it is not searched, that is the answer
          const reason = base.kind === "other"
            ? `it is ${describeKind(base.stats!)}, not a regular file`
            : yield* Effect.map(
              search(base.dir, base.rest[0], slashed(nodePath.relative(ctx.root.path, base.absolute))),
              (skipped) =>
                skipped === "binary"
                  ? "it is a binary file"
                  : skipped === "too large"
                  ? `it is larger than ${MAX_GREP_FILE_BYTES / 1024 / 1024} MB`
                  : skipped === "not a regular file"
                  ? "it is not a regular file"
                  : skipped === "unreadable"
                  ? "it cannot be read"
                  : skipped === "gone"
                  ? "it was removed meanwhile"
                  : undefined
            )
          if (reason !== undefined) return `${base.shown} was not searched: ${reason}`
        }
        const tail = notes.length === 0 ? "" : `\n${notes.join("\n")}`
        if (total === 0) return `no matches for ${pattern} in ${base.shown}${tail}`
        const shownNote = total > lines.length
          ? `\n(showing ${lines.length} of ${total} matches; narrow the search)`
          : ""
        return lines.join("\n") + shownNote + tail
      }).pipe(Effect.scoped)
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
    confined: () => `workspace:${ctx.root.path}`,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    handler: ({ ignore: patterns, path: given }) =>
      Effect.gen(function*() {
        const skip = patterns === undefined || patterns.length === 0
          ? undefined
          : Glob.compile(patterns, { basename: true })
        if (skip !== undefined && Either.isLeft(skip)) return yield* failWith(skip.left.message)
        const base = yield* folder(ctx, given, "use read_file to read it")
        const lines = [`${base.shown}/`]
        let total = 0
        const { tooDeep } = yield* walk(ctx, base, (entry) => {
          if (skip !== undefined && skip.right.test(entry.relative)) return Effect.succeed("skip")
          total++
          if (total <= MAX_LIST_ENTRIES) {
            const suffix = entry.kind === "directory" ? "/" : entry.kind === "link" ? "@" : ""
            lines.push(`${"  ".repeat(entry.depth + 1)}${entry.name}${suffix}`)
          }
          return Effect.succeed("continue")
        })
        if (total > MAX_LIST_ENTRIES) {
          lines.push(`(showing ${MAX_LIST_ENTRIES} of ${total} entries; list a subfolder or add ignore patterns)`)
        }
        if (total === 0) lines.push("  (empty)")
        if (tooDeep) lines.push(TOO_DEEP_NOTE)
        return lines.join("\n")
      }).pipe(Effect.scoped)
  })
