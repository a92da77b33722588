/**
 * `apply_patch`: both formats, the places a hunk can go and the refusals, each refusal checked to leave the tree
 * byte for byte as it was.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Executor, Permission } from "../src/index.js"
import * as Workspace from "../src/Workspace.js"
import type { Change, Ready } from "../src/workspace/applyPatch.js"
import { commitAll, MAX_PATCH_CHARACTERS, MAX_PATCH_FILES } from "../src/workspace/applyPatch.js"
import { applyHunks } from "../src/workspace/patchApply.js"
import { parse } from "../src/workspace/patchText.js"
import { call, makeRoot, run, session } from "./fixtures/workspace.js"

/** Every entry below `dir` (folders included, as `name/`), with file contents and link targets: the whole tree. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(e.parentPath, e.name)
    const rel = path.relative(dir, full)
    if (e.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(full)}`
    else if (e.isDirectory()) out[`${rel}/`] = ""
    else out[rel] = fs.readFileSync(full).toString("base64")
  }
  return out
}

const patchCall = (patch: string, id = "p") => call("apply_patch", { patch }, id)

/** Applies a patch in a fresh toolkit over `root`; gives what the model reads. */
const apply = (root: string, patch: string) => Effect.map(run(root, [patchCall(patch)]), ([text]) => text)

/** Applies a patch that must be refused; checks the tree did not change at all and gives the message. */
const refused = (root: string, patch: string) =>
  Effect.gen(function*() {
    const before = snapshot(root)
    const text = yield* apply(root, patch)
    expect(text).toMatch(/^Error: the patch was not applied, no file was changed: /)
    expect(snapshot(root)).toEqual(before)
    return text.replace("Error: the patch was not applied, no file was changed: ", "")
  })

const read = (root: string, file: string) => fs.readFileSync(path.join(root, file), "utf8")

const greet = "export const greet = (name: string) => {\n  const hi = \"Hi\"\n  return `${hi} ${name}`\n}\n"

