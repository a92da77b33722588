/**
 * Patch text, parsed: the apply_patch format models are trained on (`*** Begin Patch` ... `*** End Patch`) and
 * unified diffs (`--- a/x` / `+++ b/x` / `@@ -l,n +l,n @@`, several files, `/dev/null` for an added or deleted
 * file, git's headers for renames and empty files). Pure: text in, the changes it asks for out, or a problem in
 * words the model can act on. Applying them is patchApply.ts (lines) and applyPatch.ts (files).
 *
 * Both parsers are lenient where models are known to slip and strict where a slip would change the meaning:
 * - a bare empty line inside a hunk is an empty kept line (the leading space is often lost); empty lines at the end
 *   of a hunk separate it from what follows;
 * - the apply_patch text may come wrapped in a shell here-document (`apply_patch <<'EOF'` ... `EOF`);
 * - a unified diff's line counts (`-l,n +l,n`) are not checked (models often get them wrong): the lines are read
 *   until the next header, and the counts only decide whether a `--- ` line inside a hunk is a removed line or the
 *   next file's header; its line numbers are a hint for where the hunk goes;
 * - anything else that is not a patch line is refused with its line number, never skipped.
 *
 * @internal
 */
import { pathTooLong, quoted } from "./errors.js"

/** One line of a hunk: kept (` `), removed (`-`) or added (`+`). */
export interface HunkLine {
  readonly op: " " | "-" | "+"
  readonly text: string
}

/** One hunk of a file's change. */
export interface Hunk {
  /** How messages name it: its `@@` line(s) as written (empty for a first hunk written without one). */
  readonly header: string
  /**
   * The apply_patch format's `@@ <line>` anchors: lines of the file the change comes after, outermost first
   * (`@@ class A` then `@@ def m():`).
   */
  readonly anchors: ReadonlyArray<string>
  readonly lines: ReadonlyArray<HunkLine>
  /** `*** End of File`: the hunk's lines end the file. */
  readonly endOfFile: boolean
  /** A unified diff's first old line (1-based; 0 for an insertion at the top), a hint of where the hunk goes. */
  readonly oldStart: number | undefined
  /** A unified diff's `\ No newline at end of file` after the new side's last line. */
  readonly newEndsWithoutNewline: boolean
}

/** What a patch does to one file. `at` is the patch line the change starts on (1-based), for messages. */
export type FileChange =
  | {
    readonly _tag: "Add"
    readonly path: string
    readonly content: string
    readonly at: number
  }
  | {
    readonly _tag: "Delete"
    readonly path: string
    /** A unified diff's deletion shows every line of the file: they are checked against it. */
    readonly hunks: ReadonlyArray<Hunk> | undefined
    readonly at: number
  }
  | {
    readonly _tag: "Update"
    readonly path: string
    readonly moveTo: string | undefined
    readonly hunks: ReadonlyArray<Hunk>
    readonly at: number
  }

export interface Patch {
  readonly format: "apply_patch" | "unified"
  readonly changes: ReadonlyArray<FileChange>
}

/** A patch that cannot be read: the message says where and what to write instead. */
export interface Malformed {
  readonly _tag: "Malformed"
  readonly message: string
}

const malformed = (message: string): Malformed => ({ _tag: "Malformed", message })

const BEGIN = "*** Begin Patch"
const END = "*** End Patch"
const ADD = "*** Add File: "
const DELETE = "*** Delete File: "
const UPDATE = "*** Update File: "
const MOVE = "*** Move to: "
const END_OF_FILE = "*** End of File"

const FORMATS = "a patch starts with \"*** Begin Patch\" (the apply_patch format) or is a unified diff " +
  "(\"--- a/path\", \"+++ b/path\", then \"@@ -l,n +l,n @@\" hunks)"

/**
 * Parses either format: text whose first line is `*** Begin Patch` (possibly inside a here-document) is the
 * apply_patch format; anything else must be a unified diff.
 */
