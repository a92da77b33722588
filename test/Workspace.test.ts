import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Layer, Ref, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Executor, Permission, Recorder } from "../src/index.js"
import * as Process from "../src/internal/process.js"
import * as Workspace from "../src/Workspace.js"
import { call, filesBelow, makeRoot, run, session, text } from "./fixtures/workspace.js"

const groupGone = (pgid: number): boolean => !Process.groupAlive(pgid)

describe("Workspace", () => {
  describe("confinement", () => {
    it.effect("absolute paths outside, .. escapes and symlinks leading outside are refused by every tool", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const outside = makeRoot({ "secret.txt": "secret\n" })
        fs.symlinkSync(outside, path.join(root, "link"))
        const escapes = [
          path.join(outside, "secret.txt"),
          "../" + path.basename(outside) + "/secret.txt",
          "link/secret.txt"
        ]
        for (const given of escapes) {
          const texts = yield* run(root, [
            call("read_file", { path: given }),
            call("write_file", { path: given, content: "x" }),
            call("edit_file", { path: given, old_string: "secret", new_string: "x" }),
            call("list_dir", { path: path.dirname(given) === "." ? given : path.dirname(given) }),
            call("glob", { pattern: "*", path: path.dirname(given) }),
            call("grep", { pattern: "secret", path: given })
          ])
          for (const t of texts) expect(t).toMatch(/^Error: .* is outside the workspace; use a path inside it$/)
        }
        expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("secret\n")
      }))

    it.effect("paths inside the root are fine, absolute or relative, through links that stay inside", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "dir/a.txt": "hello\n" })
        fs.symlinkSync(path.join(root, "dir"), path.join(root, "alias"))
        const texts = yield* run(root, [
          call("read_file", { path: path.join(root, "dir/a.txt") }, "1"),
          call("read_file", { path: "alias/a.txt" }, "2"),
          call("read_file", { path: "dir/../dir/a.txt" }, "3")
        ])
        for (const t of texts) expect(t).toBe("     1\thello")
      }))

    it.effect("a root that does not exist fails the toolkit", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          Effect.scoped(Workspace.toolkit({ root: "/no/such/folder" })).pipe(Effect.provide(NodeContext.layer))
        )
        expect(error.message).toBe("the workspace root /no/such/folder does not exist")
      }))

    it.effect("a path or URL of 100,000 characters is refused quoting 120 of them, by every tool", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "a\n" })
        const long = "x".repeat(100_000)
        const calls = [
          call("read_file", { path: long }, "1"),
          call("write_file", { path: `../${long}`, content: "x" }, "2"),
          call("edit_file", { path: `/${long}`, old_string: "a", new_string: "b" }, "3"),
          call("list_dir", { path: long }, "4"),
          call("glob", { pattern: "*", path: long }, "5"),
          call("grep", { pattern: "a", path: long }, "6"),
          call("apply_patch", { patch: `*** Begin Patch\n*** Add File: ${long}\n+x\n*** End Patch` }, "7"),
          call("apply_patch", { patch: `--- /dev/null\n+++ b/${long}\n@@ -0,0 +1 @@\n+x\n` }, "8"),
          call("fetch", { url: `https://example.com/${long}` }, "9"),
          call("fetch", { url: `ftp:${long}` }, "10")
        ]
        const texts = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root, fetch: true })
          return (yield* Executor.run(kit, calls)).map(text)
        })).pipe(Effect.provide(NodeContext.layer))
        const cut = (given: string) => JSON.stringify(`${given.slice(0, 120)}…`)
        expect(texts[0]).toBe(
          `Error: the path ${cut(long)} is 100000 characters long, over the 4096 a path may have; give a shorter one`
        )
        expect(texts[8]).toBe(
          `Error: the URL ${cut(`https://example.com/${long}`)} is 100020 characters long, over the 8192 fetch takes`
        )
        for (const [i, t] of texts.entries()) {
          expect(t.length, calls[i].id).toBeLessThan(400)
          expect(t, calls[i].id).toMatch(/characters long, over the \d+/)
        }
        expect(filesBelow(root)).toEqual(["a.txt"])
      }))
  })

  describe("read_file", () => {
    it.effect("numbers lines, honours offset and limit, and says when more lines remain", () =>
      Effect.gen(function*() {
        const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"
        const root = makeRoot({ "f.txt": lines, "empty.txt": "" })
        const texts = yield* run(root, [
          call("read_file", { path: "f.txt", offset: 2, limit: 3 }, "1"),
          call("read_file", { path: "f.txt", offset: 8 }, "2"),
          call("read_file", { path: "f.txt", offset: 20 }, "3"),
          call("read_file", { path: "empty.txt" }, "4"),
          call("read_file", { path: "missing.txt" }, "5")
        ])
        expect(texts[0]).toBe(
          "     3\tline 3\n     4\tline 4\n     5\tline 5\n(showing lines 3-5 of 10; read on with offset 5)"
        )
        expect(texts[1]).toBe("     9\tline 9\n    10\tline 10")
        expect(texts[2]).toBe("(f.txt has 10 lines; offset 20 is past the end)")
        expect(texts[3]).toBe("(empty.txt is empty)")
        expect(texts[4]).toBe("Error: missing.txt does not exist; check the path (list_dir or glob show what is there)")
      }))

    it.effect("cuts lines over 2000 characters with a marker, and defaults to 2000 lines", () =>
      Effect.gen(function*() {
        const long = "x".repeat(2500)
        const many = Array.from({ length: 2500 }, (_, i) => `${i + 1}`).join("\n")
        const root = makeRoot({ "long.txt": long, "many.txt": many })
        const [first, second] = yield* run(root, [
          call("read_file", { path: "long.txt" }, "1"),
          call("read_file", { path: "many.txt" }, "2")
        ])
        expect(first).toBe(`     1\t${"x".repeat(2000)}… [line cut at 2000 characters]`)
        expect(second.split("\n").length).toBe(2001)
        expect(second.endsWith("(showing lines 1-2000 of 2500; read on with offset 2000)")).toBe(true)
      }))

    it.effect("images come back as image content; binary and oversized files are refused", () =>
      Effect.gen(function*() {
        const png = Uint8Array.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13])
        const root = makeRoot({ "pic.png": png, "bin.dat": Uint8Array.from([1, 2, 0, 3]) })
        fs.writeFileSync(path.join(root, "huge.txt"), "")
        fs.truncateSync(path.join(root, "huge.txt"), 25 * 1024 * 1024)
        const outcomes = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          return yield* Executor.run(kit, [
            call("read_file", { path: "pic.png" }, "1"),
            call("read_file", { path: "bin.dat" }, "2"),
            call("read_file", { path: "huge.txt" }, "3")
          ])
        })).pipe(Effect.provide(NodeContext.layer))
        expect(Either.isRight(outcomes[0]) && outcomes[0].right.content).toEqual([
          { type: "image", data: Buffer.from(png).toString("base64"), mimeType: "image/png" }
        ])
        expect(text(outcomes[1])).toBe("Error: bin.dat is a binary file; it cannot be read as text")
        expect(text(outcomes[2])).toBe("Error: huge.txt is too large to read (25 MB; the limit is 20 MB)")
      }))
  })

  describe("write_file and edit_file", () => {
    it.effect("write_file creates parent folders; overwriting needs a read first, and a fresh one after a change", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "old\n" })
        yield* session(root, (batch) =>
          Effect.gen(function*() {
            expect(yield* batch([call("write_file", { path: "deep/er/new.txt", content: "n\n" })])).toEqual([
              "created deep/er/new.txt (1 lines)"
            ])
            expect(fs.readFileSync(path.join(root, "deep/er/new.txt"), "utf8")).toBe("n\n")
            expect(yield* batch([call("write_file", { path: "a.txt", content: "new\n" })])).toEqual([
              "Error: a.txt exists and has not been read; read it first with read_file"
            ])
            yield* batch([call("read_file", { path: "a.txt" })])
            fs.writeFileSync(path.join(root, "a.txt"), "changed by someone else\n")
            expect(yield* batch([call("write_file", { path: "a.txt", content: "new\n" })])).toEqual([
              "Error: a.txt has changed on disk since it was read; read it again with read_file"
            ])
            yield* batch([call("read_file", { path: "a.txt" })])
            expect(yield* batch([call("write_file", { path: "a.txt", content: "new\n" })])).toEqual([
              "overwrote a.txt (1 lines)"
            ])
            // what it wrote counts as read
            expect(yield* batch([call("write_file", { path: "a.txt", content: "newer\n" })])).toEqual([
              "overwrote a.txt (1 lines)"
            ])
          }))
      }))

    it.effect("edit_file refuses not found, ambiguous (with the count), no-op and unread; replace_all replaces all", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "c.ts": "let a = 1\nlet b = 1\nlet c = 2\n" })
        yield* session(root, (batch) =>
          Effect.gen(function*() {
            expect(yield* batch([call("edit_file", { path: "c.ts", old_string: "1", new_string: "9" })])).toEqual([
              "Error: c.ts exists and has not been read; read it first with read_file"
            ])
            yield* batch([call("read_file", { path: "c.ts" })])
            const texts = yield* batch([
              call("edit_file", { path: "c.ts", old_string: "= 7", new_string: "= 8" }, "1"),
              call("edit_file", { path: "c.ts", old_string: "= 1", new_string: "= 9" }, "2"),
              call("edit_file", { path: "c.ts", old_string: "= 2", new_string: "= 2" }, "3")
            ])
            expect(texts).toEqual([
              "Error: old_string was not found in c.ts; it must match the file exactly, whitespace included",
              "Error: old_string appears 2 times in c.ts; give more surrounding context to pick one, or set " +
              "replace_all to replace every one",
              "Error: old_string and new_string are the same; nothing would change"
            ])
            const [edited] = yield* batch([
              call("edit_file", { path: "c.ts", old_string: "= 1", new_string: "= 9", replace_all: true })
            ])
            expect(edited).toBe(
              "edited c.ts (2 replacements); lines 1-3 now read:\n     1\tlet a = 9\n     2\tlet b = 9\n     3\tlet c = 2"
            )
            expect(fs.readFileSync(path.join(root, "c.ts"), "utf8")).toBe("let a = 9\nlet b = 9\nlet c = 2\n")
          }))
      }))

    it.effect("writes and edits are previewed to the permission requester as unified diffs", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "p.txt": "one\ntwo\n" })
        const requests = yield* Ref.make<Array<Permission.PermissionRequest>>([])
        const requester = Permission.layer((request) =>
          Effect.as(
            Ref.update(requests, (all) => [...all, request]),
            request.tool === "bash" ? Permission.deny("no") : Permission.allow
          )
        )
        const texts = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          yield* Executor.run(kit, [call("read_file", { path: "p.txt" })])
          return (yield* Executor.run(kit, [
            call("edit_file", { path: "p.txt", old_string: "two", new_string: "deux" }),
            call("write_file", { path: "q.txt", content: "new\n" }),
            call("bash", { command: "rm -rf /tmp/nothing" })
          ])).map(text)
        })).pipe(Effect.provide(Layer.merge(NodeContext.layer, requester)))
        expect(texts[2]).toBe("Error: permission denied: rm -rf /tmp/nothing: no")
        const all = yield* Ref.get(requests)
        const [edit, write, bash] = ["edit_file", "write_file", "bash"].map((tool) => all.find((r) => r.tool === tool)!)
        expect(edit).toMatchObject({ tool: "edit_file", action: "write", description: "edit p.txt", path: "p.txt" })
        expect(edit.preview).toContain("--- a/p.txt\n+++ b/p.txt\n")
        expect(edit.preview).toContain("-two\n+deux\n")
        expect(write).toMatchObject({ tool: "write_file", action: "write", description: "write 1 lines to q.txt" })
        expect(write.preview).toContain("+new\n")
        expect(bash).toMatchObject({ tool: "bash", action: "execute", description: "rm -rf /tmp/nothing" })
        expect(bash.annotations).toMatchObject({ destructive: true })
      }))
  })

  describe("bash", () => {
    it.live("the working directory and exported variables persist between calls; the exit code is stated", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "sub/x.txt": "x" })
        yield* session(root, (batch) =>
          Effect.gen(function*() {
            // a program last in the line (ls) must not cost the state: bash would exec it in place of the subshell
            expect(yield* batch([call("bash", { command: "cd sub && export GREETING=hello && ls" })])).toEqual([
              "x.txt\n(exit code 0)"
            ])
            const [second] = yield* batch([call("bash", { command: "pwd; echo $GREETING; ls; exit 4" })])
            expect(second).toBe(`${fs.realpathSync(path.join(root, "sub"))}\nhello\nx.txt\n(exit code 4)`)
            // `exit` ends the command, not the shell, and what it changed before exiting stays
            expect(yield* batch([call("bash", { command: "cd .. && export GREETING=bye && exit 1" })])).toEqual([
              "(no output)\n(exit code 1)"
            ])
            expect(yield* batch([call("bash", { command: "basename $PWD; echo $GREETING" })])).toEqual([
              `${path.basename(root)}\nbye\n(exit code 0)`
            ])
            const [errors] = yield* batch([call("bash", { command: "echo out; echo err >&2" })])
            expect(errors).toBe("out\nerr\n(exit code 0)")
          }))
      }))

    it.live("two bash calls in one batch run one after another in the model's order", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const texts = yield* run(root, [
          call("bash", { command: "sleep 0.3; echo first >> order.txt" }, "1"),
          call("bash", { command: "echo second >> order.txt; cat order.txt" }, "2")
        ])
        expect(texts[1]).toBe("first\nsecond\n(exit code 0)")
      }))

    it.live("interrupting `sleep 300 & wait` ends the background child too, and the shell still answers", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          const batch = yield* Executor.start(kit, [call("bash", { command: "sleep 300 & echo started; wait" })])
          const events = yield* Effect.fork(Stream.runCollect(batch.events))
          // wait for the command's process group record, then cancel
          let pgid: number | undefined
          while (pgid === undefined) {
            yield* Effect.sleep("50 millis")
            const found = (yield* Ref.get(entries)).find((e) => e.record.namespace === Workspace.BASH_PROCESS_NAMESPACE)
            pgid = found === undefined ? undefined : (found.record.data as { pgid: number }).pgid
          }
          expect(Process.groupAlive(pgid)).toBe(true)
          yield* batch.cancel("bash")
          const finished = Chunk.toReadonlyArray(yield* Fiber.join(events)).filter((e) => e._tag === "Finished")
          expect(finished.map((e) => e._tag === "Finished" && text(e.outcome))).toEqual([
            "Error: the call was cancelled before it finished"
          ])
          expect(groupGone(pgid)).toBe(true)
          expect((yield* Executor.run(kit, [call("bash", { command: "echo alive" })])).map(text)).toEqual([
            "alive\n(exit code 0)"
          ])
        })).pipe(Effect.provide(Layer.merge(NodeContext.layer, layer)))
      }))

    it.live("a command that outruns its timeout is stopped, with what it wrote so far", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const texts = yield* run(root, [call("bash", { command: "echo begun; sleep 30", timeout_ms: 600 })])
        expect(texts[0]).toBe(
          "Error: the command timed out after 600ms and was stopped (every process it started was ended; the working " +
            "directory and exported variables are as they were before it); output so far:\nbegun\n"
        )
      }))

    it.live("long output is cut in the middle with a marker", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const [output] = yield* run(root, [call("bash", { command: "seq 1 20000" })])
        expect(output).toContain("characters cut] …")
        expect(output.startsWith("1\n2\n3\n")).toBe(true)
        expect(output.endsWith("19999\n20000\n(exit code 0)")).toBe(true)
        expect(output.length).toBeLessThan(31_000)
      }))

    it.live("closing the toolkit's scope ends the shell and what its commands left running", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const entries = yield* Ref.make<ReadonlyArray<Recorder.Entry>>([])
        const layer = Recorder.layerMemory(entries)
        yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          expect((yield* Executor.run(kit, [call("bash", { command: "nohup sleep 300 >/dev/null 2>&1 & echo ok" })]))
            .map(text)).toEqual(["ok\n(exit code 0)"])
        })).pipe(Effect.provide(Layer.merge(NodeContext.layer, layer)))
        const pgid = ((yield* Ref.get(entries))[0].record.data as { pgid: number }).pgid
        yield* Effect.sleep("100 millis")
        expect(groupGone(pgid)).toBe(true)
      }))
  })

  describe("glob, grep, list_dir", () => {
    const tree = () => {
      const root = makeRoot({
        ".gitignore": "dist/\n*.log\n",
        "src/a.ts": "export const a = 1\n// TODO: a\n",
        "src/b.js": "const b = 'TODO'\n",
        "src/sub/.gitignore": "generated.ts\n",
        "src/sub/generated.ts": "TODO generated\n",
        "src/sub/c.ts": "c(1 + 2)\n",
        "dist/out.ts": "TODO dist\n",
        "app.log": "TODO log\n",
        "node_modules/pkg/index.ts": "TODO module\n",
        ".git/config": "TODO git\n"
      })
      fs.writeFileSync(path.join(root, "src/blob.bin"), Uint8Array.from([84, 79, 68, 79, 0, 1]))
      return root
    }

    it.effect("glob matches paths, respecting .gitignore files at every level and skipping node_modules and .git", () =>
      Effect.gen(function*() {
        const root = tree()
        const texts = yield* run(root, [
          call("glob", { pattern: "**/*.ts" }, "1"),
          call("glob", { pattern: "*.ts", path: "src" }, "2"),
          call("glob", { pattern: "**/*.py" }, "3")
        ])
        expect(texts[0]).toBe("src/a.ts\nsrc/sub/c.ts")
        expect(texts[1]).toBe("src/a.ts")
        expect(texts[2]).toBe("no files match **/*.py in .")
      }))

    it.effect("grep answers file:line: text, with regex or literal, an include filter, and skips binaries", () =>
      Effect.gen(function*() {
        const root = tree()
        const texts = yield* run(root, [
          call("grep", { pattern: "TODO" }, "1"),
          call("grep", { pattern: "TODO", include: "*.ts" }, "2"),
          call("grep", { pattern: "c(1 + 2)", literal: true }, "3"),
          call("grep", { pattern: "c(1 +" }, "4"),
          call("grep", { pattern: "^export", path: "src/a.ts" }, "5")
        ])
        expect(texts[0]).toBe("src/a.ts:2: // TODO: a\nsrc/b.js:1: const b = 'TODO'\n(1 file not searched: 1 binary)")
        expect(texts[1]).toBe("src/a.ts:2: // TODO: a")
        expect(texts[2]).toBe("src/sub/c.ts:1: c(1 + 2)\n(1 file not searched: 1 binary)")
        expect(texts[3]).toBe(
          "Error: invalid regular expression (RE2 syntax): missing closing ): `c(1 +`; correct the pattern; or set " +
            "literal to search for the text as it is"
        )
        expect(texts[4]).toBe("src/a.ts:1: export const a = 1")
      }))

    it.effect("list_dir draws a tree, honours ignore patterns, and skips what git ignores", () =>
      Effect.gen(function*() {
        const root = tree()
        const texts = yield* run(root, [
          call("list_dir", {}, "1"),
          call("list_dir", { path: "src", ignore: ["sub"] }, "2"),
          call("list_dir", { path: "src/a.ts" }, "3")
        ])
        expect(texts[0]).toBe(
          "./\n  .gitignore\n  src/\n    a.ts\n    b.js\n    blob.bin\n    sub/\n      .gitignore\n      c.ts"
        )
        expect(texts[1]).toBe("src/\n  a.ts\n  b.js\n  blob.bin")
        expect(texts[2]).toBe("Error: src/a.ts is a file; use read_file to read it")
      }))

    it.effect("results are capped with a note", () =>
      Effect.gen(function*() {
        const files: Record<string, string> = {}
        for (let i = 0; i < 600; i++) files[`many/f${String(i).padStart(3, "0")}.txt`] = "hit\n"
        const root = makeRoot(files)
        const [globbed, grepped, listed] = yield* run(root, [
          call("glob", { pattern: "**/*.txt" }),
          call("grep", { pattern: "hit" }),
          call("list_dir", {})
        ])
        expect(globbed.split("\n").length).toBe(501)
        expect(globbed.endsWith("(showing 500 of 600 matches; narrow the pattern or the path)")).toBe(true)
        expect(grepped.endsWith("(showing 200 of 600 matches; narrow the search)")).toBe(true)
        expect(listed.endsWith("(showing 500 of 601 entries; list a subfolder or add ignore patterns)")).toBe(true)
      }))
  })

  it.effect("annotations: readers are read-only, writers and bash destructive; keys per file and for the shell", () =>
    Effect.gen(function*() {
      const root = makeRoot()
      const kit = yield* Effect.scoped(Workspace.toolkit({ root })).pipe(Effect.provide(NodeContext.layer))
      const byName = Object.fromEntries(kit.tools.map((t) => [t.name, t]))
      for (const name of ["read_file", "glob", "grep", "list_dir"]) expect(byName[name].annotations.readOnly).toBe(true)
      for (const name of ["write_file", "edit_file", "bash"]) expect(byName[name].annotations.destructive).toBe(true)
      expect(byName.write_file.permissionAction).toBe("write")
      expect(byName.edit_file.permissionAction).toBe("write")
      expect(byName.bash.permissionAction).toBe("execute")
      expect(kit.tools.map((t) => t.name)).toEqual([
        "read_file",
        "write_file",
        "edit_file",
        "apply_patch",
        "bash",
        "glob",
        "grep",
        "list_dir"
      ])
    }))
})