describe("apply_patch", () => {
  describe("the apply_patch format", () => {
    it.effect("updates, adds, deletes and moves files in one patch, and says what it did", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "src/greet.ts": greet, "src/old.ts": "old\n", "src/move.ts": "a\nb\n" })
        const text = yield* session(root, (batch) =>
          Effect.gen(function*() {
            yield* batch([call("read_file", { path: "src/old.ts" })])
            const [answer] = yield* batch([patchCall(
              [
                "*** Begin Patch",
                "*** Update File: src/greet.ts",
                "@@ export const greet = (name: string) => {",
                "-  const hi = \"Hi\"",
                "+  const hi = \"Hello\"",
                "   return `${hi} ${name}`",
                "*** Add File: lib/deep/new.ts",
                "+export const x = 1",
                "+",
                "+export const y = 2",
                "*** Delete File: src/old.ts",
                "*** Update File: src/move.ts",
                "*** Move to: lib/moved.ts",
                "@@",
                " a",
                "-b",
                "+c",
                "*** End Patch"
              ].join("\n")
            )])
            return answer
          }))
        expect(text).toBe(
          "applied the patch:\n" +
            "  updated src/greet.ts (+1 -1)\n" +
            "  added lib/deep/new.ts (3 lines)\n" +
            "  deleted src/old.ts\n" +
            "  moved src/move.ts to lib/moved.ts (+1 -1)"
        )
        expect(read(root, "src/greet.ts")).toBe(greet.replace("\"Hi\"", "\"Hello\""))
        expect(read(root, "lib/deep/new.ts")).toBe("export const x = 1\n\nexport const y = 2\n")
        expect(read(root, "lib/moved.ts")).toBe("a\nc\n")
        expect(fs.existsSync(path.join(root, "src/old.ts"))).toBe(false)
        expect(fs.existsSync(path.join(root, "src/move.ts"))).toBe(false)
        // no temporary file left behind
        expect(Object.keys(snapshot(root)).filter((f) => f.includes(".agent-tools-"))).toEqual([])
      }))

    it.effect("a hunk's context that is not in the file is refused, naming the file, the hunk and the line", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "src/greet.ts": greet, "b.txt": "b\n" })
        const message = yield* refused(
          root,
          [
            "*** Begin Patch",
            "*** Update File: b.txt",
            "-b",
            "+B",
            "*** Update File: src/greet.ts",
            "@@",
            " export const greet = (name: string) => {",
            "   const hi = \"Hi\"",
            "-  return `${hi}, ${name}`",
            "+  return `${hi}, ${name}!`",
            "*** End Patch"
          ].join("\n")
        )
        expect(message).toBe(
          "src/greet.ts, hunk 1 of 1 (\"@@\"): its first 2 lines match at line 1, but the next, " +
            "\"  return `${hi}, ${name}`\", does not follow (line 3 is \"  return `${hi} ${name}`\"); make its kept " +
            "and removed lines repeat the file's lines exactly (read_file shows them), then send the patch again"
        )
      }))

    it.effect("context that matches twice is refused naming both lines; an @@ line picks one", () =>
      Effect.gen(function*() {
        const twice = "function a() {\n  return 1\n}\nfunction b() {\n  return 1\n}\n"
        const root = makeRoot({ "twice.js": twice })
        const message = yield* refused(
          root,
          "*** Begin Patch\n*** Update File: twice.js\n@@\n-  return 1\n+  return 2\n*** End Patch"
        )
        expect(message).toBe(
          "twice.js, hunk 1 of 1 (\"@@\"): the lines it changes appear more than once (at lines 2 and 5, at least); " +
            "add context lines that tell them apart, or an \"@@ <line>\" naming the function or class the change is in"
        )
        const text = yield* apply(
          root,
          "*** Begin Patch\n*** Update File: twice.js\n@@ function b() {\n-  return 1\n+  return 2\n*** End Patch"
        )
        expect(text).toBe("applied the patch:\n  updated twice.js (+1 -1)")
        expect(read(root, "twice.js")).toBe(twice.replace(/return 1\n\}\n$/, "return 2\n}\n"))
      }))

    it.effect("adding a file that exists and deleting one that does not are refused", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        expect(yield* refused(root, "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch")).toBe(
          "a.txt already exists, so it cannot be added; change it with \"*** Update File: a.txt\" (or delete it " +
            "first in the same patch)"
        )
        expect(yield* refused(root, "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch")).toBe(
          "gone.txt does not exist, so it cannot be deleted; check the path (list_dir or glob show what is there)"
        )
        expect(yield* refused(root, "*** Begin Patch\n*** Update File: gone.txt\n@@\n-a\n+b\n*** End Patch")).toBe(
          "gone.txt does not exist, so it cannot be updated; to create it use \"*** Add File: gone.txt\" (check " +
            "the path: list_dir or glob show what is there)"
        )
      }))

    it.effect("deleting a file needs a read of it first; updating does not (its context is the proof)", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        expect(yield* refused(root, "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch")).toBe(
          "a.txt has not been read, so it cannot be deleted; read it first with read_file"
        )
        const texts = yield* session(root, (batch) =>
          Effect.gen(function*() {
            yield* batch([call("read_file", { path: "a.txt" })])
            fs.writeFileSync(path.join(root, "a.txt"), "changed\n")
            const [stale] = yield* batch([patchCall("*** Begin Patch\n*** Delete File: a.txt\n*** End Patch")])
            const [update] = yield* batch([
              patchCall("*** Begin Patch\n*** Update File: a.txt\n-changed\n+b\n*** End Patch")
            ])
            // what a patch wrote counts as read
            const [edit] = yield* batch([call("edit_file", { path: "a.txt", old_string: "b", new_string: "c" })])
            return [stale, update, edit]
          }))
        expect(texts[0]).toBe(
          "Error: the patch was not applied, no file was changed: a.txt has changed on disk since it was read, so it " +
            "cannot be deleted; read it again with read_file"
        )
        expect(texts[1]).toBe("applied the patch:\n  updated a.txt (+1 -1)")
        expect(texts[2]).toMatch(/^edited a\.txt/)
      }))

    it.effect("a CRLF file keeps its CRLF line endings, and a file without a final newline stays so", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "win.txt": "one\r\ntwo\r\nthree\r\n", "bare.txt": "one\ntwo" })
        const text = yield* apply(
          root,
          [
            "*** Begin Patch",
            "*** Update File: win.txt",
            " one",
            "-two",
            "+2",
            "+2.5",
            " three",
            "*** Update File: bare.txt",
            " one",
            "-two",
            "+2",
            "*** End of File",
            "*** End Patch"
          ].join("\n")
        )
        expect(text).toBe("applied the patch:\n  updated win.txt (+2 -1)\n  updated bare.txt (+1 -1)")
        expect(read(root, "win.txt")).toBe("one\r\n2\r\n2.5\r\nthree\r\n")
        expect(read(root, "bare.txt")).toBe("one\n2")
      }))

    it.effect("context differing in whitespace still applies, keeps the file's own kept lines, and says so", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "ws.py": "def f():\n    x = 1   \n    return x\n" })
        const text = yield* apply(
          root,
          "*** Begin Patch\n*** Update File: ws.py\n@@ def f():\n  x = 1\n-  return x\n+  return x + 1\n*** End Patch"
        )
        expect(text).toBe(
          "applied the patch:\n  updated ws.py (+1 -1)\n" +
            "(ws.py, hunk 1 of 1 (\"@@ def f():\"): matched ignoring leading and trailing whitespace)"
        )
        expect(read(root, "ws.py")).toBe("def f():\n    x = 1   \n  return x + 1\n")
      }))

    it.effect("a move across folders creates the folders and removes the source", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "src/a/util.ts": "export const u = 1\n" })
        const text = yield* apply(
          root,
          "*** Begin Patch\n*** Update File: src/a/util.ts\n*** Move to: lib/b/c/util.ts\n*** End Patch"
        )
        expect(text).toBe("applied the patch:\n  moved src/a/util.ts to lib/b/c/util.ts (+0 -0)")
        expect(read(root, "lib/b/c/util.ts")).toBe("export const u = 1\n")
        expect(fs.existsSync(path.join(root, "src/a/util.ts"))).toBe(false)
      }))

    it.effect("a move onto a file that exists is refused", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n", "b.txt": "b\n" })
        expect(yield* refused(root, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch")).toBe(
          "b.txt already exists, so a.txt cannot be moved there; move it elsewhere, or delete the file there first " +
            "in the same patch"
        )
      }))

    it.effect("a path outside the root refuses the whole patch, the files inside included", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const outside = makeRoot({ "secret.txt": "secret\n" })
        const message = yield* refused(
          root,
          [
            "*** Begin Patch",
            "*** Update File: a.txt",
            "-a",
            "+A",
            `*** Add File: ../${path.basename(outside)}/planted.txt`,
            "+x",
            "*** End Patch"
          ].join("\n")
        )
        expect(message).toBe(`../${path.basename(outside)}/planted.txt is outside the workspace; use a path inside it`)
        expect(fs.readdirSync(outside)).toEqual(["secret.txt"])
      }))

    it.effect("a dangling link leading outside refuses the patch; one staying inside creates its target", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const outside = fs.mkdtempSync(path.join(os.tmpdir(), "patch-outside-"))
        fs.symlinkSync(path.join(outside, "planted.sh"), path.join(root, "notes.md"))
        fs.symlinkSync("real/inside.md", path.join(root, "alias.md"))
        expect(yield* refused(root, "*** Begin Patch\n*** Add File: notes.md\n+x\n*** End Patch")).toBe(
          "notes.md is outside the workspace; use a path inside it"
        )
        expect(fs.readdirSync(outside)).toEqual([])
        const text = yield* apply(root, "*** Begin Patch\n*** Add File: alias.md\n+inside\n*** End Patch")
        expect(text).toBe("applied the patch:\n  added alias.md (1 line)")
        expect(read(root, "real/inside.md")).toBe("inside\n")
        expect(fs.readlinkSync(path.join(root, "alias.md"))).toBe("real/inside.md")
      }))

    it.effect("malformed patches are refused with the line and what to write", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const cases: ReadonlyArray<readonly [string, string]> = [
          [
            "",
            "the patch is empty; a patch starts with \"*** Begin Patch\" (the apply_patch format) or is a unified " +
            "diff (\"--- a/path\", \"+++ b/path\", then \"@@ -l,n +l,n @@\" hunks)"
          ],
          [
            "*** Begin Patch\n*** Update File: a.txt\n-a\n+b",
            "the patch does not end with \"*** End Patch\" (its last line is \"+b\"); it may have been cut short: " +
            "send the whole patch, from \"*** Begin Patch\" to \"*** End Patch\""
          ],
          [
            "*** Begin Patch\n*** End Patch",
            "the patch changes no file: there is nothing between \"*** Begin Patch\" and \"*** End Patch\""
          ],
          [
            "*** Begin Patch\n*** Update File: a.txt\n@@\nreplace a with b\n*** End Patch",
            "line 4: \"replace a with b\" in the change of a.txt does not start with \" \" (a kept line), \"-\" (a " +
            "removed line) or \"+\" (an added line)"
          ],
          [
            "*** Begin Patch\n*** Add File: n.txt\nno plus\n*** End Patch",
            "line 3: \"no plus\" in \"*** Add File: n.txt\" does not start with \"+\"; every line of an added file " +
            "starts with +"
          ],
          [
            "*** Begin Patch\n*** Modify File: a.txt\n*** End Patch",
            "line 2: \"*** Modify File: a.txt\" is not a header of the apply_patch format; the headers are \"*** Add " +
            "File: <path>\", \"*** Update File: <path>\" (then \"*** Move to: <path>\" to rename), \"*** Delete " +
            "File: <path>\", \"*** End of File\" and \"*** End Patch\""
          ],
          [
            "please change a to b",
            "the patch is neither format: a patch starts with \"*** Begin Patch\" (the apply_patch format) or is a " +
            "unified diff (\"--- a/path\", \"+++ b/path\", then \"@@ -l,n +l,n @@\" hunks); its first line is " +
            "\"please change a to b\""
          ],
          [
            "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n*** End Patch",
            "the patch changes nothing: every file would stay as it is"
          ]
        ]
        for (const [patch, expected] of cases) expect(yield* refused(root, patch)).toBe(expected)
      }))

    it.effect("a patch over the size limit is refused before it is read", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const huge = `*** Begin Patch\n*** Add File: big.txt\n${
          "+x\n".repeat(MAX_PATCH_CHARACTERS / 3 + 1)
        }*** End Patch`
        expect(yield* refused(root, huge)).toBe(
          "the patch is 4 MB long; the limit is 4 MB: send it in several smaller patches"
        )
      }))

    it.effect("a patch of more files than the limit is refused, whatever its size", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const adds = Array.from({ length: MAX_PATCH_FILES + 1 }, (_, i) => `*** Add File: new/${i}.txt\n+${i}`)
        expect(yield* refused(root, `*** Begin Patch\n${adds.join("\n")}\n*** End Patch`)).toBe(
          `the patch changes ${MAX_PATCH_FILES + 1} files; the limit is ${MAX_PATCH_FILES}: send it in several ` +
            "smaller patches"
        )
        const fine = adds.slice(0, MAX_PATCH_FILES)
        expect(yield* apply(root, `*** Begin Patch\n${fine.join("\n")}\n*** End Patch`)).toMatch(
          /^applied the patch:\n {2}added new\/0\.txt \(1 line\)\n/
        )
        expect(fs.readdirSync(path.join(root, "new"))).toHaveLength(MAX_PATCH_FILES)
      }))

    it.effect("a patch whose files hold more than 64 MB is refused before it reads them all", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const big = Buffer.alloc(17 * 1024 * 1024, "a\n")
        for (let i = 0; i < 4; i++) fs.writeFileSync(path.join(root, `big${i}.txt`), big)
        const moves = [0, 1, 2, 3].map((i) => `*** Update File: big${i}.txt\n*** Move to: moved${i}.txt`)
        expect(yield* refused(root, `*** Begin Patch\n${moves.join("\n")}\n*** End Patch`)).toBe(
          "the files it changes hold more than 64 MB, before and after; send it in several smaller patches"
        )
      }))

    it.effect("a patch in a here-document, as models write for a shell, is read as the patch", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const text = yield* apply(
          root,
          "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch\nEOF\n"
        )
        expect(text).toBe("applied the patch:\n  updated a.txt (+1 -1)")
        expect(read(root, "a.txt")).toBe("b\n")
      }))

    it.effect("one patch may delete a file and add it again, or add one and update it", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const text = yield* session(root, (batch) =>
          Effect.gen(function*() {
            yield* batch([call("read_file", { path: "a.txt" })])
            const [answer] = yield* batch([patchCall(
              "*** Begin Patch\n*** Delete File: a.txt\n*** Add File: a.txt\n+fresh\n*** Add File: n.txt\n+1\n" +
                "*** Update File: n.txt\n-1\n+2\n*** End Patch"
            )])
            return answer
          }))
        expect(text).toBe(
          "applied the patch:\n  deleted a.txt\n  added a.txt (1 line)\n  added n.txt (1 line)\n  updated n.txt (+1 -1)"
        )
        expect(read(root, "a.txt")).toBe("fresh\n")
        expect(read(root, "n.txt")).toBe("2\n")
      }))
  })

  describe("unified diffs", () => {
    it.effect("applies a git diff of several files: an update, an addition, a deletion and a rename", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "src/greet.ts": greet, "old.txt": "x\ny\n", "name.txt": "n\n" })
        const text = yield* apply(
          root,
          [
            "diff --git a/src/greet.ts b/src/greet.ts",
            "index 1111111..2222222 100644",
            "--- a/src/greet.ts",
            "+++ b/src/greet.ts",
            "@@ -1,4 +1,4 @@",
            " export const greet = (name: string) => {",
            "-  const hi = \"Hi\"",
            "+  const hi = \"Hey\"",
            "   return `${hi} ${name}`",
            " }",
            "diff --git a/new.txt b/new.txt",
            "new file mode 100644",
            "--- /dev/null",
            "+++ b/new.txt",
            "@@ -0,0 +1,2 @@",
            "+first",
            "+second",
            "diff --git a/old.txt b/old.txt",
            "deleted file mode 100644",
            "--- a/old.txt",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            "-x",
            "-y",
            "diff --git a/name.txt b/renamed.txt",
            "similarity index 100%",
            "rename from name.txt",
            "rename to renamed.txt"
          ].join("\n")
        )
        expect(text).toBe(
          "applied the patch:\n  updated src/greet.ts (+1 -1)\n  added new.txt (2 lines)\n  deleted old.txt\n" +
            "  moved name.txt to renamed.txt (+0 -0)"
        )
        expect(read(root, "src/greet.ts")).toContain("\"Hey\"")
        expect(read(root, "new.txt")).toBe("first\nsecond\n")
        expect(read(root, "renamed.txt")).toBe("n\n")
        expect(fs.existsSync(path.join(root, "old.txt"))).toBe(false)
        expect(fs.existsSync(path.join(root, "name.txt"))).toBe(false)
      }))

    it.effect("the line numbers pick among repeated context; wrong counts do not matter", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "r.txt": "x\nsame\nx\nsame\nx\n" })
        const text = yield* apply(root, "--- a/r.txt\n+++ b/r.txt\n@@ -4,7 +4,9 @@\n-same\n+changed\n")
        expect(text).toBe("applied the patch:\n  updated r.txt (+1 -1)")
        expect(read(root, "r.txt")).toBe("x\nsame\nx\nchanged\nx\n")
      }))

    it.effect("a deletion whose lines differ from the file, and \\ No newline at end of file", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "d.txt": "1\n2\n3\n", "e.txt": "a\nb\n" })
        expect(yield* refused(root, "--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-1\n-2\n")).toBe(
          "d.txt is deleted by the patch, but its hunks do not show all of its lines; a deletion must remove every " +
            "line (or use \"*** Delete File\")"
        )
        const text = yield* apply(
          root,
          "--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
        )
        expect(text).toBe("applied the patch:\n  updated e.txt (+1 -1)")
        expect(read(root, "e.txt")).toBe("a\nc")
      }))
  })

  describe("atomicity", () => {
    it.effect("a hunk that fails in the last file leaves the files before it untouched", () =>
      Effect.gen(function*() {
        const files: Record<string, string> = {}
        for (let i = 0; i < 20; i++) files[`f${i}.txt`] = `line ${i}\n`
        const root = makeRoot(files)
        const hunks = Object.keys(files).map((name, i) =>
          `*** Update File: ${name}\n-line ${i}\n+LINE ${i === 19 ? "nineteen is not here" : i}`
        )
        hunks[19] = "*** Update File: f19.txt\n-not line 19\n+x"
        const message = yield* refused(root, `*** Begin Patch\n${hunks.join("\n")}\n*** End Patch`)
        expect(message).toBe(
          "f19.txt, hunk 1 of 1: its first line \"not line 19\" is not in the file; make its kept and removed lines " +
            "repeat the file's lines exactly (read_file shows them), then send the patch again"
        )
      }))

    it.effect("a write that fails during the commit puts back the files committed before it", () =>
      Effect.gen(function*() {
        // b.txt's staged content is taken away (as a full disk or another process could) while big.txt, after it in
        // the patch, is still being staged: a.txt commits first, then b.txt fails, and a.txt is put back
        const root = makeRoot({ "a.txt": "a\n", "b/b.txt": "b\n" })
        const before = snapshot(root)
        const watcher = fs.watch(path.join(root, "b"), (_, name) => {
          if (name !== null && name.startsWith(".agent-tools-")) fs.rmSync(path.join(root, "b", name), { force: true })
        })
        const big = "+y\n".repeat(1_300_000)
        const text = yield* apply(
          root,
          "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b/b.txt\n-b\n+B\n" +
            `*** Add File: big.txt\n${big}*** End Patch`
        ).pipe(Effect.ensuring(Effect.sync(() => watcher.close())))
        expect(text).toBe(
          "Error: the patch was not applied, no file was changed: cannot write b/b.txt: cannot write: ENOENT; the " +
            "files changed before it were put back"
        )
        expect(snapshot(root)).toEqual(before)
      }))

    it.effect("the commit undoes what it committed, last first, and says which file could not be put back", () =>
      Effect.gen(function*() {
        const log: Array<string> = []
        const change = (shown: string, kind: Change["kind"]) =>
          ({ kind, text: undefined, state: { target: { shown } } }) as unknown as Change
        const ready = (shown: string, kind: Change["kind"], commit: boolean, undo = true): Ready => ({
          change: change(shown, kind),
          commit: commit
            ? Effect.sync(() => void log.push(`commit ${shown}`))
            : Effect.fail(`${shown} is in the way`),
          undo: undo ? Effect.sync(() => void log.push(`undo ${shown}`)) : Effect.fail(`${shown} is gone`)
        })
        const first = yield* Effect.flip(commitAll([
          ready("gone.txt", "delete", true),
          ready("a.txt", "replace", true),
          ready("b.txt", "create", true),
          ready("c.txt", "replace", false)
        ]))
        // writes go before removals; the undoing goes backwards
        expect(log).toEqual(["commit a.txt", "commit b.txt", "undo b.txt", "undo a.txt"])
        expect(first.message).toBe(
          "the patch was not applied, no file was changed: cannot write c.txt: c.txt is in the way; the files " +
            "changed before it were put back"
        )
        const second = yield* Effect.flip(commitAll([
          ready("a.txt", "replace", true, false),
          ready("gone.txt", "delete", false)
        ]))
        expect(second.message).toBe(
          "the patch failed midway: cannot remove gone.txt: gone.txt is in the way; putting back the files changed " +
            "before it failed for a.txt (a.txt is gone): check them (read_file) before going on"
        )
      }))
  })

  describe("the tool", () => {
    it.effect("the permission preview is one unified diff per file; the description lists every file", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const requests = yield* Ref.make<ReadonlyArray<Permission.PermissionRequest>>([])
        const layer = Permission.layer((request) =>
          Effect.as(Ref.update(requests, (all) => [...all, request]), Permission.deny("just looking"))
        )
        const before = snapshot(root)
        const [outcome] = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          return yield* Executor.run(kit, [
            patchCall("*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** Add File: n.txt\n+new\n*** End Patch")
          ])
        })).pipe(Effect.provide(Layer.merge(NodeContext.layer, layer)))
        expect(outcome._tag).toBe("Left")
        const [request] = yield* Ref.get(requests)
        expect(request.action).toBe("write")
        expect(request.description).toBe("apply a patch: update a.txt, add n.txt")
        expect(request.path).toBeUndefined()
        expect(request.preview).toBe(
          "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-a\n+b\n" +
            "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+new\n"
        )
        expect(snapshot(root)).toEqual(before)
      }))

    it.effect("calls on the files a patch names share their resource keys with the other file tools", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const texts = yield* run(root, [
          patchCall("*** Begin Patch\n*** Update File: a.txt\n-a\n+b\n*** End Patch", "1"),
          call("read_file", { path: "a.txt" }, "2"),
          patchCall("*** Begin Patch\n*** Update File: a.txt\n-b\n+c\n*** End Patch", "3"),
          call("read_file", { path: "a.txt" }, "4")
        ])
        expect(texts).toEqual([
          "applied the patch:\n  updated a.txt (+1 -1)",
          "     1\tb",
          "applied the patch:\n  updated a.txt (+1 -1)",
          "     1\tc"
        ])
      }))

    it.effect("applyPatch: false leaves it out of the toolkit", () =>
      Effect.gen(function*() {
        const names = yield* Effect.scoped(
          Effect.map(Workspace.toolkit({ root: makeRoot(), applyPatch: false }), (kit) => kit.tools.map((t) => t.name))
        ).pipe(Effect.provide(NodeContext.layer))
        expect(names).not.toContain("apply_patch")
      }))
  })

  describe("placing hunks", () => {
    const hunkOf = (patch: string) => {
      const parsed = parse(patch)
      if ("_tag" in parsed) throw new Error(parsed.message)
      const change = parsed.changes[0]
      if (change._tag !== "Update") throw new Error("not an update")
      return change.hunks
    }

    it("the search is linear: 100,000 identical lines and a hunk of 5,000 of them that does not fit", () => {
      const file = "x\n".repeat(100_000)
      const hunk = `*** Begin Patch\n*** Update File: f\n${" x\n".repeat(5_000)}-y\n+z\n*** End Patch`
      const started = Date.now()
      const result = applyHunks("f", file, hunkOf(hunk))
      expect("_tag" in result && result.message).toMatch(/^f, hunk 1 of 1: its first 5000 lines match at line 1/)
      expect(Date.now() - started).toBeLessThan(2_000)
    })

    it("an @@ line that appears twice is refused; a second hunk may name the block the first is in", () => {
      const file = "class A {\n  m() {\n    a()\n    b()\n  }\n}\nclass B {\n  m() {\n    a()\n  }\n}\n"
      const twice = applyHunks(
        "f",
        file,
        hunkOf("*** Begin Patch\n*** Update File: f\n@@   m() {\n-    a()\n+    c()\n*** End Patch")
      )
      expect("_tag" in twice && twice.message).toBe(
        "f, hunk 1 of 1 (\"@@   m() {\"): its @@ line \"  m() {\" appears more than once (at lines 2 and 8, at least); " +
          "add an @@ line before it naming the class or block it is in, or more context lines"
      )
      const nested = applyHunks(
        "f",
        file,
        hunkOf(
          "*** Begin Patch\n*** Update File: f\n@@ class B {\n@@   m() {\n-    a()\n+    c()\n*** End Patch"
        )
      )
      expect("_tag" in nested ? nested.message : nested.text).toBe(
        file.replace(/a\(\)\n {2}\}\n\}\n$/, "c()\n  }\n}\n")
      )
      const both = applyHunks(
        "f",
        file,
        hunkOf(
          "*** Begin Patch\n*** Update File: f\n@@ class A {\n-    a()\n+    a1()\n@@ class A {\n-    b()\n+    b1()\n" +
            "*** End Patch"
        )
      )
      expect("_tag" in both ? both.message : both.text).toBe(file.replace("a()\n    b()", "a1()\n    b1()"))
    })

    it("hunks out of the file's order are refused saying so", () => {
      const result = applyHunks(
        "f",
        "1\n2\n3\n4\n",
        hunkOf("*** Begin Patch\n*** Update File: f\n@@\n-3\n+three\n@@\n-1\n+one\n*** End Patch")
      )
      expect("_tag" in result && result.message).toBe(
        "f, hunk 2 of 2 (\"@@\"): the lines it changes are at line 1, before where the previous hunk ended (line 3); " +
          "hunks must come in the order of the file"
      )
    })

    it("a byte-order mark stays, and lines added to a file without a final newline get one before them", () => {
      const result = applyHunks(
        "f",
        "\uFEFFa\nb",
        hunkOf("*** Begin Patch\n*** Update File: f\n a\n b\n+c\n*** End Patch")
      )
      expect("_tag" in result ? result.message : result.text).toBe("\uFEFFa\nb\nc")
    })
  })
})
