/**
 * Confinement: every path a workspace tool touches resolves inside the root, through symlinks too.
 *
 * A path is resolved against the root (an absolute path is taken as is), normalised, and refused when it leaves
 * the root lexically (`..`, an absolute path elsewhere). Then the deepest part of it that exists is resolved with
 * `realpath`, and refused when that leaves the root's own real path: a symlink inside the workspace pointing
 * outside it cannot be read, written or listed through.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import { WorkspaceError } from "./errors.js"

export interface Root {
  /** The root as given, absolute. */
  readonly path: string
  /** The root with symlinks resolved. */
  readonly real: string
}

export const outside = (given: string): WorkspaceError =>
  new WorkspaceError({ message: `${given} is outside the workspace; use a path inside it` })

const within = (path: Path.Path, root: string, candidate: string): boolean => {
  const relative = path.relative(root, candidate)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/** The absolute path of `given` inside the root, or the refusal. `given` empty or omitted means the root. */
export const resolve = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  root: Root,
  given: string | undefined
): Effect.Effect<string, WorkspaceError> =>
  Effect.gen(function*() {
    const shown = given === undefined || given === "" ? "." : given
    const absolute = path.resolve(root.path, shown)
    if (!within(path, root.path, absolute)) return yield* Effect.fail(outside(shown))
    // resolve the deepest existing ancestor: what does not exist yet cannot be a link
    let existing = absolute
    let rest = ""
    while (!(yield* fs.exists(existing).pipe(Effect.orElseSucceed(() => false)))) {
      const parent = path.dirname(existing)
      if (parent === existing) break
      rest = rest === "" ? path.basename(existing) : path.join(path.basename(existing), rest)
      existing = parent
    }
    const real = yield* fs.realPath(existing).pipe(Effect.orElseSucceed(() => existing))
    const resolved = rest === "" ? real : path.join(real, rest)
    if (!within(path, root.real, resolved)) return yield* Effect.fail(outside(shown))
    return absolute
  })

/** A path as the model should see it: relative to the root, `.` for the root itself. */
export const display = (path: Path.Path, root: Root, absolute: string): string => {
  const relative = path.relative(root.path, absolute)
  return relative === "" ? "." : relative
}
