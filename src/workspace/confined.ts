/**
 * File access that stays beneath folders it holds open: the ground confinement stands on.
 *
 * Node has no `openat2(RESOLVE_BENEATH)` and no `*at` calls at all, but on Linux `/proc/self/fd/<fd>/<name>`
 * names the entry `<name>` of the folder open as `<fd>`, whatever has happened to that folder's path since: the
 * kernel follows the descriptor, not the path. So every operation here is relative to a {@link Dir} (a folder held
 * open by descriptor) and names one entry of it, opened with `O_NOFOLLOW` so a symbolic link is never followed by
 * the kernel (paths.ts follows links itself, checking each target). A folder swapped for a link after it was
 * opened is not seen at all: what was opened is used.
 *
 * Every descriptor a caller reads or writes through is checked once more after opening: its path as the kernel
 * reports it (`readlink /proc/self/fd/<fd>`) must be inside the root's, so a folder on the way that was moved out
 * of the root meanwhile is refused too.
 *
 * Writes are atomic: the content goes to a temporary file created `O_EXCL | O_NOFOLLOW` in the target's folder,
 * which is then renamed over the target (`rename` replaces a link, never follows it), or, for a new file, linked
 * to its name (`link` fails if the name exists, so a file that appeared meanwhile is not written over).
 *
 * Without `/proc/self/fd` (macOS, the BSDs) the same calls take paths (`<folder's real path>/<name>`), which the
 * kernel resolves again each time: links are still followed only by paths.ts, the last component still opened
 * `O_NOFOLLOW`, and descriptors re-checked with `realpath`, but a folder swapped for a link between a check and
 * a use is not caught there. docs/workspace.md says what is left.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"

/** Whether operations go through `/proc/self/fd` (settable for the tests of the fallback). */
export const procFd: { enabled: boolean } = {
  enabled: process.platform === "linux" && fs.existsSync("/proc/self/fd")
}

/** A folder held open: its descriptor and its real path when it was opened. */
export interface Dir {
  /** The descriptor; undefined in the path fallback, where `real` is used instead. */
  readonly fd: number | undefined
  readonly real: string
}

/** The name of `name` inside `dir`, for a system call. */
export const entry = (dir: Dir, name: string): string =>
  dir.fd === undefined ? nodePath.join(dir.real, name) : `/proc/self/fd/${dir.fd}/${name}`

/** The name of `dir` itself, for a system call. */
const self = (dir: Dir): string => (dir.fd === undefined ? dir.real : `/proc/self/fd/${dir.fd}`)

/** A system call failed; `code` is its errno name (`ENOENT`, `ELOOP`, ...). */
export class SystemError extends Data.TaggedError("SystemError")<{ readonly code: string; readonly reason: string }> {}

const systemError = (error: unknown): SystemError => {
  const e = error as NodeJS.ErrnoException
  return new SystemError({ code: typeof e?.code === "string" ? e.code : "EINVAL", reason: e?.message ?? String(e) })
}

/** One callback-style `fs` call as an Effect (a synchronous throw, e.g. for a NUL in a path, is its failure). */
const call = <A>(f: (done: (error: NodeJS.ErrnoException | null, value: A) => void) => void) =>
  Effect.async<A, SystemError>((resume) => {
    try {
      f((error, value) => resume(error === null ? Effect.succeed(value) : Effect.fail(systemError(error))))
    } catch (error) {
      resume(Effect.fail(systemError(error)))
    }
  })

/** One synchronous `fs` call as an Effect. */
const sync = <A>(f: () => A) => Effect.try({ try: f, catch: systemError })

// Calls on names and descriptors are synchronous: each takes microseconds, where a thread-pool round trip per call
// made a grep of 6,000 files twice as slow, and none can wait on a FIFO or a device (files are opened O_NONBLOCK).
// Reading and writing content and listing folders go through the thread pool.
export const lstat = (path: string) => sync(() => fs.lstatSync(path))
export const readlink = (path: string) => sync(() => fs.readlinkSync(path))
const closeFd = (fd: number) => Effect.ignore(sync(() => fs.closeSync(fd)))
const mkdir = (path: string) => sync(() => fs.mkdirSync(path, 0o777))
const rename = (from: string, to: string) => sync(() => fs.renameSync(from, to))
const link = (from: string, to: string) => sync(() => fs.linkSync(from, to))
const unlink = (path: string) => Effect.ignore(sync(() => fs.unlinkSync(path)))
const fchmod = (fd: number, mode: number) => sync(() => fs.fchmodSync(fd, mode))
const rmdir = (path: string) => Effect.ignore(sync(() => fs.rmdirSync(path)))
export const readdir = (dir: Dir) =>
  call<Array<fs.Dirent>>((done) => fs.readdir(self(dir), { withFileTypes: true }, done))

