/**
 * The rules of one `.gitignore` file, matched without a pattern that can backtrack for long.
 *
 * The `ignore` package applies git's rules faithfully and fast, through JavaScript's `RegExp`: each `**` of a rule
 * becomes a repeated group (`(?:\/[^\/]+)*`), and two or more of them in one rule can split a deep path in
 * polynomially many ways. `a/**\/a/**\/a/**\/a/**\/c` took 12.8 s against one path 500 folders deep, and ten of
 * them 23 s at 40 folders, on the thread every other call needs; a `.gitignore` is a file of the workspace, which
 * the model writes. A rule with one `**` at most cannot split a path in more than one way, so those stay with the
 * `ignore` package; a rule with more is translated by glob.ts to RE2, linear in the path. The rules keep their
 * order (the last rule that matches decides, a `!` rule re-including), the file read as runs of `ignore` rules
 * between the RE2 ones.
 *
 * @internal
 */
import * as Either from "effect/Either"
import ignore from "ignore"
import * as Glob from "./glob.js"

/** The `ignore` package's rules, or one rule for RE2. */
type Segment =
  | { readonly _tag: "Run"; readonly rules: ReturnType<typeof ignore> }
  | {
    readonly _tag: "Rule"
    readonly negated: boolean
    readonly folderOnly: boolean
    readonly matcher: Glob.Matcher
  }

/** Rules with more than this many `**` are matched by RE2. */
export const MAX_GLOBSTARS_FOR_REGEXP = 1

/** Whether a path (relative to the file's folder, `/` after a folder's name) is ignored. */
export interface Rules {
  readonly ignores: (relative: string) => boolean
}

const globstars = (line: string): number => line.split("**").length - 1

/** One `.gitignore` line as git reads it, for RE2; undefined for a line that is no rule or cannot be compiled. */
const rule = (line: string): Segment | undefined => {
  // trailing spaces go unless escaped; a leading \ keeps # and ! as themselves (the glob takes \x as x)
  let text = line.replace(/(?<!\\)\s+$/, "")
  if (text === "" || text.startsWith("#")) return undefined
  const negated = text.startsWith("!")
  if (negated) text = text.slice(1)
  const folderOnly = text.endsWith("/")
  if (folderOnly) text = text.slice(0, -1)
  // a / anywhere but at the end anchors the rule to the file's folder; without one it matches at any depth
  const anchored = text.includes("/")
  const pattern = anchored ? text.replace(/^\//, "") : `**/${text}`
  const compiled = Glob.compile(pattern, { gitignore: true })
  return Either.isLeft(compiled) ? undefined : { _tag: "Rule", negated, folderOnly, matcher: compiled.right }
}

/** The rules of a `.gitignore` file's text. */
export const make = (text: string): Rules => {
  const segments: Array<Segment> = []
  let run: Array<string> = []
  const endRun = () => {
    if (run.length > 0) segments.push({ _tag: "Run", rules: ignore().add(run) })
    run = []
  }
  for (const line of text.split(/\r?\n/)) {
    if (globstars(line) <= MAX_GLOBSTARS_FOR_REGEXP) {
      run.push(line)
      continue
    }
    const parsed = rule(line)
    if (parsed === undefined) continue
    endRun()
    segments.push(parsed)
  }
  endRun()
  if (segments.length === 1 && segments[0]._tag === "Run") {
    const only = segments[0].rules
    return { ignores: (relative) => only.ignores(relative) }
  }
  return {
    ignores: (relative) => {
      const folder = relative.endsWith("/")
      const path = folder ? relative.slice(0, -1) : relative
      // the last rule that matches decides
      for (let i = segments.length - 1; i >= 0; i--) {
        const segment = segments[i]
        if (segment._tag === "Run") {
          const { ignored, unignored } = segment.rules.test(relative)
          if (ignored) return true
          if (unignored) return false
        } else if ((folder || !segment.folderOnly) && segment.matcher.test(path)) {
          return !segment.negated
        }
      }
      return false
    }
  }
}
