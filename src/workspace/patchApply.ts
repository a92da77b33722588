/**
 * A file's hunks applied to its text: where each hunk goes, and the text after. Pure.
 *
 * Where a hunk goes: its old side (kept and removed lines) is searched for in the file, from where the previous hunk
 * ended (hunks come in the file's order), first exactly, then ignoring trailing whitespace, then leading and
 * trailing whitespace, then all whitespace, as the reference implementations do; the first of those that finds it
 * decides. Found once, it goes there; found more than once, the patch is refused naming the lines, unless the
 * hunk says which: an `@@ <line>` anchor (the first match after that line is the one) or a unified diff's line
 * number (the match at that line, shifted by how far the hunks before it moved). An anchor is a line of the file
 * found the same way; the first anchor of a hunk must be unique after the previous hunk, or be the line that hunk
 * is in (two hunks in one function may both name it).
 *
 * The search is linear in the file: lines are compared as keys with Knuth-Morris-Pratt, never as a backtracking
 * scan, so a hostile patch cannot make it quadratic.
 *
 * Line endings are kept: each line keeps its own (`\r\n` in a CRLF file), added lines take the file's usual one,
 * a byte-order mark stays, and the file keeps ending with a newline or without one, unless a unified diff says
 * otherwise (`\ No newline at end of file`).
 *
 * @internal
 */
import { quoted } from "./errors.js"
import type { Hunk, HunkLine } from "./patchText.js"

/** A text split into lines, each with its own ending (`""` for a last line without one). */
interface Lines {
  readonly texts: Array<string>
  readonly endings: Array<string>
  readonly bom: boolean
  /** The ending most lines have: what added lines get. */
  readonly usual: "\n" | "\r\n"
}

const splitLines = (text: string): Lines => {
  const bom = text.startsWith("\uFEFF")
  const body = bom ? text.slice(1) : text
  const texts: Array<string> = []
  const endings: Array<string> = []
  let crlf = 0
  let start = 0
  for (let at = body.indexOf("\n"); at >= 0; at = body.indexOf("\n", start)) {
    const line = body.slice(start, at)
    if (line.endsWith("\r")) {
      texts.push(line.slice(0, -1))
      endings.push("\r\n")
      crlf++
    } else {
      texts.push(line)
      endings.push("\n")
    }
    start = at + 1
  }
  if (start < body.length) {
    texts.push(body.slice(start))
    endings.push("")
  }
  return { texts, endings, bom, usual: crlf * 2 > endings.length ? "\r\n" : "\n" }
}

/** How lines are compared, strictest first. */
const LEVELS: ReadonlyArray<{ readonly name: string; readonly key: (line: string) => string }> = [
  { name: "exactly", key: (line) => line },
  { name: "ignoring trailing whitespace", key: (line) => line.trimEnd() },
  { name: "ignoring leading and trailing whitespace", key: (line) => line.trim() },
  { name: "ignoring whitespace", key: (line) => line.replace(/\s+/g, "") }
]

/**
 * Where `needle` occurs in `hay` at or after `from`, at most `max` places, in order (Knuth-Morris-Pratt: linear in
 * both).
 */
export const occurrences = (
  hay: ReadonlyArray<string>,
  needle: ReadonlyArray<string>,
  from: number,
  max: number
): Array<number> => {
  const found: Array<number> = []
  const m = needle.length
  if (m === 0) return found
  const fail = new Array<number>(m).fill(0)
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = fail[k - 1]
    if (needle[i] === needle[k]) k++
    fail[i] = k
  }
  for (let i = from, k = 0; i < hay.length; i++) {
    while (k > 0 && hay[i] !== needle[k]) k = fail[k - 1]
    if (hay[i] === needle[k]) k++
    if (k === m) {
      found.push(i - m + 1)
      if (found.length >= max) return found
      k = fail[k - 1]
    }
  }
  return found
}

const matchesAt = (hay: ReadonlyArray<string>, needle: ReadonlyArray<string>, at: number): boolean => {
  if (at < 0 || at + needle.length > hay.length) return false
  for (let i = 0; i < needle.length; i++) if (hay[at + i] !== needle[i]) return false
  return true
}

/** A hunk that does not apply, and why, in words for the model (the caller names the file and the hunk). */
export interface Refusal {
  readonly _tag: "Refusal"
  readonly message: string
}

const refusal = (message: string): Refusal => ({ _tag: "Refusal", message })

/** The file's text after the hunks, and notes on hunks placed by a looser comparison than exact. */
export interface Applied {
  readonly text: string
  readonly notes: ReadonlyArray<string>
}

