/**
 * `apply_patch`: a patch of several files (the apply_patch format or a unified diff), applied all or nothing.
 *
 * A call goes in three steps, and only the last touches the tree:
 * 1. **Plan.** The patch is parsed (patchText.ts); every path is resolved inside the root (paths.ts: a path
 *    outside, through a link or not, refuses the whole patch); every file is read (regular files only, UTF-8 text
 *    for an update) and its hunks placed (patchApply.ts). The changes are worked out in memory, in the patch's
 *    order, so one patch may add a file and then update it, or delete one and add it again. Any problem refuses
 *    the whole patch before anything is written.
 * 2. **Stage.** Every new content is written to a temporary file beside its target (confined.ts `stage`), and so
 *    is every replaced or deleted file's old content, for the way back; folders a new file needs are made here
 *    (and removed again if the patch stops).
 * 3. **Commit.** Each staged file is renamed (or linked) into place and each deleted file removed, without
 *    interruption. If one of those fails, what was committed is put back from the staged copies of the old
 *    contents, by renames again, so a failure the process sees leaves the tree as it was.
 *
 * What atomicity means on a crash: each file is always either its old content or its new one, never half written
 * (a rename), but the commit is one rename per file, not one for the patch; a process killed during it (a window
 * of as many renames as files) leaves the files committed so far changed, and the staged temporary files
 * (`.agent-tools-<hex>.tmp`) in their folders. No journal is kept.
 *
 * The read-first rule: an update or a move needs no read first, because its kept and removed lines are checked
 * against the file as it is now, which is the proof a read gives `edit_file`. A `*** Delete File` shows no line of
 * the file, so it needs a `read_file` of it first, unchanged since, as overwriting does; a unified diff's deletion
 * shows every line, and they are checked instead. What a patch writes counts as read.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Tool from "../Tool.js"
import type { Dir, Staged } from "./confined.js"
import { describeKind, makeDir, readRegular, removeEmptyDir, removeEntry, reopenDir, stage } from "./confined.js"
import { WorkspaceError } from "./errors.js"
import type { FilesContext } from "./files.js"
import { fileDiff, fileKey, hash, isBinary, MAX_READ_BYTES, readRefusal } from "./files.js"
import type { Applied, Refusal } from "./patchApply.js"
import { applyHunks } from "./patchApply.js"
import type { FileChange, Hunk, Patch } from "./patchText.js"
import { parse } from "./patchText.js"
import type { Target } from "./paths.js"
import { resolve } from "./paths.js"

/** The longest patch text accepted, in characters. */
export const MAX_PATCH_CHARACTERS = 4 * 1024 * 1024

/** The most files one patch may change. */
export const MAX_PATCH_FILES = 200

/** The most bytes the files of one patch may hold, before and after, added up (they are held in memory). */
export const MAX_PATCH_TOUCHED_BYTES = 64 * 1024 * 1024

const NOTHING_CHANGED = "the patch was not applied, no file was changed"

const refuse = (message: string) => Effect.fail(new WorkspaceError({ message: `${NOTHING_CHANGED}: ${message}` }))

const megabytes = (bytes: number): string => `${Math.round(bytes / 1024 / 1024)} MB`

/** What a file that is not UTF-8 text holds, for a patch: something it can delete, never change. */
const OPAQUE: unique symbol = Symbol("opaque")

/** A file the patch touches: where it is, what it was, and what it is after the changes so far. */
export interface FileState {
  readonly target: Target
  /** What is on disk now; undefined if nothing is. `text` is undefined for binary or non-UTF-8 content. */
  readonly original:
    | { readonly bytes: Uint8Array; readonly text: string | undefined; readonly mode: number }
    | undefined
  /** The content after the changes so far: text, the original's bytes untouched, or nothing. */
  current: string | typeof OPAQUE | undefined
  mode: number | undefined
}

const originalContent = (state: FileState): string | typeof OPAQUE | undefined =>
  state.original === undefined ? undefined : state.original.text ?? OPAQUE

/** One file's change, worked out: what goes where. */
export interface Change {
  readonly state: FileState
  readonly kind: "create" | "replace" | "delete"
  /** The new content; undefined for a deletion. */
  readonly text: string | undefined
}

