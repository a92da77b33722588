/**
 * What a search meets that is not an ordinary file or pattern: FIFOs and devices (never opened for reading, so
 * never waited on), files it does not search (said so), and patterns that would backtrack forever.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Executor } from "../src/index.js"
import * as Workspace from "../src/Workspace.js"
import { call, makeRoot, run, text } from "./fixtures/workspace.js"

const mkfifo = (file: string) => ChildProcess.execFileSync("mkfifo", [file])

/** A character device inside the root (only root may make one; undefined when we are not). */
const zeroDevice = (file: string): boolean => {
  if (process.getuid?.() !== 0) return false
  try {
    ChildProcess.execFileSync("mknod", [file, "c", "1", "5"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

describe("Workspace search and special files", () => {
  describe("FIFOs and devices", () => {
    it.live("grep walks past a FIFO without opening it for a read that would wait forever, and counts it", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "needle\n" })
        mkfifo(path.join(root, "pipe"))
        const texts = yield* run(root, [call("grep", { pattern: "needle" })]).pipe(
          Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "grep waited on the FIFO" })
        )
        expect(texts).toEqual(["a.txt:1: needle\n(1 file not searched: 1 not a regular file)"])
      }))

    it.live("four greps over FIFOs at once leave the other file tools working", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "needle\n" })
        for (let i = 0; i < 4; i++) mkfifo(path.join(root, `pipe${i}`))
        const texts = yield* run(root, [
          ...[0, 1, 2, 3].map((i) => call("grep", { pattern: "x", path: `pipe${i}` }, `g${i}`)),
          ...[0, 1, 2, 3].map((i) => call("grep", { pattern: "needle" }, `w${i}`)),
          call("read_file", { path: "a.txt" }, "read")
        ]).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "the greps held the thread pool" }))
        for (let i = 0; i < 4; i++) {
          expect(texts[i]).toBe(`pipe${i} was not searched: it is a FIFO (named pipe), not a regular file`)
        }
        expect(texts[8]).toBe("     1\tneedle")
      }))

    it.live("read_file, edit_file and write_file refuse a FIFO by name, at once", () =>
      Effect.gen(function*() {
        const root = makeRoot()
        mkfifo(path.join(root, "pipe"))
        const texts = yield* run(root, [
          call("read_file", { path: "pipe" }, "1"),
          call("edit_file", { path: "pipe", old_string: "a", new_string: "b" }, "2"),
          call("write_file", { path: "pipe", content: "x" }, "3")
        ]).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "a tool opened the FIFO" }))
        const refusal = "Error: pipe is a FIFO (named pipe), not a regular file; only regular files can be read, " +
          "written or edited"
        expect(texts).toEqual([refusal, refusal, refusal])
        expect(fs.lstatSync(path.join(root, "pipe")).isFIFO()).toBe(true)
      }))

    it.live("a device: outside by path or through a link; inside the root, refused by name and skipped by walks", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.txt": "zero\n" })
        fs.symlinkSync("/dev/zero", path.join(root, "zero-link"))
        const made = zeroDevice(path.join(root, "zero"))
        const texts = yield* run(root, [
          call("read_file", { path: "/dev/zero" }, "1"),
          call("read_file", { path: "zero-link" }, "2"),
          call("grep", { pattern: "x", path: "/dev/zero" }, "3"),
          ...(made
            ? [
              call("read_file", { path: "zero" }, "4"),
              call("grep", { pattern: "zero" }, "5"),
              call("grep", { pattern: "zero", path: "zero" }, "6")
            ]
            : [])
        ]).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "a tool read the device" }))
        expect(texts.slice(0, 3)).toEqual([
          "Error: /dev/zero is outside the workspace; use a path inside it",
          "Error: zero-link is outside the workspace; use a path inside it",
          "Error: /dev/zero is outside the workspace; use a path inside it"
        ])
        if (!made) return console.log("not root: the device node inside the root was not tested")
        expect(texts.slice(3)).toEqual([
          "Error: zero is a character device, not a regular file; only regular files can be read, written or edited",
          "a.txt:1: zero\n(1 file not searched: 1 not a regular file)",
          "zero was not searched: it is a character device, not a regular file"
        ])
      }))
  })

  describe("files grep does not search", () => {
    it.effect("a binary or oversized file named on purpose is answered with why it was not searched", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "blob.bin": Uint8Array.from([110, 101, 101, 100, 108, 101, 0, 1]) })
        fs.writeFileSync(path.join(root, "big.txt"), "needle\n".repeat(400_000))
        const texts = yield* run(root, [
          call("grep", { pattern: "needle", path: "blob.bin" }, "1"),
          call("grep", { pattern: "needle", path: "big.txt" }, "2")
        ])
        expect(texts).toEqual([
          "blob.bin was not searched: it is a binary file",
          "big.txt was not searched: it is larger than 2 MB"
        ])
      }))

    it.effect("a walk says how many files it did not search, and why", () =>
      Effect.gen(function*() {
        const root = makeRoot({
          "a.txt": "needle\n",
          "b.bin": Uint8Array.from([0, 1, 2]),
          "c.bin": Uint8Array.from([0, 1, 2])
        })
        fs.writeFileSync(path.join(root, "big.txt"), "x".repeat(3 * 1024 * 1024))
        const texts = yield* run(root, [
          call("grep", { pattern: "needle" }, "1"),
          call("grep", { pattern: "nothing" }, "2"),
          call("grep", { pattern: "needle", include: "*.txt" }, "3")
        ])
        expect(texts).toEqual([
          "a.txt:1: needle\n(3 files not searched: 2 binary, 1 larger than 2 MB)",
          "no matches for nothing in .\n(3 files not searched: 2 binary, 1 larger than 2 MB)",
          "a.txt:1: needle\n(1 file not searched: 1 larger than 2 MB)"
        ])
      }))
  })

  describe("patterns", () => {
    it.live("^(a+)+$ on a long line answers in well under a timeout that could not stop a backtracking engine", () =>
      Effect.gen(function*() {
        // JavaScript's RegExp needed about 16 s for 29 characters; this line is 100,000
        const root = makeRoot({ "a.txt": "a".repeat(100_000) + "!\n", "b.txt": "a".repeat(29) + "!\n" })
        const started = Date.now()
        const outcomes = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          return yield* Executor.run(kit, [call("grep", { pattern: "^(a+)+$" })], { timeout: Duration.seconds(2) })
        })).pipe(Effect.provide(NodeContext.layer))
        expect(outcomes.map(text)).toEqual(["no matches for ^(a+)+$ in ."])
        expect(Date.now() - started).toBeLessThan(1_000)
      }))

    it.live("globs: ten stars against a long name answer in well under a timeout that could not stop picomatch", () =>
      Effect.gen(function*() {
        // picomatch's RegExp needed 35 s for glob, 42 s for list_dir, on a name of 41 characters; this one is 201
        const stars = "*a".repeat(10) + "*b"
        const root = makeRoot({ ["a".repeat(200) + "!"]: "x\n", "ab": "x\n" })
        const started = Date.now()
        const outcomes = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          return yield* Executor.run(kit, [
            call("glob", { pattern: stars }, "1"),
            call("grep", { pattern: "x", include: stars }, "2"),
            call("list_dir", { ignore: [stars] }, "3")
          ], { timeout: Duration.seconds(2) })
        })).pipe(Effect.provide(NodeContext.layer))
        expect(outcomes.map(text)).toEqual([
          `no files match ${stars} in .`,
          `no matches for x in .`,
          `./\n  ${"a".repeat(200)}!\n  ab`
        ])
        expect(Date.now() - started).toBeLessThan(1_000)
      }))

    it.live("a .gitignore rule of ten ** over folders 60 deep: the walk answers at once, the rule still applies", () =>
      Effect.gen(function*() {
        // the ignore package's RegExp took 23 s for one path 40 folders deep; every entry of the walk is one
        const deep = "a/".repeat(60)
        const root = makeRoot({
          ".gitignore": "a/**/".repeat(10) + "c\n",
          [`${deep}b.txt`]: "x\n",
          [`${"a/".repeat(12)}c`]: "x\n"
        })
        const started = Date.now()
        const outcomes = yield* Effect.scoped(Effect.gen(function*() {
          const kit = yield* Workspace.toolkit({ root })
          return yield* Executor.run(kit, [call("glob", { pattern: "**/*" })], { timeout: Duration.seconds(2) })
        })).pipe(Effect.provide(NodeContext.layer))
        expect(outcomes.map(text)).toEqual([`.gitignore\n${deep}b.txt`])
        expect(Date.now() - started).toBeLessThan(1_000)
      }))

    it.effect("globs: a pattern over the length cap and !(...) are refused with what to write, not a defect", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.ts": "x\n" })
        const long = "x".repeat(100_000)
        const texts = yield* run(root, [
          call("glob", { pattern: long }, "1"),
          call("grep", { pattern: "x", include: long }, "2"),
          call("list_dir", { ignore: ["*.md", long] }, "3"),
          call("glob", { pattern: "!(*.md)" }, "4")
        ])
        const tooLong = "Error: invalid glob pattern: the pattern is 100000 characters long (at most 4096); give a " +
          "shorter pattern"
        expect(texts).toEqual([
          tooLong,
          tooLong,
          tooLong,
          "Error: invalid glob pattern: !(...) (anything but these) is not supported; name what you want instead " +
          "(`*.{ts,js}`), or match it and leave the matches out"
        ])
      }))

    it.effect("RE2 syntax: what it lacks is refused with the construct named; ignore_case folds case", () =>
      Effect.gen(function*() {
        const root = makeRoot({ "a.ts": "const Quote = 'x'\n" })
        const texts = yield* run(root, [
          call("grep", { pattern: "(['\"]).*\\1" }, "1"),
          call("grep", { pattern: "Quote(?= =)" }, "2"),
          call("grep", { pattern: "quote", ignore_case: true }, "3"),
          call("grep", { pattern: "QUOTE = '", literal: true, ignore_case: true }, "4")
        ])
        expect(texts).toEqual([
          "Error: invalid regular expression (RE2 syntax): backreferences (\\1, \\2, ...) are not supported; RE2 " +
          "cannot match a repeat of an earlier group; search for the text itself; or set literal to search for " +
          "the text as it is",
          "Error: invalid regular expression (RE2 syntax): lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not " +
          "supported; match the surrounding text as part of the pattern instead; or set literal to search for the " +
          "text as it is",
          "a.ts:1: const Quote = 'x'",
          "a.ts:1: const Quote = 'x'"
        ])
      }))
  })
})