interface Placed {
  readonly at: number
  readonly removed: number
  readonly hunk: Hunk
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

const lineList = (positions: ReadonlyArray<number>): string =>
  positions.length === 2
    ? `lines ${positions[0] + 1} and ${positions[1] + 1}`
    : `lines ${positions.map((p) => p + 1).join(", ")}`

/** Keys of the file's lines per level, made when a level is first needed. */
const keyCache = (texts: ReadonlyArray<string>) => {
  const cache: Array<ReadonlyArray<string> | undefined> = []
  return (level: number): ReadonlyArray<string> => (cache[level] ??= texts.map(LEVELS[level].key))
}

const afterLine = (cursor: number) => (cursor === 0 ? "" : ` after line ${cursor}`)

/**
 * Applies `hunks` to `before`. `name` is how messages name the file. Gives the new text, or why a hunk does not
 * apply (naming the hunk: `hunk 2 of 3 ("@@ def f():")`).
 */
export const applyHunks = (
  name: string,
  before: string,
  hunks: ReadonlyArray<Hunk>
): Applied | Refusal => {
  const file = splitLines(before)
  const keys = keyCache(file.texts)
  const n = file.texts.length
  const notes: Array<string> = []
  const placed: Array<Placed> = []
  let cursor = 0
  // how far the hunks so far landed from their stated line numbers (unified diffs)
  let offset = 0
  for (let h = 0; h < hunks.length; h++) {
    const hunk = hunks[h]
    const label = `hunk ${h + 1} of ${hunks.length}${hunk.header === "" ? "" : ` (${quoted(hunk.header)})`}`
    const fail = (why: string) => refusal(`${name}, ${label}: ${why}`)
    let anchored = false
    for (let a = 0; a < hunk.anchors.length; a++) {
      const found = findAnchor(keys, hunk.anchors[a], cursor, a === 0, placed[placed.length - 1])
      if (found._tag === "Refusal") return fail(found.message)
      cursor = found.next
      anchored = true
      if (found.level > 0) notes.push(`${name}, ${label}: its @@ line matched ${LEVELS[found.level].name}`)
    }
    const old = hunk.lines.filter((l) => l.op !== "+").map((l) => l.text)
    if (old.length === 0) {
      // only added lines: after the anchor, at the stated line, or at the end of the file
      const at = anchored
        ? cursor
        : hunk.oldStart !== undefined
        ? Math.min(n, Math.max(cursor, hunk.oldStart + offset))
        : n
      placed.push({ at, removed: 0, hunk })
      cursor = at
      continue
    }
    const found = findBody(keys, old, cursor, n, hunk, anchored, offset)
    if (found._tag === "Refusal") return fail(found.message)
    if (found.level > 0) notes.push(`${name}, ${label}: matched ${LEVELS[found.level].name}`)
    if (hunk.oldStart !== undefined) offset = found.at - (hunk.oldStart - 1)
    placed.push({ at: found.at, removed: old.length, hunk })
    cursor = found.at + old.length
  }
  return { text: rebuild(file, placed), notes }
}

type Found = { readonly _tag: "Found"; readonly at: number; readonly level: number } | Refusal

const findAnchor = (
  keys: (level: number) => ReadonlyArray<string>,
  anchor: string,
  cursor: number,
  first: boolean,
  previous: Placed | undefined
): { readonly _tag: "Found"; readonly next: number; readonly level: number } | Refusal => {
  for (let level = 0; level < LEVELS.length; level++) {
    const hay = keys(level)
    const needle = [LEVELS[level].key(anchor)]
    const found = occurrences(hay, needle, cursor, 2)
    if (found.length === 0) continue
    if (first && found.length > 1) {
      return refusal(
        `its @@ line ${quoted(anchor)} appears more than once${afterLine(cursor)} (at ${
          lineList(found)
        }, at least); add an @@ line before it naming the class or block it is in, or more context lines`
      )
    }
    return { _tag: "Found", next: found[0] + 1, level }
  }
  // the line the previous hunk is in: two hunks of one function may both name it
  if (previous !== undefined) {
    for (let level = 0; level < LEVELS.length; level++) {
      const hay = keys(level)
      const key = LEVELS[level].key(anchor)
      for (let i = Math.min(cursor, hay.length) - 1; i >= 0; i--) {
        if (hay[i] === key) return { _tag: "Found", next: cursor, level }
      }
    }
  }
  return refusal(
    `its @@ line ${quoted(anchor)} was not found${afterLine(cursor)}; an @@ line repeats a line of the file (the ` +
      "function or class the change is in), exactly or up to whitespace; read the file (read_file) and copy it"
  )
}

const findBody = (
  keys: (level: number) => ReadonlyArray<string>,
  old: ReadonlyArray<string>,
  cursor: number,
  n: number,
  hunk: Hunk,
  anchored: boolean,
  offset: number
): Found => {
  const expected = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1 + offset
  for (let level = 0; level < LEVELS.length; level++) {
    const hay = keys(level)
    const needle = old.map(LEVELS[level].key)
    if (hunk.endOfFile) {
      if (n - old.length >= cursor && matchesAt(hay, needle, n - old.length)) {
        return { _tag: "Found", at: n - old.length, level }
      }
      continue
    }
    if (expected !== undefined && expected >= cursor && matchesAt(hay, needle, expected)) {
      return { _tag: "Found", at: expected, level }
    }
    const found = occurrences(hay, needle, cursor, anchored ? 1 : 2)
    if (found.length === 0) continue
    if (found.length > 1) {
      return refusal(
        `the lines it changes appear more than once${afterLine(cursor)} (at ${
          lineList(found)
        }, at least); add context lines that tell them apart, or an "@@ <line>" naming the function or class the ` +
          "change is in"
      )
    }
    return { _tag: "Found", at: found[0], level }
  }
  return refusal(notFound(keys, old, cursor, n, hunk))
}

/** Why the old side is not there: how much of it is, where, and the first line that is not. */
const notFound = (
  keys: (level: number) => ReadonlyArray<string>,
  old: ReadonlyArray<string>,
  cursor: number,
  n: number,
  hunk: Hunk
): string => {
  const loosest = LEVELS.length - 1
  const hay = keys(loosest)
  const needle = old.map(LEVELS[loosest].key)
  const fix = "make its kept and removed lines repeat the file's lines exactly (read_file shows them), then send " +
    "the patch again"
  if (hunk.endOfFile) {
    return `its lines are marked "*** End of File" but the file does not end with them; ${fix}`
  }
  const before = cursor > 0 ? occurrences(hay.slice(0, Math.min(n, cursor + old.length - 1)), needle, 0, 1) : []
  if (before.length > 0) {
    return `the lines it changes are at line ${
      before[0] + 1
    }, before where the previous hunk ended (line ${cursor}); ` +
      "hunks must come in the order of the file"
  }
  // the longest first part of the old side found (a prefix found means every shorter one is: binary search)
  let lo = 0
  let hi = old.length
  let at = -1
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    const found = occurrences(hay, needle.slice(0, mid), cursor, 1)
    if (found.length > 0) {
      lo = mid
      at = found[0]
    } else {
      hi = mid - 1
    }
  }
  if (lo === 0) return `its first line ${quoted(old[0])} is not in the file${afterLine(cursor)}; ${fix}`
  const next = at + lo
  const there = next < n ? `line ${next + 1} is ${quoted(keys(0)[next])}` : "the file ends there"
  return `its first ${plural(lo, "line")} match at line ${at + 1}, but the next, ${
    quoted(old[lo])
  }, does not follow (${there}); ${fix}`
}