interface Plan {
  readonly changes: ReadonlyArray<Change>
  /** One line per change of the patch, in its order (`updated a.ts (+2 -1)`). */
  readonly summary: ReadonlyArray<string>
  readonly notes: ReadonlyArray<string>
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const counts = (hunks: ReadonlyArray<Hunk>) => {
  let added = 0
  let removed = 0
  for (const hunk of hunks) {
    for (const line of hunk.lines) {
      if (line.op === "+") added++
      else if (line.op === "-") removed++
    }
  }
  return { added, removed }
}

const lineCount = (text: string): number => (text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0))

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

/** The paths a patch names, for resource keys and the permission's description. */
const pathsOf = (change: FileChange): ReadonlyArray<string> =>
  change._tag === "Update" && change.moveTo !== undefined ? [change.path, change.moveTo] : [change.path]

const describeChange = (change: FileChange): string => {
  switch (change._tag) {
    case "Add":
      return `add ${change.path}`
    case "Delete":
      return `delete ${change.path}`
    case "Update":
      return change.moveTo === undefined ? `update ${change.path}` : `move ${change.path} to ${change.moveTo}`
  }
}

/** Works out every change in memory; reads files, writes nothing. The folders it resolves stay open in `scope`. */
const plan = (ctx: FilesContext, text: string) =>
  Effect.gen(function*() {
    if (text.length > MAX_PATCH_CHARACTERS) {
      return yield* refuse(
        `the patch is ${megabytes(text.length)} long; the limit is ${megabytes(MAX_PATCH_CHARACTERS)}: send it ` +
          "in several smaller patches"
      )
    }
    const parsed = parse(text)
    if ("_tag" in parsed) return yield* refuse(parsed.message)
    const patch: Patch = parsed
    if (patch.changes.length > MAX_PATCH_FILES) {
      return yield* refuse(
        `the patch changes ${patch.changes.length} files; the limit is ${MAX_PATCH_FILES}: send it in several ` +
          "smaller patches"
      )
    }
    const scope = yield* Effect.scope
    const states = new Map<string, FileState>()
    const order: Array<FileState> = []
    let touched = 0

    const tooMuch = () =>
      refuse(
        `the files it changes hold more than ${megabytes(MAX_PATCH_TOUCHED_BYTES)}, before and after; send it in ` +
          "several smaller patches"
      )

    /** The state of a path: resolved, and read the first time the patch names it. */
    const load = (given: string) =>
      Effect.gen(function*() {
        const found = yield* Effect.scoped(Effect.gen(function*() {
          const resolved = yield* resolve(ctx.root, given)
          const known = states.get(resolved.real)
          if (known !== undefined) return known
          // only the folder the file is in stays open, not every folder on its way
          const dir = yield* Scope.extend(reopenDir(resolved.dir), scope).pipe(
            Effect.catchAll((error) => refuse(`${resolved.shown} cannot be opened: ${error.code}`))
          )
          return { ...resolved, dir }
        })).pipe(Effect.catchAll((error) => refuse(error.message)))
        if ("target" in found) return found
        const target = found
        if (target.kind === "directory") return yield* refuse(`${target.shown} is a folder; a patch changes files`)
        if (target.kind === "other") {
          return yield* refuse(
            `${target.shown} is ${describeKind(target.stats!)}, not a regular file; a patch changes regular files`
          )
        }
        let original: FileState["original"]
        if (target.kind === "file") {
          const bytes = yield* readRegular(ctx.root.dir, target.dir, target.rest[0], MAX_READ_BYTES).pipe(
            Effect.catchAll((refusal) => readRefusal(target.shown, refusal)),
            Effect.catchAll((error) => refuse(error.message))
          )
          touched += bytes.length
          if (touched > MAX_PATCH_TOUCHED_BYTES) return yield* tooMuch()
          let decoded: string | undefined
          if (!isBinary(bytes)) {
            try {
              decoded = decoder.decode(bytes)
            } catch {
              decoded = undefined
            }
          }
          original = { bytes, text: decoded, mode: target.stats!.mode }
        }
        const state: FileState = { target, original, current: undefined, mode: original?.mode }
        state.current = originalContent(state)
        states.set(target.real, state)
        order.push(state)
        return state
      })

    const opaque = (state: FileState) => (isBinary(state.original!.bytes) ? "a binary file" : "not UTF-8 text")

    const textOf = (state: FileState) =>
      state.current === OPAQUE
        ? refuse(`${state.target.shown} is ${opaque(state)}; a patch changes text files only (bash can change others)`)
        : Effect.succeed(state.current ?? "")

    const applied = (state: FileState, hunks: ReadonlyArray<Hunk>, before: string) => {
      const result: Applied | Refusal = applyHunks(state.target.shown, before, hunks)
      return "_tag" in result ? refuse(result.message) : Effect.succeed(result)
    }

    const summary: Array<string> = []
    const notes: Array<string> = []
    for (const change of patch.changes) {
      const state = yield* load(change.path)
      const shown = state.target.shown
      switch (change._tag) {
        case "Add": {
          if (state.current !== undefined) {
            return yield* refuse(
              `${shown} already exists, so it cannot be added; change it with "*** Update File: ${change.path}" ` +
                "(or delete it first in the same patch)"
            )
          }
          state.current = change.content
          summary.push(`added ${shown} (${plural(lineCount(change.content), "line")})`)
          break
        }
        case "Delete": {
          if (state.current === undefined) {
            return yield* refuse(
              `${shown} does not exist, so it cannot be deleted; check the path (list_dir or glob show what is there)`
            )
          }
          // a file this patch already changed was seen, in the patch
          const untouched = state.original !== undefined && state.current === originalContent(state)
          if (change.hunks !== undefined) {
            const before = yield* textOf(state)
            const after = yield* applied(state, change.hunks, before)
            if (after.text !== "") {
              return yield* refuse(
                `${shown} is deleted by the patch, but its hunks do not show all of its lines; a deletion must ` +
                  "remove every line (or use \"*** Delete File\")"
              )
            }
          } else if (untouched && state.current === OPAQUE) {
            return yield* refuse(
              `${shown} is ${opaque(state)}, which read_file cannot show, so a patch cannot delete it; use bash (rm)`
            )
          } else if (untouched) {
            const seen = ctx.seen.get(state.target.real)
            if (seen === undefined) {
              return yield* refuse(`${shown} has not been read, so it cannot be deleted; read it first with read_file`)
            }
            if (seen !== hash(state.original!.bytes)) {
              return yield* refuse(
                `${shown} has changed on disk since it was read, so it cannot be deleted; read it again with read_file`
              )
            }
          }
          state.current = undefined
          summary.push(`deleted ${shown}`)
          break
        }
        case "Update": {
          if (state.current === undefined) {
            return yield* refuse(
              `${shown} does not exist, so it cannot be updated; to create it use "*** Add File: ${change.path}" ` +
                "(check the path: list_dir or glob show what is there)"
            )
          }
          const before = yield* textOf(state)
          const after = change.hunks.length === 0
            ? { text: before, notes: [] }
            : yield* applied(state, change.hunks, before)
          notes.push(...after.notes)
          const { added, removed } = counts(change.hunks)
          if (change.moveTo === undefined) {
            state.current = after.text
            summary.push(`updated ${shown} (+${added} -${removed})`)
            break
          }
          const destination = yield* load(change.moveTo)
          if (destination !== state) {
            if (destination.current !== undefined) {
              return yield* refuse(
                `${destination.target.shown} already exists, so ${shown} cannot be moved there; move it elsewhere, ` +
                  "or delete the file there first in the same patch"
              )
            }
            destination.current = after.text
            destination.mode = state.mode
            state.current = undefined
          } else {
            state.current = after.text
          }
          summary.push(`moved ${shown} to ${destination.target.shown} (+${added} -${removed})`)
          break
        }
      }
    }
    const changes: Array<Change> = []
    for (const state of order) {
      const current = state.current
      if (current === originalContent(state) || current === OPAQUE) continue
      const kind = current === undefined ? "delete" : state.original === undefined ? "create" : "replace"
      if (current !== undefined) touched += current.length
      changes.push({ state, kind, text: current })
    }
    if (changes.length === 0) {
      return yield* refuse("the patch changes nothing: every file would stay as it is")
    }
    if (touched > MAX_PATCH_TOUCHED_BYTES) return yield* tooMuch()
    return { changes, summary, notes } satisfies Plan
  })