export const parse = (text: string): Patch | Malformed => {
  const lines = text.replace(/\r\n/g, "\n").split("\n")
  let first = 0
  let last = lines.length - 1
  while (first <= last && lines[first].trim() === "") first++
  while (last >= first && lines[last].trim() === "") last--
  if (first > last) return malformed(`the patch is empty; ${FORMATS}`)
  const heredoc = /^(?:apply_patch\s+)?<<-?\s*['"]?([A-Za-z_]\w*)['"]?\s*$/.exec(lines[first].trim())
  if (heredoc !== null && last > first && lines[last].trim() === heredoc[1]) {
    first++
    last--
  }
  if (lines[first]?.trim() === BEGIN) return parseApplyPatch(lines, first, last)
  return parseUnified(lines, first, last)
}

// ---------------------------------------------------------------------------------------------------------------
// the apply_patch format
// ---------------------------------------------------------------------------------------------------------------

const isFileHeader = (line: string): boolean =>
  line.startsWith(ADD) || line.startsWith(DELETE) || line.startsWith(UPDATE) || line.trim() === END

const pathOf = (line: string, prefix: string, n: number): string | Malformed => {
  const path = line.slice(prefix.length).trim()
  if (path === "") return malformed(`line ${n}: ${quoted(line)} names no file; write the path after the colon`)
  const tooLong = pathTooLong(path)
  return tooLong === undefined ? path : malformed(`line ${n}: ${tooLong}`)
}

/** Whether only empty lines stand between `i` and the end of a body (a header, or the end of the text). */
const onlyBlankUntilHeader = (lines: ReadonlyArray<string>, i: number, last: number, isEnd: (l: string) => boolean) => {
  for (let j = i; j <= last; j++) {
    if (lines[j] === "") continue
    return isEnd(lines[j])
  }
  return true
}

const parseApplyPatch = (lines: ReadonlyArray<string>, first: number, last: number): Patch | Malformed => {
  if (lines[last].trim() !== END) {
    return malformed(
      `the patch does not end with "${END}" (its last line is ${quoted(lines[last])}); it may have been cut ` +
        `short: send the whole patch, from "${BEGIN}" to "${END}"`
    )
  }
  const changes: Array<FileChange> = []
  let i = first + 1
  const lineNo = (index: number) => index + 1
  while (i < last) {
    const line = lines[i]
    const n = lineNo(i)
    if (line.trim() === "") {
      i++
      continue
    }
    if (line.startsWith(ADD)) {
      const path = pathOf(line, ADD, n)
      if (typeof path !== "string") return path
      i++
      const content: Array<string> = []
      while (i < last && !isFileHeader(lines[i])) {
        const body = lines[i]
        if (body.startsWith("+")) content.push(body.slice(1))
        else if (body === "") {
          if (!onlyBlankUntilHeader(lines, i, last, isFileHeader)) content.push("")
        } else {
          return malformed(
            `line ${lineNo(i)}: ${quoted(body)} in "${ADD}${path}" does not start with "+"; every line of an ` +
              "added file starts with +"
          )
        }
        i++
      }
      changes.push({ _tag: "Add", path, content: content.length === 0 ? "" : `${content.join("\n")}\n`, at: n })
      continue
    }
    if (line.startsWith(DELETE)) {
      const path = pathOf(line, DELETE, n)
      if (typeof path !== "string") return path
      i++
      while (i < last && lines[i].trim() === "") i++
      if (i < last && !isFileHeader(lines[i])) {
        return malformed(
          `line ${lineNo(i)}: ${quoted(lines[i])} follows "${DELETE}${path}"; a deleted file takes no lines ` +
            `(start the next file with "${UPDATE}", "${ADD}" or "${DELETE}")`
        )
      }
      changes.push({ _tag: "Delete", path, hunks: undefined, at: n })
      continue
    }
    if (line.startsWith(UPDATE)) {
      const path = pathOf(line, UPDATE, n)
      if (typeof path !== "string") return path
      i++
      let moveTo: string | undefined
      if (i < last && lines[i].startsWith(MOVE)) {
        const to = pathOf(lines[i], MOVE, lineNo(i))
        if (typeof to !== "string") return to
        moveTo = to
        i++
      }
      const hunks: Array<Hunk> = []
      while (i < last && !isFileHeader(lines[i])) {
        const parsed = parseChunk(lines, i, last, path, hunks.length === 0)
        if ("_tag" in parsed) return parsed
        hunks.push(parsed.hunk)
        i = parsed.next
      }
      if (hunks.length === 0 && moveTo === undefined) {
        return malformed(
          `line ${n}: "${UPDATE}${path}" has no hunk; follow it with "@@" and the lines to change (" " kept, ` +
            "\"-\" removed, \"+\" added)"
        )
      }
      changes.push({ _tag: "Update", path, moveTo, hunks, at: n })
      continue
    }
    if (line.startsWith(MOVE)) {
      return malformed(`line ${n}: "${MOVE}" must come right after the "${UPDATE}<path>" line of the file it moves`)
    }
    if (line.startsWith("***")) {
      return malformed(
        `line ${n}: ${quoted(line)} is not a header of the apply_patch format; the headers are "${ADD}<path>", ` +
          `"${UPDATE}<path>" (then "${MOVE}<path>" to rename), "${DELETE}<path>", "${END_OF_FILE}" and "${END}"`
      )
    }
    return malformed(
      `line ${n}: ${quoted(line)} is outside any file's change; start each file with "${UPDATE}<path>", ` +
        `"${ADD}<path>" or "${DELETE}<path>"`
    )
  }
  if (changes.length === 0) {
    return malformed(`the patch changes no file: there is nothing between "${BEGIN}" and "${END}"`)
  }
  return { format: "apply_patch", changes }
}

const isChunkEnd = (line: string): boolean => line.startsWith("@@") || line.startsWith("***")

/** One `@@` chunk of an update: its anchors, its lines, and where the next one starts. */
const parseChunk = (
  lines: ReadonlyArray<string>,
  start: number,
  last: number,
  path: string,
  isFirst: boolean
): { readonly hunk: Hunk; readonly next: number } | Malformed => {
  let i = start
  const anchors: Array<string> = []
  const headers: Array<string> = []
  while (i < last && lines[i].startsWith("@@")) {
    headers.push(lines[i].trimEnd())
    const anchor = lines[i].slice(2).trim()
    if (anchor !== "") anchors.push(lines[i].slice(lines[i].startsWith("@@ ") ? 3 : 2))
    i++
  }
  if (headers.length === 0 && !isFirst) {
    return malformed(`line ${start + 1}: ${quoted(lines[start])} must be a "@@" line starting the next hunk`)
  }
  const body: Array<HunkLine> = []
  let endOfFile = false
  while (i < last && !isChunkEnd(lines[i])) {
    const line = lines[i]
    const op = line[0]
    if (op === " " || op === "-" || op === "+") body.push({ op, text: line.slice(1) })
    else if (line === "") {
      if (!onlyBlankUntilHeader(lines, i, last, isChunkEnd)) body.push({ op: " ", text: "" })
    } else {
      return malformed(
        `line ${i + 1}: ${quoted(line)} in the change of ${path} does not start with " " (a kept line), "-" (a ` +
          "removed line) or \"+\" (an added line)"
      )
    }
    i++
  }
  if (i < last && lines[i].trim() === END_OF_FILE) {
    endOfFile = true
    i++
  }
  if (body.length === 0) {
    return malformed(
      `line ${start + 1}: the hunk of ${path} has no lines; give the lines to change (" " kept, "-" removed, ` +
        "\"+\" added)"
    )
  }
  return {
    hunk: {
      header: headers.join(" "),
      anchors,
      lines: body,
      endOfFile,
      oldStart: undefined,
      newEndsWithoutNewline: false
    },
    next: i
  }
}

// ---------------------------------------------------------------------------------------------------------------
// unified diffs
// ---------------------------------------------------------------------------------------------------------------

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/

/** Git's quoted path (`"a/sp\"ace"`), unquoted; other paths as they are, less a trailing tab and timestamp. */
const unquote = (raw: string): string => {
  const text = raw.trimEnd()
  if (!text.startsWith("\"")) return text.split("\t")[0].trimEnd()
  let out = ""
  const bytes: Array<number> = []
  const flush = () => {
    if (bytes.length > 0) out += Buffer.from(bytes).toString("utf8")
    bytes.length = 0
  }
  for (let i = 1; i < text.length; i++) {
    const c = text[i]
    if (c === "\"") break
    if (c !== "\\") {
      flush()
      out += c
      continue
    }
    const next = text[++i]
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(text.slice(i, i + 3), 8))
      i += 2
      continue
    }
    flush()
    out += next === "n" ? "\n" : next === "t" ? "\t" : next
  }
  flush()
  return out
}