/** Opens a descriptor, closed when the scope closes. */
const open = (path: string, flags: number, mode = 0o666): Effect.Effect<number, SystemError, Scope.Scope> =>
  Effect.acquireRelease(sync(() => fs.openSync(path, flags, mode)), closeFd)

const { O_CREAT, O_DIRECTORY, O_EXCL, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = fs.constants

/** Opens the folder `name` of `dir`, never through a link (a link or a non-folder fails: `ENOTDIR`, `ELOOP`). */
export const openDir = (dir: Dir, name: string): Effect.Effect<Dir, SystemError, Scope.Scope> =>
  procFd.enabled && dir.fd !== undefined
    ? Effect.map(
      open(entry(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW),
      (fd): Dir => ({ fd, real: nodePath.join(dir.real, name) })
    )
    : Effect.flatMap(lstat(entry(dir, name)), (stats) =>
      stats.isDirectory()
        ? Effect.succeed<Dir>({ fd: undefined, real: nodePath.join(dir.real, name) })
        : Effect.fail(new SystemError({ code: "ENOTDIR", reason: `${name} is not a folder` })))

/**
 * The folder `dir` held open once more, in the caller's scope: a walk's folders can then be closed while the one
 * it ended in stays open (a patch of many files holds one descriptor per file, not one per folder on its way).
 */
export const reopenDir = (dir: Dir): Effect.Effect<Dir, SystemError, Scope.Scope> =>
  procFd.enabled && dir.fd !== undefined
    ? Effect.map(open(self(dir), O_RDONLY | O_DIRECTORY), (fd): Dir => ({ fd, real: dir.real }))
    : Effect.succeed(dir)

/** Opens a root folder as given (links in its path followed: the root is what its owner chose). */
export const openRoot = (real: string): Effect.Effect<Dir, SystemError, Scope.Scope> =>
  procFd.enabled
    ? Effect.map(open(real, O_RDONLY | O_DIRECTORY), (fd): Dir => ({ fd, real }))
    : Effect.succeed<Dir>({ fd: undefined, real })

const isInside = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root.endsWith("/") ? root : `${root}/`)

/** The kernel's path of a descriptor now, or undefined. */
const pathOf = (fd: number): string | undefined => {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

/**
 * Whether what `fd` refers to is inside the root, by the kernel's own account of its path now (or, in the
 * fallback, by `realpath` of `path`).
 */
const insideNow = (root: Dir, fd: number | undefined, path: string): boolean => {
  if (procFd.enabled && root.fd !== undefined && fd !== undefined) {
    const rootNow = pathOf(root.fd)
    const now = pathOf(fd)
    return rootNow !== undefined && now !== undefined && isInside(rootNow, now)
  }
  try {
    return isInside(root.real, fs.realpathSync(path))
  } catch {
    return false
  }
}

const stillInside = (root: Dir, fd: number | undefined, path: string): Effect.Effect<boolean> =>
  Effect.sync(() => insideNow(root, fd, path))

/** Whether the folder `dir` is still inside the root (it may have been moved since it was opened). */
const folderInside = (root: Dir, dir: Dir): Effect.Effect<boolean> => stillInside(root, dir.fd, dir.real)

/** What a file that is not a regular one is, in words. */
export const describeKind = (stats: fs.Stats): string =>
  stats.isDirectory()
    ? "a folder"
    : stats.isFIFO()
    ? "a FIFO (named pipe)"
    : stats.isCharacterDevice()
    ? "a character device"
    : stats.isBlockDevice()
    ? "a block device"
    : stats.isSocket()
    ? "a socket"
    : stats.isSymbolicLink()
    ? "a symbolic link"
    : "not a regular file"

/** Why a file was not read. */
export class ReadRefused extends Data.TaggedError("ReadRefused")<{
  readonly reason: "missing" | "not-regular" | "too-large" | "moved" | "failed"
  /** For `not-regular`, what it is ("a FIFO (named pipe)"); for `failed`, the system's reason. */
  readonly detail: string
  /** The size, for `too-large`. */
  readonly size: number
}> {}

/**
 * Reads the regular file `name` of `dir`, at most `maxBytes` of it. The file is opened `O_NOFOLLOW` (a link is
 * refused, never followed) and `O_NONBLOCK` (opening a FIFO never waits for a writer), then checked on the
 * descriptor: a regular file, inside the root, no larger than `maxBytes`. What is read is the size `fstat` gave,
 * so a file that grows meanwhile is read as it was.
 *
 * This is what a grep does for every file of a walk, so it is one callback core (the calls on the descriptor
 * synchronous, the read through the thread pool) wrapped once: an interruption mid-read closes the descriptor
 * when the read returns.
 */
export const readRegular = (
  root: Dir,
  dir: Dir,
  name: string,
  maxBytes: number
): Effect.Effect<Uint8Array, ReadRefused> =>
  Effect.async<Uint8Array, ReadRefused>((resume) => {
    const refuse = (reason: ReadRefused["reason"], detail = "", size = 0) =>
      resume(Effect.fail(new ReadRefused({ reason, detail, size })))
    const path = entry(dir, name)
    let fd: number
    try {
      fd = fs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
    } catch (error) {
      const { code, reason } = systemError(error)
      return code === "ENOENT" || code === "ENOTDIR"
        ? refuse("missing")
        : code === "ELOOP"
        ? refuse("not-regular", "a symbolic link")
        : refuse("failed", reason)
    }
    let abandoned = false
    const close = () => {
      try {
        fs.closeSync(fd)
      } catch {
        // closed already
      }
    }
    let stats: fs.Stats
    try {
      stats = fs.fstatSync(fd)
    } catch (error) {
      close()
      return refuse("failed", systemError(error).reason)
    }
    if (!stats.isFile()) return (close(), refuse("not-regular", describeKind(stats)))
    if (!insideNow(root, fd, path)) return (close(), refuse("moved"))
    if (stats.size > maxBytes) return (close(), refuse("too-large", "", stats.size))
    const buffer = Buffer.allocUnsafe(stats.size)
    const readFrom = (at: number): void => {
      if (at >= buffer.length) return (close(), resume(Effect.succeed(buffer)))
      fs.read(fd, buffer, at, buffer.length - at, at, (error, read) => {
        if (abandoned) return close()
        if (error !== null) return (close(), refuse("failed", error.message))
        if (read === 0) return (close(), resume(Effect.succeed(buffer.subarray(0, at))))
        readFrom(at + read)
      })
    }
    readFrom(0)
    return Effect.sync(() => {
      abandoned = true
    })
  })

/** Why a write did not happen, in words for the model (the caller adds the file's name). */
export class WriteRefused extends Data.TaggedError("WriteRefused")<{ readonly reason: string }> {}

const writeRefused = (reason: string) => Effect.fail(new WriteRefused({ reason }))

const writeAll = (fd: number, bytes: Uint8Array) =>
  Effect.gen(function*() {
    let at = 0
    while (at < bytes.length) {
      const from = at
      at += yield* call<number>((done) => fs.write(fd, bytes, from, bytes.length - from, from, done))
    }
  })

/** The folder `name` of `dir`, made if missing; a link or a file there is refused. */
export const makeDir = (dir: Dir, name: string): Effect.Effect<Dir, WriteRefused, Scope.Scope> =>
  Effect.gen(function*() {
    yield* mkdir(entry(dir, name)).pipe(
      Effect.catchAll((error) =>
        error.code === "EEXIST" ? Effect.void : writeRefused(`cannot create ${name}: ${error.code}`)
      )
    )
    return yield* openDir(dir, name).pipe(
      Effect.mapError((error) =>
        new WriteRefused({
          reason: error.code === "ENOTDIR" || error.code === "ELOOP"
            ? `${name} on its way is not a folder (or was just replaced by a link)`
            : error.code === "ENOENT"
            ? `${name} on its way was moved or removed while it was being made (nothing was written)`
            : `cannot open the folder ${name}: ${error.code}`
        })
      )
    )
  })

/** How a file is written: `create` a new one (refused if the name exists by then), or replace one. */
export interface WriteOptions {
  readonly create: boolean
  /** The permission bits to keep (an overwritten file's); a new file gets `0o666` less the umask. */
  readonly mode?: number | undefined
}

/** A file's new content, written beside it and not yet in its place. */
export interface Staged {
  /**
   * Puts the content in its place: a rename over the file (`replace`), or a link to its name that fails if the
   * name exists (`create`). The folder is checked once more to be inside the root first.
   */
  readonly commit: Effect.Effect<void, WriteRefused>
}

const MOVED_OUT = "its folder was moved out of the workspace while it was being written (nothing was written)"

/**
 * Writes `bytes` to a temporary file created `O_EXCL | O_NOFOLLOW` in `dir`, to become its entry `name` on
 * {@link Staged.commit}; the temporary file is removed when the scope closes unless it was committed. Staging
 * every file of a change before committing any is how a change to several files fails before it touches one.
 */
export const stage = (
  root: Dir,
  dir: Dir,
  name: string,
  bytes: Uint8Array,
  options: WriteOptions
): Effect.Effect<Staged, WriteRefused, Scope.Scope> =>
  Effect.gen(function*() {
    const tempPath = entry(dir, `.agent-tools-${randomBytes(8).toString("hex")}.tmp`)
    // the temporary file goes when the scope closes, unless it was renamed into place
    let placed = false
    yield* Effect.addFinalizer(() => (placed ? Effect.void : unlink(tempPath)))
    // the descriptor is closed once the content is written, whatever the scope's length
    yield* Effect.scoped(Effect.gen(function*() {
      const fd = yield* open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666).pipe(
        Effect.catchAll((error) =>
          writeRefused(
            error.code === "ENOENT"
              ? "its folder was removed while it was being written (nothing was written)"
              : `cannot create a file in its folder: ${error.code}`
          )
        )
      )
      if (!(yield* stillInside(root, fd, tempPath))) return yield* writeRefused(MOVED_OUT)
      if (options.mode !== undefined) yield* Effect.ignore(fchmod(fd, options.mode & 0o7777))
      yield* writeAll(fd, bytes).pipe(Effect.catchAll((error) => writeRefused(`cannot write: ${error.reason}`)))
    }))
    const target = entry(dir, name)
    const commit = Effect.gen(function*() {
      if (!(yield* folderInside(root, dir))) return yield* writeRefused(MOVED_OUT)
      if (!options.create) {
        yield* rename(tempPath, target).pipe(Effect.catchAll((error) => writeRefused(`cannot write: ${error.code}`)))
        placed = true
        return
      }
      yield* link(tempPath, target).pipe(
        Effect.catchAll((error) =>
          error.code === "EEXIST"
            ? writeRefused("it was created by someone else meanwhile; read it first with read_file")
            // a filesystem without hard links: a rename, which cannot refuse an existing name
            : Effect.zipRight(
              rename(tempPath, target).pipe(Effect.catchAll((e) => writeRefused(`cannot write: ${e.code}`))),
              Effect.sync(() => (placed = true))
            )
        )
      )
    })
    return { commit }
  })

/** Writes `bytes` as the file `name` of `dir`, atomically: {@link stage}, then commit. */
export const writeAtomic = (
  root: Dir,
  dir: Dir,
  name: string,
  bytes: Uint8Array,
  options: WriteOptions
): Effect.Effect<void, WriteRefused> =>
  Effect.scoped(Effect.flatMap(stage(root, dir, name, bytes, options), (staged) => staged.commit))

/**
 * Removes the entry `name` of `dir` (a link is removed, never followed), once the folder is checked to be inside
 * the root still.
 */
export const removeEntry = (root: Dir, dir: Dir, name: string): Effect.Effect<void, WriteRefused> =>
  Effect.gen(function*() {
    if (!(yield* folderInside(root, dir))) {
      return yield* writeRefused("its folder was moved out of the workspace (nothing was removed)")
    }
    yield* sync(() => fs.unlinkSync(entry(dir, name))).pipe(
      Effect.catchAll((error) => writeRefused(`cannot remove it: ${error.code}`))
    )
  })

/** Removes the folder `name` of `dir` if it is empty; anything else leaves it as it is. */
export const removeEmptyDir = (dir: Dir, name: string): Effect.Effect<void> => rmdir(entry(dir, name))