/** One diff per file: what a person reviews before the patch is applied. */
const preview = (planned: Plan): string =>
  planned.changes.map(({ kind, state, text = "" }) => {
    const shown = state.target.shown
    const before = state.original?.text ?? ""
    return kind === "create"
      ? fileDiff("/dev/null", `b/${shown}`, "", text)
      : kind === "delete"
      ? fileDiff(`a/${shown}`, "/dev/null", before, "")
      : fileDiff(`a/${shown}`, `b/${shown}`, before, text)
  }).join("")

/** A change staged: how to put it in place, and how to take it back once it is. */
export interface Ready {
  readonly change: Change
  readonly commit: Effect.Effect<void, string>
  readonly undo: Effect.Effect<void, string>
}

const encoder = new TextEncoder()

const reason = (refused: { readonly reason: string }) => refused.reason

/**
 * Stages one change in the caller's scope: its new content beside its target, and its old content for the way
 * back. Folders a new file needs are made here; when the scope closes, those that are empty (the patch did not go
 * in) are removed again, after the temporary files.
 */
const stageChange = (ctx: FilesContext, change: Change) =>
  Effect.gen(function*() {
    const { state } = change
    const target = state.target
    const shown = target.shown
    const failed = (what: string) => (refused: { readonly reason: string }) =>
      refuse(`cannot ${what} ${shown}: ${refused.reason}`)
    const name = target.rest[target.rest.length - 1]
    const keepOld = (create: boolean) =>
      stage(ctx.root.dir, target.dir, name, state.original!.bytes, { create, mode: state.original!.mode }).pipe(
        Effect.catchAll(failed("keep a copy of"))
      )
    if (change.kind === "delete") {
      const old: Staged = yield* keepOld(true)
      return {
        change,
        commit: Effect.mapError(removeEntry(ctx.root.dir, target.dir, name), reason),
        undo: Effect.mapError(old.commit, reason)
      } satisfies Ready
    }
    const bytes = encoder.encode(change.text!)
    if (change.kind === "replace") {
      const staged = yield* stage(ctx.root.dir, target.dir, name, bytes, { create: false, mode: state.mode }).pipe(
        Effect.catchAll(failed("write"))
      )
      const old = yield* keepOld(false)
      return {
        change,
        commit: Effect.mapError(staged.commit, reason),
        undo: Effect.mapError(old.commit, reason)
      } satisfies Ready
    }
    const made: Array<{ readonly parent: Dir; readonly name: string }> = []
    // added before the temporary file's own finalizer, so it runs after it: the folder is empty by then
    yield* Effect.addFinalizer(() =>
      Effect.forEach(made.slice().reverse(), (folder) => removeEmptyDir(folder.parent, folder.name), { discard: true })
    )
    let dir = target.dir
    for (const folder of target.rest.slice(0, -1)) {
      const parent = dir
      dir = yield* makeDir(parent, folder).pipe(
        Effect.catchAll((refused) => refuse(`cannot create the folder of ${shown}: ${refused.reason}`))
      )
      made.push({ parent, name: folder })
    }
    const staged = yield* stage(ctx.root.dir, dir, name, bytes, { create: true, mode: state.mode }).pipe(
      Effect.catchAll(failed("write"))
    )
    return {
      change,
      commit: Effect.mapError(staged.commit, reason),
      undo: Effect.mapError(removeEntry(ctx.root.dir, dir, name), reason)
    } satisfies Ready
  })