/** A side of a unified diff's header as a path: `/dev/null` is none; git's `a/` or `b/` prefix taken off. */
const sidePath = (raw: string, prefix: "a/" | "b/"): string | undefined => {
  const path = unquote(raw)
  if (path === "/dev/null") return undefined
  return path.startsWith(prefix) ? path.slice(2) : path
}

interface GitHeader {
  readonly oldPath: string | undefined
  readonly newPath: string | undefined
  readonly added: boolean
  readonly deleted: boolean
  readonly renameFrom: string | undefined
  readonly renameTo: string | undefined
}

const parseGitLine = (line: string): { readonly oldPath: string; readonly newPath: string } | undefined => {
  const rest = line.slice("diff --git ".length)
  const quotedPaths = /^("(?:[^"\\]|\\.)*")\s+("(?:[^"\\]|\\.)*")$/.exec(rest)
  if (quotedPaths !== null) {
    return { oldPath: sidePath(quotedPaths[1], "a/") ?? "", newPath: sidePath(quotedPaths[2], "b/") ?? "" }
  }
  // `a/x b/x`: split where the two halves name the same path, else at " b/"
  const middle = rest.indexOf(" b/")
  if (middle < 0) return undefined
  return { oldPath: sidePath(rest.slice(0, middle), "a/") ?? "", newPath: sidePath(rest.slice(middle + 1), "b/") ?? "" }
}

