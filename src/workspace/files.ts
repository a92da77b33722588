/**
 * `read_file`, `write_file`, `edit_file`.
 *
 * The read-first rule: overwriting or editing an existing file is refused unless this toolkit read it and it has
 * not changed on disk since (compared by content hash), so a model never writes over what it has not seen or what
 * someone changed under it. A write or an edit counts as a read of what it wrote.
 *
 * @internal
 */
import { createTwoFilesPatch } from "diff"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as nodePath from "node:path"
import * as Tool from "../Tool.js"
import * as ToolResult from "../ToolResult.js"
import type { ReadRefused } from "./confined.js"
import { describeKind, makeDir, readRegular, writeAtomic } from "./confined.js"
import { WorkspaceError } from "./errors.js"
import type { Root, Target } from "./paths.js"
import { resolve } from "./paths.js"

/** Lines a read returns when the model gives no `limit`. */
export const DEFAULT_READ_LIMIT = 2000

/** A line longer than this is cut, with a marker. */
export const MAX_LINE_LENGTH = 2000

/** Files larger than this are refused by `read_file` (and images larger than {@link MAX_IMAGE_BYTES}). */
export const MAX_READ_BYTES = 20 * 1024 * 1024

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

const imageTypes: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp"
}

/** What this toolkit has read: absolute path -> hash of the content it saw. */
export type Seen = Map<string, string>

export const hash = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex")

const failWith = (message: string) => Effect.fail(new WorkspaceError({ message }))

export const isBinary = (bytes: Uint8Array): boolean => {
  const end = Math.min(bytes.length, 8192)
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true
  return false
}

interface Context {
  readonly root: Root
  readonly seen: Seen
}

const notFound = (shown: string) =>
  failWith(`${shown} does not exist; check the path (list_dir or glob show what is there)`)

const notRegular = (shown: string, what: string) =>
  failWith(`${shown} is ${what}, not a regular file; only regular files can be read, written or edited`)

const megabytes = (bytes: number): number => Math.round(bytes / 1024 / 1024)

/** The words for a refused read, shared by every tool that reads a file the model named. */
export const readRefusal = (shown: string, refusal: ReadRefused) => {
  switch (refusal.reason) {
    case "missing":
      return notFound(shown)
    case "not-regular":
      return notRegular(shown, refusal.detail)
    case "too-large":
      return failWith(
        `${shown} is too large to read (${megabytes(refusal.size)} MB; the limit is ${megabytes(MAX_READ_BYTES)} MB)`
      )
    case "moved":
      return failWith(
        `${shown} led outside the workspace while it was being opened (a folder on its way was moved); nothing ` +
          "was read"
      )
    case "failed":
      return failWith(`${shown} cannot be read: ${refusal.detail}`)
  }
}

/** Reads an existing regular file's bytes, with the refusals every tool shares. */
const readExisting = (ctx: Context, target: Target) => {
  switch (target.kind) {
    case "absent":
      return notFound(target.shown)
    case "directory":
      return failWith(`${target.shown} is a directory; use list_dir to see what is in it`)
    case "other":
      return notRegular(target.shown, describeKind(target.stats!))
    case "file":
      return readRegular(ctx.root.dir, target.dir, target.rest[0], MAX_READ_BYTES).pipe(
        Effect.catchAll((refusal) => readRefusal(target.shown, refusal))
      )
  }
}

/** The read-first check: the file as this toolkit last saw it, or the refusal. */
const requireSeen = (ctx: Context, target: Target) =>
  Effect.gen(function*() {
    const bytes = yield* readExisting(ctx, target)
    const seen = ctx.seen.get(target.real)
    if (seen === undefined) {
      return yield* failWith(`${target.shown} exists and has not been read; read it first with read_file`)
    }
    if (seen !== hash(bytes)) {
      return yield* failWith(`${target.shown} has changed on disk since it was read; read it again with read_file`)
    }
    return new TextDecoder().decode(bytes)
  })

/**
 * Writes a file of the workspace atomically where a target resolved: the folders missing on the way made first,
 * each opened without following links, then the content written beside the file and renamed over it (see
 * confined.ts). A target that was absent is created, and refused if a file appeared there since it was resolved.
 */
