/**
 * Confinement under attack: dangling links at every depth, names that start with `..`, and a second process
 * swapping a folder for a link to outside while the tools write and read.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Executor } from "../src/index.js"
import * as Workspace from "../src/Workspace.js"
import * as Confined from "../src/workspace/confined.js"
import { call, filesBelow, makeRoot, run, session, text } from "./fixtures/workspace.js"

const OUTSIDE = /^Error: .* is outside the workspace; use a path inside it$/

/**
 * A workspace and an empty folder outside it, with links planted inside whose targets are absent: the file itself,
 * a parent folder, chains, relative and absolute targets, one level down and three.
 */
const planted = () => {
  const root = makeRoot({ "docs/readme.md": "docs\n", "sub/keep.txt": "k\n" })
  const outside = makeRoot()
  const rel = path.relative(path.join(root, "docs"), outside)
  fs.symlinkSync(path.join(outside, "planted.sh"), path.join(root, "docs/notes.md"))
  fs.symlinkSync(path.join(rel, "planted-rel.sh"), path.join(root, "docs/relative.md"))
  fs.symlinkSync(path.join(outside, "gen"), path.join(root, "gen"))
  fs.symlinkSync("hop2", path.join(root, "hop1"))
  fs.symlinkSync(path.join(outside, "chain.txt"), path.join(root, "hop2"))
  fs.symlinkSync("sub/inner", path.join(root, "via"))
  fs.symlinkSync("../" + path.relative(root, outside) + "/inner", path.join(root, "sub/inner"))
  fs.mkdirSync(path.join(root, "deep/er/est"), { recursive: true })
  fs.symlinkSync(path.join(outside, "deeper"), path.join(root, "deep/er/est/link"))
  fs.symlinkSync("../../../" + path.relative(root, outside) + "/up", path.join(root, "deep/er/est/up"))
  return { root, outside }
}

/** Paths through each planted link: as a file, and as a folder to create files in. */
const throughLinks = [
  "docs/notes.md",
  "docs/relative.md",
  "gen/x.txt",
  "gen/a/b/c.txt",
  "hop1",
  "hop1/y.txt",
  "via",
  "via/z.txt",
  "deep/er/est/link",
  "deep/er/est/link/w/v.txt",
  "deep/er/est/up",
  "deep/er/est/up/u.txt"
]