const parseUnified = (lines: ReadonlyArray<string>, first: number, last: number): Patch | Malformed => {
  const changes: Array<FileChange> = []
  let i = first
  const isFileStart = (at: number) =>
    lines[at].startsWith("diff --git ") || (lines[at].startsWith("--- ") && (lines[at + 1] ?? "").startsWith("+++ "))
  // leading text (a commit message, a note) is skipped up to the first file, as patch(1) does
  while (i <= last && !isFileStart(i)) {
    if (HUNK_HEADER.test(lines[i])) {
      return malformed(
        `line ${i + 1}: the hunk ${quoted(lines[i])} has no file header before it; put "--- a/<path>" and ` +
          "\"+++ b/<path>\" lines before the first @@"
      )
    }
    i++
  }
  if (i > last) {
    return malformed(
      `the patch is neither format: ${FORMATS}; its first line is ${quoted(lines[first])}`
    )
  }
  while (i <= last) {
    const at = i + 1
    let git: GitHeader | undefined
    if (lines[i].startsWith("diff --git ")) {
      const paths = parseGitLine(lines[i])
      if (paths === undefined) return malformed(`line ${at}: ${quoted(lines[i])} is not a "diff --git a/x b/x" line`)
      let added = false
      let deleted = false
      let renameFrom: string | undefined
      let renameTo: string | undefined
      i++
      while (i <= last && !lines[i].startsWith("--- ") && !lines[i].startsWith("diff --git ")) {
        const line = lines[i]
        if (line.startsWith("new file mode")) added = true
        else if (line.startsWith("deleted file mode")) deleted = true
        else if (line.startsWith("rename from ")) renameFrom = unquote(line.slice("rename from ".length))
        else if (line.startsWith("rename to ")) renameTo = unquote(line.slice("rename to ".length))
        else if (line.startsWith("Binary files ") || line === "GIT binary patch") {
          return malformed(
            `line ${i + 1}: the patch changes ${paths.newPath} as a binary file, which apply_patch cannot apply; ` +
              "write text files only (use bash for binary files)"
          )
        } else if (HUNK_HEADER.test(line)) {
          return malformed(
            `line ${i + 1}: the hunk of ${paths.newPath} has no "--- a/<path>" and "+++ b/<path>" lines before it`
          )
        } else if (line.trim() === "") break
        i++
      }
      git = { oldPath: paths.oldPath, newPath: paths.newPath, added, deleted, renameFrom, renameTo }
      if (i > last || !lines[i].startsWith("--- ")) {
        // a header with no hunks: an empty file added or deleted, or a pure rename
        if (git.added) changes.push({ _tag: "Add", path: git.newPath!, content: "", at })
        else if (git.deleted) changes.push({ _tag: "Delete", path: git.oldPath!, hunks: undefined, at })
        else if (git.renameFrom !== undefined && git.renameTo !== undefined) {
          changes.push({ _tag: "Update", path: git.renameFrom, moveTo: git.renameTo, hunks: [], at })
        } else {
          return malformed(`line ${at}: ${quoted(lines[at - 1])} is followed by no change; give its hunks`)
        }
        while (i <= last && !isFileStart(i)) {
          if (lines[i].trim() !== "") {
            return malformed(`line ${i + 1}: ${quoted(lines[i])} is not part of a unified diff`)
          }
          i++
        }
        continue
      }
    }
    if (!(lines[i + 1] ?? "").startsWith("+++ ")) {
      return malformed(`line ${i + 2}: a "+++ b/<path>" line must follow ${quoted(lines[i])}`)
    }
    const oldPath = sidePath(lines[i].slice(4), "a/")
    const newPath = sidePath(lines[i + 1].slice(4), "b/")
    i += 2
    if (oldPath === undefined && newPath === undefined) {
      return malformed(`line ${at}: both sides of the file header are /dev/null; name the file`)
    }
    const hunks: Array<Hunk> = []
    while (i <= last && !isFileStart(i)) {
      const header = HUNK_HEADER.exec(lines[i])
      if (header === null) {
        // blank lines, and svn's "Index:" and "====" lines between files
        if (lines[i].trim() === "" || lines[i].startsWith("Index: ") || /^=+$/.test(lines[i])) {
          i++
          continue
        }
        return malformed(
          `line ${i + 1}: ${quoted(lines[i])} is not a hunk header; hunks start with "@@ -l,n +l,n @@" (l the ` +
            "first line, n the count), then lines starting with \" \" (kept), \"-\" (removed) or \"+\" (added)"
        )
      }
      const parsed = parseUnifiedHunk(lines, i, last, header)
      hunks.push(parsed.hunk)
      i = parsed.next
    }
    const path = newPath ?? oldPath!
    if (oldPath === undefined || git?.added === true) {
      if (hunks.some((h) => h.lines.some((l) => l.op !== "+"))) {
        return malformed(`line ${at}: ${path} is added (its old side is /dev/null), so its hunk may only add lines`)
      }
      const added = hunks.flatMap((h) => h.lines.map((l) => l.text))
      const noNewline = hunks.length > 0 && hunks[hunks.length - 1].newEndsWithoutNewline
      const content = added.length === 0 ? "" : `${added.join("\n")}${noNewline ? "" : "\n"}`
      changes.push({ _tag: "Add", path, content, at })
    } else if (newPath === undefined || git?.deleted === true) {
      changes.push({ _tag: "Delete", path: oldPath, hunks, at })
    } else {
      if (hunks.length === 0 && oldPath === newPath) {
        return malformed(`line ${at}: the change of ${path} has no hunk; give its "@@ -l,n +l,n @@" hunks`)
      }
      changes.push({ _tag: "Update", path: oldPath, moveTo: newPath === oldPath ? undefined : newPath, hunks, at })
    }
  }
  return { format: "unified", changes }
}