export const writeTarget = (ctx: Context, target: Target, content: string) =>
  Effect.scoped(Effect.gen(function*() {
    if (target.kind === "directory") return yield* failWith(`${target.shown} is a directory; give a file's path`)
    if (target.kind === "other") return yield* notRegular(target.shown, describeKind(target.stats!))
    let dir = target.dir
    for (const name of target.rest.slice(0, -1)) {
      dir = yield* makeDir(dir, name).pipe(
        Effect.catchAll((refused) => failWith(`cannot create the folder of ${target.shown}: ${refused.reason}`))
      )
    }
    yield* writeAtomic(ctx.root.dir, dir, target.rest[target.rest.length - 1], new TextEncoder().encode(content), {
      create: target.kind === "absent",
      mode: target.stats?.mode
    }).pipe(Effect.catchAll((refused) => failWith(`cannot write ${target.shown}: ${refused.reason}`)))
    ctx.seen.set(target.real, hash(content))
  }))

const cutLine = (line: string): string =>
  line.length > MAX_LINE_LENGTH
    ? `${line.slice(0, MAX_LINE_LENGTH)}… [line cut at ${MAX_LINE_LENGTH} characters]`
    : line

/** Lines numbered from `first` (1-based), `cat -n` style. */
const numbered = (lines: ReadonlyArray<string>, first: number): string =>
  lines.map((line, i) => `${String(first + i).padStart(6)}\t${cutLine(line)}`).join("\n")

const splitLines = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** The resource key of a file the model named: calls on one file run in the model's order. */
export const fileKey = (ctx: Context, given: string): string => `file:${nodePath.resolve(ctx.root.path, given)}`

export const readFile = (ctx: Context) =>
  Tool.make("read_file", {
    description: "Read a file of the workspace. Text comes back as numbered lines (offset = lines to skip, " +
      `default limit ${DEFAULT_READ_LIMIT}); images come back as images. Read a file before writing over it or ` +
      "editing it.",
    parameters: {
      path: Schema.String.annotations({ description: "The file, relative to the workspace root (or absolute)" }),
      offset: Schema.optional(Schema.NonNegativeInt.annotations({ description: "Lines to skip (default 0)" })),
      limit: Schema.optional(
        Schema.Int.pipe(Schema.positive()).annotations({ description: `Lines to read (default ${DEFAULT_READ_LIMIT})` })
      )
    },
    failure: WorkspaceError,
    confined: () => `workspace:${ctx.root.path}`,
    annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    resource: ({ path }) => fileKey(ctx, path),
    handler: ({ limit = DEFAULT_READ_LIMIT, offset = 0, path: given }) =>
      Effect.gen(function*() {
        const target = yield* resolve(ctx.root, given)
        const shown = target.shown
        const bytes = yield* readExisting(ctx, target)
        const mimeType = imageTypes[nodePath.extname(target.absolute).toLowerCase()]
        if (mimeType !== undefined) {
          if (bytes.length > MAX_IMAGE_BYTES) {
            return yield* failWith(`${shown} is an image too large to read (over ${MAX_IMAGE_BYTES / 1024 / 1024} MB)`)
          }
          return ToolResult.image(bytes, mimeType)
        }
        if (isBinary(bytes)) return yield* failWith(`${shown} is a binary file; it cannot be read as text`)
        ctx.seen.set(target.real, hash(bytes))
        const lines = splitLines(new TextDecoder().decode(bytes))
        if (lines.length === 0 || (lines.length === 1 && lines[0] === "")) return `(${shown} is empty)`
        if (offset >= lines.length) {
          return `(${shown} has ${lines.length} lines; offset ${offset} is past the end)`
        }
        const shownLines = lines.slice(offset, offset + limit)
        const last = offset + shownLines.length
        const more = last < lines.length
          ? `\n(showing lines ${offset + 1}-${last} of ${lines.length}; read on with offset ${last})`
          : ""
        return numbered(shownLines, offset + 1) + more
      }).pipe(Effect.scoped)
  })

/** A unified diff of a change, for permission previews and answers. */
export const unifiedDiff = (shown: string, before: string, after: string): string =>
  fileDiff(`a/${shown}`, `b/${shown}`, before, after)

/** A unified diff between two named sides (`/dev/null` for a file added or deleted). */
export const fileDiff = (oldName: string, newName: string, before: string, after: string): string =>
  createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, { context: 3 })
    // jsdiff starts with a line of "=" (its "Index:" separator), which is no part of a unified diff
    .replace(/^=+\n/, "")

