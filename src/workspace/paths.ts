/**
 * Confinement: every path a workspace tool touches resolves inside the root, through symbolic links too.
 *
 * A path longer than `PATH_MAX` is refused first, quoting its start only. A path is resolved against the root (an
 * absolute path is taken as is) and normalised; it is refused when it
 * leaves the root lexically: an absolute path elsewhere, or a first component `..` (a name that merely starts with
 * two dots, `..config`, is an ordinary name). Then it is walked one component at a time from the root's folder,
 * held open (see confined.ts), the way the kernel would walk it, except that this walk follows links itself:
 * - a folder is opened relative to the folder before it, never through a link;
 * - a link is read (`readlink`) and its target walked in its place: a relative target from the link's folder, an
 *   absolute one only if it starts with the root's path, and `..` goes back one folder on the walk, never above
 *   the root. A target outside is refused, whether or not it exists: a dangling link is followed to where it
 *   points (the file a write through it would create), not taken for an absent name;
 * - the first component that does not exist ends the walk: what remains cannot be a link yet.
 *
 * The result holds the deepest folder reached open (in the caller's scope) with the names below it, so the tools
 * open, create and rename relative to it: what was checked is what is used.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Scope from "effect/Scope"
import type * as fs from "node:fs"
import * as nodePath from "node:path"
import type { Dir } from "./confined.js"
import { entry, lstat, openDir, readlink } from "./confined.js"
import { pathTooLong, WorkspaceError } from "./errors.js"

/** Links followed in one path before it is refused, as the kernel's `ELOOP` does. */
export const MAX_LINKS = 40

export interface Root {
  /** The root as given, absolute. */
  readonly path: string
  /** The root with symlinks resolved. */
  readonly real: string
  /** The root's folder, held open for the toolkit's lifetime. */
  readonly dir: Dir
}

/** A path resolved inside the root. */
export interface Target {
  /** The path as the model should see it: relative to the root, `.` for the root itself. */
  readonly shown: string
  /** The path as given, absolute and normalised (links not resolved): resource keys are made of it. */
  readonly absolute: string
  /** Where it is: every link resolved. */
  readonly real: string
  /** The deepest folder the walk reached, open. */
  readonly dir: Dir
  /**
   * The names below `dir`: none when the target is `dir` itself (a folder); one, the target's name, when it is an
   * entry of `dir`; more when folders are missing on the way (then the last is the target's name).
   */
  readonly rest: ReadonlyArray<string>
  readonly kind: "file" | "directory" | "other" | "absent"
  /** The target's own `lstat`, for `file` and `other`. */
  readonly stats: fs.Stats | undefined
}

export const outside = (given: string): WorkspaceError =>
  new WorkspaceError({ message: `${given} is outside the workspace; use a path inside it` })

/** Whether a `path.relative` result stays inside its base: not absolute, and its first component is not `..`. */
export const staysInside = (relative: string): boolean =>
  relative === "" ||
  (!nodePath.isAbsolute(relative) && relative !== ".." && !relative.startsWith(`..${nodePath.sep}`))

/** The components of `target` below `base`, compared as written (no `..` folded), or undefined if not below. */
const below = (base: string, target: string): Array<string> | undefined => {
  const prefix = base.split("/").filter((c) => c !== "")
  const parts = target.split("/").filter((c) => c !== "" && c !== ".")
  if (parts.length < prefix.length) return undefined
  for (let i = 0; i < prefix.length; i++) if (parts[i] !== prefix[i]) return undefined
  return parts.slice(prefix.length)
}

const notFound = (shown: string) =>
  new WorkspaceError({ message: `${shown} does not exist; check the path (list_dir or glob show what is there)` })

/** Resolves `given` inside the root (see the module's description); `given` empty or omitted means the root. */
export const resolve = (root: Root, given: string | undefined): Effect.Effect<Target, WorkspaceError, Scope.Scope> =>
  Effect.gen(function*() {
    const asGiven = given === undefined || given === "" ? "." : given
    const tooLong = pathTooLong(asGiven)
    if (tooLong !== undefined) return yield* Effect.fail(new WorkspaceError({ message: tooLong }))
    if (asGiven.includes("\0")) {
      return yield* Effect.fail(new WorkspaceError({ message: "the path contains a NUL character; remove it" }))
    }
    const resolved = nodePath.resolve(root.path, asGiven)
    // an absolute path may name the root by its real path; from here on it is named the way the root was given
    let relative = nodePath.relative(root.path, resolved)
    if (!staysInside(relative)) relative = nodePath.relative(root.real, resolved)
    if (!staysInside(relative)) return yield* Effect.fail(outside(asGiven))
    const absolute = nodePath.join(root.path, relative)
    const shown = relative === "" ? "." : relative
    const fail = (message: string) => Effect.fail(new WorkspaceError({ message: `${shown} ${message}` }))

    const queue = relative === "" ? [] : relative.split(nodePath.sep)
    const stack: Array<Dir> = [root.dir]
    const top = () => stack[stack.length - 1]
    let links = 0
    const result = (
      rest: ReadonlyArray<string>,
      kind: Target["kind"],
      stats: fs.Stats | undefined
    ): Target => ({ shown, absolute, real: nodePath.join(top().real, ...rest), dir: top(), rest, kind, stats })

    while (queue.length > 0) {
      const name = queue.shift()!
      if (name === "" || name === ".") continue
      if (name === "..") {
        if (stack.length === 1) return yield* Effect.fail(outside(asGiven))
        stack.pop()
        continue
      }
      const found = yield* Effect.either(lstat(entry(top(), name)))
      if (Either.isLeft(found)) {
        if (found.left.code !== "ENOENT" && found.left.code !== "ENOTDIR") {
          return yield* fail(`cannot be resolved: ${found.left.code}`)
        }
        const rest = [name, ...queue].filter((c) => c !== "" && c !== ".")
        // `missing/..` cannot be walked by anyone: the folder it goes back from is not there
        if (rest.includes("..")) return yield* Effect.fail(notFound(shown))
        return result(rest, "absent", undefined)
      }
      const stats = found.right
      if (stats.isSymbolicLink() || stats.isDirectory()) {
        if (stats.isDirectory()) {
          const opened = yield* Effect.either(openDir(top(), name))
          if (Either.isRight(opened)) {
            stack.push(opened.right)
            continue
          }
          const code = opened.left.code
          if (code !== "ENOTDIR" && code !== "ELOOP" && code !== "ENOENT") {
            return yield* fail(`cannot be opened: ${code}`)
          }
          // replaced by a link or a file, or moved, since the lstat: look again (each look counts as a link)
          if (++links > MAX_LINKS) return yield* fail("keeps changing while it is being resolved; try again")
          queue.unshift(name)
          continue
        }
        if (++links > MAX_LINKS) return yield* fail("has too many levels of symbolic links")
        const target = yield* Effect.either(readlink(entry(top(), name)))
        if (Either.isLeft(target)) {
          // gone or replaced since the lstat: look again
          queue.unshift(name)
          continue
        }
        if (nodePath.isAbsolute(target.right)) {
          const inside = below(root.real, target.right) ?? below(root.path, target.right)
          if (inside === undefined) return yield* Effect.fail(outside(asGiven))
          stack.length = 1
          queue.unshift(...inside)
        } else {
          queue.unshift(...target.right.split("/"))
        }
        continue
      }
      // a file: the end of the walk, unless names follow it (which no one can walk through)
      if (queue.some((c) => c !== "" && c !== ".")) return yield* Effect.fail(notFound(shown))
      return result([name], stats.isFile() ? "file" : "other", stats)
    }
    return result([], "directory", undefined)
  })