const parseUnifiedHunk = (
  lines: ReadonlyArray<string>,
  start: number,
  last: number,
  header: RegExpExecArray
): { readonly hunk: Hunk; readonly next: number } => {
  let oldLeft = header[2] === undefined ? 1 : Number(header[2])
  const oldStart = Number(header[1])
  const body: Array<HunkLine> = []
  let newEndsWithoutNewline = false
  let i = start + 1
  const isEnd = (line: string) =>
    HUNK_HEADER.test(line) || line.startsWith("diff --git ") || line.startsWith("--- ") || line.startsWith("Index: ")
  for (; i <= last; i++) {
    const line = lines[i]
    // a `--- ` line is the next file's header, unless the counts say the hunk still has old lines to come
    if (line.startsWith("--- ") && !(oldLeft > 0 && !(lines[i + 1] ?? "").startsWith("+++ "))) break
    if (HUNK_HEADER.test(line) || line.startsWith("diff --git ") || line.startsWith("Index: ")) break
    const op = line[0]
    if (op === " " || op === "-" || op === "+") {
      body.push({ op, text: line.slice(1) })
      if (op !== "+") oldLeft--
    } else if (op === "\\") {
      const previous = body[body.length - 1]
      if (previous !== undefined && previous.op !== "-") newEndsWithoutNewline = true
    } else if (line === "" && !onlyBlankUntilHeader(lines, i, last, isEnd)) {
      body.push({ op: " ", text: "" })
      oldLeft--
    } else {
      break
    }
  }
  return {
    hunk: {
      header: lines[start].trimEnd(),
      anchors: [],
      lines: body,
      endOfFile: false,
      oldStart,
      newEndsWithoutNewline
    },
    next: i
  }
}