/**
 * Commits every staged change, writes before removals; on a failure, undoes what was committed, last first.
 * Uninterruptible: a cancelled call never stops between two files.
 */
export const commitAll = (ready: ReadonlyArray<Ready>) =>
  Effect.uninterruptible(Effect.gen(function*() {
    const done: Array<Ready> = []
    const ordered = [
      ...ready.filter((r) => r.change.kind !== "delete"),
      ...ready.filter((r) => r.change.kind === "delete")
    ]
    for (const each of ordered) {
      const committed = yield* Effect.either(each.commit)
      if (Either.isRight(committed)) {
        done.push(each)
        continue
      }
      const problems: Array<string> = []
      for (const undone of done.reverse()) {
        const back = yield* Effect.either(undone.undo)
        if (Either.isLeft(back)) problems.push(`${undone.change.state.target.shown} (${back.left})`)
      }
      const shown = each.change.state.target.shown
      const what = each.change.kind === "delete" ? "remove" : "write"
      if (problems.length === 0) {
        return yield* refuse(`cannot ${what} ${shown}: ${committed.left}; the files changed before it were put back`)
      }
      return yield* Effect.fail(
        new WorkspaceError({
          message: `the patch failed midway: cannot ${what} ${shown}: ${committed.left}; putting back the files ` +
            `changed before it failed for ${problems.join(", ")}: check them (read_file) before going on`
        })
      )
    }
  }))

