/**
 * scripts/bundle.mjs, which the global setup uses to rebuild the agent-tools binary and the fixtures: a bundle is
 * rebuilt when a file it was built from is newer than it, and only then.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { bundle, inputsFileOf, isFresh } from "../../scripts/bundle.mjs"

describe("bundle", () => {
  it("builds once, then again only after a source changes; the bundle runs with plain node", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-test-"))
    const entry = path.join(dir, "entry.ts")
    const helper = path.join(dir, "helper.ts")
    const outfile = path.join(dir, "out", "entry.mjs")
    fs.writeFileSync(helper, "export const word: string = \"one\"\n")
    fs.writeFileSync(entry, "import { word } from \"./helper.js\"\nconsole.log(word)\n")
    expect(isFresh(outfile)).toBe(false)
    expect(bundle(entry, outfile)).toBe(true)
    expect(isFresh(outfile)).toBe(true)
    expect(bundle(entry, outfile)).toBe(false)
    const run = () => ChildProcess.execFileSync(process.execPath, [outfile], { encoding: "utf8" })
    expect(run()).toBe("one\n")
    // a newer imported file makes the bundle stale
    fs.writeFileSync(helper, "export const word: string = \"two\"\n")
    const later = new Date(Date.now() + 2_000)
    fs.utimesSync(helper, later, later)
    expect(isFresh(outfile)).toBe(false)
    expect(bundle(entry, outfile)).toBe(true)
    expect(run()).toBe("two\n")
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(inputsFileOf(outfile), { force: true })
  })
})