describe("Workspace confinement", () => {
  describe("dangling links", () => {
    it.effect("write_file through a dangling link at any depth is refused, and nothing appears outside", () =>
      Effect.gen(function*() {
        const { outside, root } = planted()
        const texts = yield* run(
          root,
          throughLinks.map((p, i) => call("write_file", { path: p, content: "x" }, `${i}`))
        )
        texts.forEach((t, i) => expect(t, throughLinks[i]).toMatch(OUTSIDE))
        expect(filesBelow(outside)).toEqual([])
      }))

    it.effect("edit_file, read_file, list_dir, glob and grep through them are refused as outside too", () =>
      Effect.gen(function*() {
        const { outside, root } = planted()
        const calls = throughLinks.flatMap((p, i) => [
          call("read_file", { path: p }, `r${i}`),
          call("edit_file", { path: p, old_string: "a", new_string: "b" }, `e${i}`),
          call("list_dir", { path: p }, `l${i}`),
          call("glob", { pattern: "*", path: p }, `g${i}`),
          call("grep", { pattern: "x", path: p }, `s${i}`)
        ])
        const texts = yield* run(root, calls)
        texts.forEach((t, i) => expect(t, calls[i].id).toMatch(OUTSIDE))
        expect(filesBelow(outside)).toEqual([])
      }))

    it.effect("a link that leads outside is refused even once its target exists", () =>
      Effect.gen(function*() {
        const { outside, root } = planted()
        fs.writeFileSync(path.join(outside, "planted.sh"), "echo owned\n")
        const texts = yield* run(root, [
          call("read_file", { path: "docs/notes.md" }, "1"),
          call("write_file", { path: "docs/notes.md", content: "x" }, "2")
        ])
        for (const t of texts) expect(t).toMatch(OUTSIDE)
        expect(fs.readFileSync(path.join(outside, "planted.sh"), "utf8")).toBe("echo owned\n")
      }))

    it.effect("a dangling link that stays inside creates its target, missing folders included", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "drafts/.keep": "" })
        fs.mkdirSync(path.join(root, "docs"))
        fs.symlinkSync("../drafts/new.md", path.join(root, "docs/new.md"))
        fs.symlinkSync(path.join(root, "later/deep/file.md"), path.join(root, "later.md"))
        const texts = yield* run(root, [
          call("write_file", { path: "docs/new.md", content: "new\n" }, "1"),
          call("write_file", { path: "later.md", content: "later\n" }, "2")
        ])
        expect(texts).toEqual(["created docs/new.md (1 lines)", "created later.md (1 lines)"])
        expect(fs.readFileSync(path.join(root, "drafts/new.md"), "utf8")).toBe("new\n")
        expect(fs.readFileSync(path.join(root, "later/deep/file.md"), "utf8")).toBe("later\n")
        expect(fs.lstatSync(path.join(root, "docs/new.md")).isSymbolicLink()).toBe(true)
      }))

    it.effect("a loop of links is refused with the kernel's limit, not followed forever", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        fs.symlinkSync("b", path.join(root, "a"))
        fs.symlinkSync("a", path.join(root, "b"))
        const [read, write] = yield* run(root, [
          call("read_file", { path: "a" }, "1"),
          call("write_file", { path: "a/x", content: "x" }, "2")
        ])
        expect(read).toBe("Error: a has too many levels of symbolic links")
        expect(write).toBe("Error: a/x has too many levels of symbolic links")
      }))

    it.effect("the same refusals without /proc/self/fd (the path fallback)", () =>
      Effect.gen(function*() {
        const { outside, root } = planted()
        const was = Confined.procFd.enabled
        Confined.procFd.enabled = false
        const texts = yield* run(
          root,
          throughLinks.flatMap((p, i) => [
            call("write_file", { path: p, content: "x" }, `w${i}`),
            call("read_file", { path: p }, `r${i}`)
          ])
        ).pipe(Effect.ensuring(Effect.sync(() => (Confined.procFd.enabled = was))))
        for (const t of texts) expect(t).toMatch(OUTSIDE)
        expect(filesBelow(outside)).toEqual([])
        expect(yield* run(root, [call("write_file", { path: "sub/new.txt", content: "n\n" })])).toEqual([
          "created sub/new.txt (1 lines)"
        ])
      }))
  })

  describe("a root given through a link", () => {
    it.effect("paths under either name of the root are inside, and shown from the root", () =>
      Effect.gen(function*() {
        const real = makeRoot({ "src/a.ts": "needle\n" })
        const alias = path.join(makeRoot(), "alias")
        fs.symlinkSync(real, alias)
        const texts = yield* session(alias, (batch) =>
          Effect.zipWith(
            batch([
              call("read_file", { path: path.join(real, "src/a.ts") }, "1"),
              call("grep", { pattern: "needle", path: path.join(real, "src") }, "2")
            ]),
            batch([call("write_file", { path: path.join(alias, "src/b.ts"), content: "b\n" }, "3")]),
            (first, second) => [...first, ...second]
          ))
        expect(texts).toEqual(["     1\tneedle", "src/a.ts:1: needle", "created src/b.ts (1 lines)"])
        expect(fs.readFileSync(path.join(real, "src/b.ts"), "utf8")).toBe("b\n")
      }))
  })

  describe("names that start with two dots", () => {
    it.effect("..config/a.txt and ...txt are ordinary names: written, read, listed, found", () =>
      Effect.gen(function*() {
        const root = makeRoot({ ".gitignore": "ignored.txt\n", "..config/ignored.txt": "no\n" })
        yield* session(root, (batch) =>
          Effect.gen(function*() {
            expect(
              yield* batch([
                call("write_file", { path: "..config/a.txt", content: "a\n" }, "1"),
                call("write_file", { path: "...txt", content: "dots\n" }, "2")
              ])
            ).toEqual(["created ..config/a.txt (1 lines)", "created ...txt (1 lines)"])
            const texts = yield* batch([
              call("read_file", { path: "..config/a.txt" }, "1"),
              call("read_file", { path: path.join(root, "...txt") }, "2"),
              call("list_dir", { path: "..config" }, "3"),
              call("glob", { pattern: "**/*.txt" }, "4"),
              call("grep", { pattern: "dots", path: "...txt" }, "5")
            ])
            expect(texts).toEqual([
              "     1\ta",
              "     1\tdots",
              "..config/\n  a.txt",
              "...txt\n..config/a.txt",
              "...txt:1: dots"
            ])
          }))
        expect(fs.readFileSync(path.join(root, "..config/a.txt"), "utf8")).toBe("a\n")
      }))

    it.effect("a real .. is still an escape, whatever follows it", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        const texts = yield* run(root, [
          call("write_file", { path: "../x.txt", content: "x" }, "1"),
          call("write_file", { path: "a/../../x.txt", content: "x" }, "2"),
          call("read_file", { path: ".." }, "3")
        ])
        for (const t of texts) expect(t).toMatch(OUTSIDE)
      }))
  })

  describe("a folder swapped for a link to outside while the tools run", () => {
    it.live(
      "a second process swapping as fast as it can lands nothing outside; every refusal says why",
      () =>
        Effect.gen(function*() {
          const root = makeRoot({ "d/inside.txt": "inside\n" })
          const outside = makeRoot({ "inside.txt": "OUTSIDE\n" })
          const before = filesBelow(outside)
          const stop = path.join(makeRoot(), "stop")
          // the attacker: d -> d.real, a link d -> outside, the link removed, d.real -> d, in a tight loop
          const swapper = ChildProcess.spawn(process.execPath, [
            "-e",
            `const fs = require("fs"), path = require("path"); const [root, out, stop] = process.argv.slice(1);
           const d = path.join(root, "d"), real = path.join(root, "d.real"); let swaps = 0, extra = 0;
           while ((swaps & 255) !== 0 || !fs.existsSync(stop)) {
             try { fs.renameSync(d, real) } catch {}
             try { fs.symlinkSync(out, d) } catch {}
             try { if (fs.lstatSync(d).isSymbolicLink()) fs.unlinkSync(d) } catch {}
             try { fs.renameSync(real, d) } catch { try { fs.renameSync(d, path.join(root, "extra" + extra++)) } catch {} }
             swaps++
           }
           try { fs.renameSync(real, d) } catch {}
           console.log(swaps)`,
            root,
            outside,
            stop
          ], { stdio: ["ignore", "pipe", "inherit"] })
          let swaps = ""
          swapper.stdout.on("data", (chunk) => (swaps += chunk))
          yield* Effect.addFinalizer(() => Effect.sync(() => swapper.kill("SIGKILL")))
          const kit = yield* Workspace.toolkit({ root })
          const refusals = new Map<string, number>()
          let attempts = 0
          let created = 0
          let reads = 0
          // 2 s or 2,000 writes; on a loaded machine, at least 200 (15 s at most)
          const started = Date.now()
          const more = () =>
            attempts < 2_000 && Date.now() - started < 15_000 && (Date.now() - started < 2_000 || attempts < 200)
          while (more()) {
            const [written, read] = (yield* Executor.run(kit, [
              call("write_file", { path: `d/f${attempts}.txt`, content: `${attempts}\n` }, "w"),
              call("read_file", { path: "d/inside.txt" }, "r")
            ])).map(text)
            attempts++
            reads++
            if (written.startsWith("created ")) created++
            else {
              const kind = written.replace(/d\/f\d+\.txt/g, "d/fN.txt")
              refusals.set(kind, (refusals.get(kind) ?? 0) + 1)
            }
            expect(read).not.toContain("OUTSIDE")
          }
          yield* Effect.async<void>((resume) => {
            swapper.once("exit", () => resume(Effect.void))
            fs.writeFileSync(stop, "")
          })
          const landed = filesBelow(outside).filter((f) => !before.includes(f))
          console.log(
            `race: ${attempts} writes and ${reads} reads against ${swaps.trim()} swaps; ${created} created inside, ` +
              `${attempts - created} refused, ${landed.length} landed outside; refusals: ${
                JSON.stringify(Object.fromEntries(refusals))
              }`
          )
          expect(landed).toEqual([])
          expect(attempts).toBeGreaterThanOrEqual(200)
          expect(Number(swaps.trim())).toBeGreaterThan(100)
          const expected = [
            "Error: d/fN.txt is outside the workspace; use a path inside it",
            "Error: cannot create the folder of d/fN.txt: d on its way is not a folder (or was just replaced by a link)",
            "Error: d/fN.txt keeps changing while it is being resolved; try again",
            "Error: cannot create the folder of d/fN.txt: d on its way was moved or removed while it was being made " +
            "(nothing was written)",
            "Error: cannot write d/fN.txt: its folder was removed while it was being written (nothing was written)",
            "Error: cannot write d/fN.txt: its folder was moved out of the workspace while it was being written " +
            "(nothing was written)"
          ]
          for (const kind of refusals.keys()) expect(expected).toContain(kind)
        }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)),
      30_000
    )
  })
})