const PATCH_DESCRIPTION = "Apply a patch to files of the workspace: several files at once, all or nothing. Give " +
  "either the apply_patch format:\n" +
  "*** Begin Patch\n" +
  "*** Update File: src/app.ts\n" +
  "@@ function main() {\n" +
  "   const a = 1\n" +
  "-  const b = 2\n" +
  "+  const b = 3\n" +
  "*** Add File: src/new.ts\n" +
  "+export const x = 1\n" +
  "*** Delete File: src/old.ts\n" +
  "*** End Patch\n" +
  "(\"*** Move to: <path>\" right after an Update line renames the file; \"@@ <line>\" names a line the change " +
  "comes after, such as its function; kept lines start with a space, removed with -, added with +; about 3 kept " +
  "lines around each change), or a unified diff (--- a/path, +++ b/path, @@ -l,n +l,n @@). Kept and removed " +
  "lines must match the file (whitespace differences are tolerated). Deleting a file with \"*** Delete File\" " +
  "needs a read_file of it first."

export const applyPatch = (ctx: FilesContext) => {
  const parsed = (patch: string): Patch | undefined => {
    if (patch.length > MAX_PATCH_CHARACTERS) return undefined
    const result = parse(patch)
    return "_tag" in result ? undefined : result
  }
  return Tool.make("apply_patch", {
    description: PATCH_DESCRIPTION,
    parameters: {
      patch: Schema.String.annotations({
        description: "The patch text: \"*** Begin Patch\" ... \"*** End Patch\", or a unified diff"
      })
    },
    failure: WorkspaceError,
    annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
    // every path of a patch is resolved inside the root, or the whole patch is refused
    confined: () => `workspace:${ctx.root.path}`,
    resource: ({ patch }) => {
      const changes = parsed(patch)?.changes ?? []
      return [...new Set(changes.flatMap((change) => pathsOf(change).map((path) => fileKey(ctx, path))))]
    },
    permission: {
      action: "write",
      describe: ({ patch }) => {
        const changes = parsed(patch)?.changes
        return changes === undefined ? "apply a patch" : `apply a patch: ${changes.map(describeChange).join(", ")}`
      },
      path: ({ patch }) => {
        const changes = parsed(patch)?.changes
        const paths = changes === undefined ? [] : [...new Set(changes.flatMap(pathsOf))]
        return paths.length === 1 ? paths[0] : undefined
      },
      preview: ({ patch }) => Effect.scoped(Effect.map(plan(ctx, patch), preview))
    },
    handler: ({ patch }) =>
      Effect.scoped(Effect.gen(function*() {
        const planned = yield* plan(ctx, patch)
        const ready = yield* Effect.forEach(planned.changes, (change) => stageChange(ctx, change))
        yield* commitAll(ready)
        for (const { kind, state, text } of planned.changes) {
          if (kind === "delete") ctx.seen.delete(state.target.real)
          else ctx.seen.set(state.target.real, hash(encoder.encode(text!)))
        }
        const notes = planned.notes.length === 0 ? "" : `\n${planned.notes.map((note) => `(${note})`).join("\n")}`
        return `applied the patch:\n${planned.summary.map((line) => `  ${line}`).join("\n")}${notes}`
      }))
  })
}