/** Parent folders are created; an existing file must have been read first. */
export const writeFile = (ctx: Context) => {
  const plan = (given: string) =>
    Effect.gen(function*() {
      const target = yield* resolve(ctx.root, given)
      const before = target.kind === "absent" ? "" : yield* requireSeen(ctx, target)
      return { target, before }
    })
  return Tool.make("write_file", {
    description: "Write a file of the workspace, creating parent folders. Overwriting an existing file needs a " +
      "read_file of it first.",
    parameters: {
      path: Schema.String.annotations({ description: "The file, relative to the workspace root (or absolute)" }),
      content: Schema.String.annotations({ description: "The whole new content" })
    },
    failure: WorkspaceError,
    confined: () => `workspace:${ctx.root.path}`,
    annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
    resource: ({ path }) => fileKey(ctx, path),
    permission: {
      action: "write",
      describe: ({ content, path }) => `write ${splitLines(content).length} lines to ${path}`,
      path: ({ path }) => path,
      preview: ({ content, path }) =>
        Effect.scoped(Effect.map(plan(path), ({ before, target }) => unifiedDiff(target.shown, before, content)))
    },
    handler: ({ content, path: given }) =>
      Effect.gen(function*() {
        const { target } = yield* plan(given)
        yield* writeTarget(ctx, target, content)
        return `${target.kind === "absent" ? "created" : "overwrote"} ${target.shown} (${
          splitLines(content).length
        } lines)`
      }).pipe(Effect.scoped)
  })
}

const countOccurrences = (text: string, needle: string): number => {
  let count = 0
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++
  return count
}

export const editFile = (ctx: Context) => {
  const plan = (params: { path: string; old_string: string; new_string: string; replace_all?: boolean | undefined }) =>
    Effect.gen(function*() {
      const target = yield* resolve(ctx.root, params.path)
      const shown = target.shown
      if (params.old_string === params.new_string) {
        return yield* failWith("old_string and new_string are the same; nothing would change")
      }
      if (params.old_string === "") return yield* failWith("old_string is empty; give the exact text to replace")
      const before = yield* requireSeen(ctx, target)
      const count = countOccurrences(before, params.old_string)
      if (count === 0) {
        return yield* failWith(
          `old_string was not found in ${shown}; it must match the file exactly, whitespace included`
        )
      }
      if (count > 1 && params.replace_all !== true) {
        return yield* failWith(
          `old_string appears ${count} times in ${shown}; give more surrounding context to pick one, ` +
            "or set replace_all to replace every one"
        )
      }
      const after = params.replace_all === true
        ? before.split(params.old_string).join(params.new_string)
        : before.replace(params.old_string, () => params.new_string)
      return { target, shown, before, after, count }
    })
  return Tool.make("edit_file", {
    description: "Replace exact text in a file of the workspace. old_string must match exactly once unless " +
      "replace_all is set. The file must have been read first.",
    parameters: {
      path: Schema.String.annotations({ description: "The file, relative to the workspace root (or absolute)" }),
      old_string: Schema.String.annotations({ description: "The exact text to replace" }),
      new_string: Schema.String.annotations({ description: "The text to put in its place" }),
      replace_all: Schema.optional(Schema.Boolean.annotations({ description: "Replace every occurrence" }))
    },
    failure: WorkspaceError,
    confined: () => `workspace:${ctx.root.path}`,
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    resource: ({ path }) => fileKey(ctx, path),
    permission: {
      action: "write",
      describe: ({ path }) => `edit ${path}`,
      path: ({ path }) => path,
      preview: (params) =>
        Effect.scoped(Effect.map(plan(params), ({ after, before, shown }) => unifiedDiff(shown, before, after)))
    },
    handler: (params) =>
      Effect.gen(function*() {
        const { after, before, count, shown, target } = yield* plan(params)
        yield* writeTarget(ctx, target, after)
        // the edited region, numbered, with a few lines of context
        const start = before.indexOf(params.old_string)
        const firstLine = before.slice(0, start).split("\n").length
        const lines = splitLines(after)
        const from = Math.max(1, firstLine - 3)
        const to = Math.min(lines.length, firstLine + splitLines(params.new_string).length + 2)
        const replaced = count === 1 ? "1 replacement" : `${count} replacements`
        return `edited ${shown} (${replaced}); lines ${from}-${to} now read:\n${
          numbered(lines.slice(from - 1, to), from)
        }`
      }).pipe(Effect.scoped)
  })
}

export type { Context as FilesContext }