/** The text with every placed hunk's lines in place of the old ones. */
const rebuild = (file: Lines, placed: ReadonlyArray<Placed>): string => {
  const texts: Array<string> = []
  const endings: Array<string> = []
  const n = file.texts.length
  let next = 0
  let endStated: boolean | undefined
  for (const { at, hunk, removed } of placed) {
    for (; next < at; next++) {
      texts.push(file.texts[next])
      endings.push(file.endings[next])
    }
    let from = at
    for (const line of hunk.lines as ReadonlyArray<HunkLine>) {
      if (line.op === "+") {
        texts.push(line.text)
        endings.push(file.usual)
      } else {
        if (line.op === " ") {
          // a kept line stays as the file has it (a looser match must not rewrite its whitespace)
          texts.push(file.texts[from])
          endings.push(file.endings[from])
        }
        from++
      }
    }
    next = at + removed
    if (next === n && hunk.oldStart !== undefined) endStated = !hunk.newEndsWithoutNewline
  }
  for (; next < n; next++) {
    texts.push(file.texts[next])
    endings.push(file.endings[next])
  }
  const endedWithNewline = n === 0 || file.endings[n - 1] !== ""
  const last = texts.length - 1
  for (let i = 0; i < last; i++) if (endings[i] === "") endings[i] = file.usual
  if (last >= 0) {
    const newline = endStated ?? endedWithNewline
    endings[last] = newline ? (endings[last] === "" ? file.usual : endings[last]) : ""
  }
  let text = file.bom ? "\uFEFF" : ""
  for (let i = 0; i < texts.length; i++) text += texts[i] + endings[i]
  return text
}
