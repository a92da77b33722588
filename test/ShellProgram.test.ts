/**
 * A toolkit as a shell program, run the way a model's shell runs it: as a child process. `demo-tools` is a host's
 * own program (test/fixtures/shell-program.ts, three lines of `ShellProgram.main`); `agent-tools run` is the
 * workspace toolkit through the CLI's bundle. Their usage texts are golden files under test/golden/
 * (`UPDATE_GOLDEN=1` writes them). The parser's finer rules are pinned without a process at the end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Elicitation, Permission, Tool, Toolkit } from "../src/index.js"
import { flagsOf, merge, parse } from "../src/internal/shellFlags.js"
import * as Program from "../src/internal/shellProgram.js"
import { fixture } from "./fixtures/compiled.js"
import { runNode } from "./helpers.js"
import { root } from "./interop/peers.js"

const demo = (words: ReadonlyArray<string>, input?: string) =>
  runNode(fixture("shell-program"), words, { input, cwd: root })

const agentTools = (words: ReadonlyArray<string>, input?: string, cwd = root) =>
  runNode(path.join(root, "dist/cli/main.js"), words, { input, cwd })

/** Compares text with a golden file under test/golden; `UPDATE_GOLDEN=1` writes it instead. */
const golden = (file: string, text: string): void => {
  const url = new URL(`./golden/${file}`, import.meta.url)
  if (process.env.UPDATE_GOLDEN === "1") {
    fs.writeFileSync(url, text)
    return
  }
  if (!fs.existsSync(url)) throw new Error(`missing golden file test/golden/${file}; run with UPDATE_GOLDEN=1`)
  expect(text).toBe(fs.readFileSync(url, "utf8"))
}

describe("ShellProgram", () => {
  // each test runs its own processes, in folders of its own: they wait on them side by side
  describe.concurrent("a host's program", () => {
    it("usage --markdown is the golden text: a section per tool, flags with types, marks, values, defaults, hints", async () => {
      const ran = await demo(["usage", "--markdown"])
      expect(ran.code, ran.stderr).toBe(0)
      golden("shell-program-usage.md", ran.stdout)
    })

    it("flags of every kind become the tool's arguments", async () => {
      const ran = await demo([
        "label",
        "--tags",
        "bug",
        "--tags=ui",
        "--ids",
        "7",
        "--filter.owner",
        "ada",
        "--filter.window.days=1.5",
        "--extra",
        "[{\"key\":\"k\"}]"
      ])
      expect(ran).toEqual({
        code: 0,
        stdout:
          "{\"tags\":[\"bug\",\"ui\"],\"ids\":[7],\"filter\":{\"owner\":\"ada\",\"window\":{\"days\":1.5}},\"extra\":" +
          "[{\"key\":\"k\"}]}\n",
        stderr: ""
      })
      const greet = await demo(["greet", "--name", "-x-", "--loud", "--language", "fr", "--times=2"])
      expect(greet.stdout).toBe("{\"name\":\"-x-\",\"loud\":true,\"times\":2,\"language\":\"fr\"}\n")
      // a tool from raw JSON Schema, its nullable boolean a flag like any other
      const search = await demo(["search", "--query", "q", "--no-exact", "--sort", "date"])
      expect(search.stdout).toBe("{\"query\":\"q\",\"exact\":false,\"sort\":\"date\"}\n")
    })

    it("a JSON object, as the argument or on standard input, merges with the flags; both ways at once is refused", async () => {
      expect((await demo(["greet", "{\"name\":\"Ada\"}", "--loud"])).stdout).toBe("{\"name\":\"Ada\",\"loud\":true}\n")
      expect((await demo(["label", "--tags", "x", "-"], "{\"filter\":{\"owner\":\"me\"}}")).stdout).toBe(
        "{\"tags\":[\"x\"],\"filter\":{\"owner\":\"me\"}}\n"
      )
      expect(await demo(["greet", "{\"name\":\"Ada\"}", "--name", "Bob"])).toEqual({
        code: 2,
        stdout: "",
        stderr: "demo-tools: --name conflicts with \"name\" in the JSON argument; give name one way, as a flag or in " +
          "the JSON\n"
      })
      expect((await demo(["label", "--tags", "x", "--filter", "{\"owner\":\"a\"}", "--filter.owner", "b"])).stderr)
        .toBe(
          "demo-tools: --filter and --filter.owner both give filter.owner; give it one way\n"
        )
    })

    it("usage errors exit 2 and say what to write", async () => {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [
          ["greet", "--nam", "x"],
          "greet has no flag --nam; did you mean --name? (its flags: --name, --loud, --times, --language; demo-tools " +
          "help greet shows them)"
        ],
        [["greet", "--times", "two", "--name", "a"], "--times takes a whole number; got \"two\""],
        [["greet", "--language", "es", "--name", "a"], "--language takes one of en, fr, de; got \"es\""],
        [["greet", "--name", "a", "--name", "b"], "--name is given twice (--name a and --name b); give it once"],
        [["greet", "--name"], "--name needs a value (text): --name <value>"],
        [["greet"], "greet needs --name (demo-tools help greet shows its flags)"],
        [
          ["label", "--filter.state", "open", "--tags", "t"],
          "label needs --filter.owner (demo-tools help label shows its flags)"
        ],
        [
          ["greet", "--name", "a", "--loud", "true"],
          "the JSON argument must be an object of the tool's parameters, not boolean; a boolean flag is --<flag> or " +
          "--no-<flag> (demo-tools help greet)"
        ],
        [
          ["gret"],
          "unknown tool \"gret\"; the tools are greet, label, search, remove, confirm, broken (demo-tools help lists them)"
        ],
        [["schema"], "schema needs a tool's name: demo-tools schema <tool>"],
        [["--verbose", "greet"], "unknown option --verbose; before the tool's name come only --yes and --help"]
      ]
      const runs = await Promise.all(cases.map(([words]) => demo(words)))
      cases.forEach(([words, message], i) => {
        const ran = runs[i]!
        expect([ran.code, ran.stdout, ran.stderr], words.join(" ")).toEqual([2, "", `demo-tools: ${message}\n`])
      })
      // the parser's own words vary with the Node version
      const notJson = await demo(["greet", "{name: a}"])
      expect(notJson.code).toBe(2)
      expect(notJson.stderr).toMatch(
        /^demo-tools: the argument is not JSON \(.+\); give the arguments as one JSON object, e\.g\. '\{"path":"a\.txt"\}', or as flags \(demo-tools help greet\)\n$/
      )
    })

    it("a usage error quotes at most 120 characters of a word of 100,000", async () => {
      const long = "x".repeat(100_000)
      const start = "x".repeat(120) + "…"
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [[long], `unknown tool "${start}"; the tools are`],
        [[`--${long}`], `unknown option --${"x".repeat(118)}…; before the tool's name`],
        [["greet", `--${long}`, "1"], `greet has no flag --${start} (its flags:`],
        [["greet", "--name", long, "--name", "b"], `--name is given twice (--name ${"x".repeat(113)}… and --name b)`],
        [["greet", "--name", "a", "--times", long], `--times takes a whole number; got "${start}"`],
        [["greet", `-${long}`], `"-${"x".repeat(119)}…" is not a flag`],
        [["greet", "--name", "a", "{}", long, long, long, long], `got 5: "{}" "${start}" "${start}" …`]
      ]
      const runs = await Promise.all(cases.map(([words]) => demo(words)))
      cases.forEach(([, message], i) => {
        const ran = runs[i]!
        expect(ran.code).toBe(2)
        expect(ran.stderr, message).toContain(message)
        expect(ran.stderr.length).toBeLessThan(700)
      })
    })

    it("a failed call exits 1 with its Error: line; invalid arguments too", async () => {
      expect(await demo(["broken", "--why", "disk full"])).toEqual({
        code: 1,
        stdout: "",
        stderr: "Error: disk full\n"
      })
      expect(await demo(["greet", "--name", "a", "--times", "9"])).toEqual({
        code: 1,
        stdout: "",
        stderr: "Error: invalid arguments: times: expected an integer between 1 and 5, got 9\n"
      })
    })

    it("a question nobody is there to answer exits 3; --yes allows what asks permission", async () => {
      expect(await demo(["remove", "--thing", "x"])).toEqual({
        code: 3,
        stdout: "",
        stderr: "Error: permission denied: remove x: no terminal to ask on; run again with --yes to allow it\n" +
          "demo-tools: nobody was there to answer a request for permission to delete (remove x)\n"
      })
      expect(await demo(["--yes", "remove", "--thing", "x"])).toEqual({ code: 0, stdout: "removed x\n", stderr: "" })
      expect(await demo(["confirm"])).toEqual({
        code: 3,
        stdout: "",
        stderr: "Error: nobody confirmed\ndemo-tools: nobody was there to answer the question \"Go on?\"\n"
      })
    })

    it("help, help <tool>, <tool> --help and schema <tool>", async () => {
      const help = await demo(["help"])
      expect(help.code).toBe(0)
      expect(help.stdout).toContain("Tools:\n  greet    Greet someone.\n  label    Label issues.\n")
      const tool = await demo(["help", "search"])
      expect(tool.stdout).toBe(
        "search\n\n  Search the index (a tool from raw JSON Schema, as an MCP server would list it).\n\n" +
          "  demo-tools search --query <string> [--limit <integer>] [--sort <relevance|date>] [--exact] [<json> | -]\n\n" +
          "  --query <string>\n      required; at least 1 character. What to look for\n" +
          "  --limit <integer>\n      default 10; from 1 to 100\n" +
          "  --sort <relevance|date>\n      one of relevance, date; default relevance\n" +
          "  --exact\n      true with --exact, false with --no-exact\n"
      )
      expect((await demo(["search", "--help"])).stdout).toBe(tool.stdout)
      const schema = await demo(["schema", "search"])
      expect(JSON.parse(schema.stdout).properties.sort).toEqual({
        type: "string",
        enum: ["relevance", "date"],
        default: "relevance"
      })
      // nothing to run: the overview, on stderr, and a usage error
      const none = await demo([])
      expect([none.code, none.stdout]).toEqual([2, ""])
      expect(none.stderr).toContain("Usage: demo-tools <tool>")
    })
  })

  describe.concurrent("agent-tools run", () => {
    const workspace = (files: Record<string, string>): string => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "run-test-"))
      for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content)
      return dir
    }

    it("usage --markdown of the workspace tools is the golden text", async () => {
      const ran = await agentTools(["run", "--root", workspace({}), "--fetch", "usage", "--markdown"])
      expect(ran.code, ran.stderr).toBe(0)
      golden("agent-tools-run-usage.md", ran.stdout)
    })

    it("runs the workspace tools as commands, in the root given", async () => {
      const dir = workspace({ "a.txt": "one\ntwo\n" })
      expect(await agentTools(["run", "--root", dir, "read_file", "--path", "a.txt", "--limit", "1"])).toEqual({
        code: 0,
        stdout: "     1\tone\n(showing lines 1-1 of 2; read on with offset 1)\n",
        stderr: ""
      })
      const patch = "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+2\n*** End Patch"
      const refused = await agentTools(["run", "--root", dir, "apply_patch", "--patch", patch])
      expect(refused.code).toBe(3)
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("one\ntwo\n")
      const applied = await agentTools(["run", `--root=${dir}`, "--yes", "apply_patch", "-"], JSON.stringify({ patch }))
      expect(applied).toEqual({ code: 0, stdout: "applied the patch:\n  updated a.txt (+1 -1)\n", stderr: "" })
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("one\n2\n")
      // the current folder is the root by default
      expect((await agentTools(["run", "glob", "--pattern", "*.txt"], "", dir)).stdout).toBe("a.txt\n")
    })

    it("a root that does not exist is a usage error", async () => {
      expect(await agentTools(["run", "--root", "/no/such/folder", "help"])).toEqual({
        code: 2,
        stdout: "",
        stderr: "agent-tools run: the workspace root /no/such/folder does not exist\n"
      })
    })
  })

  describe("questions: \"host\"", () => {
    const Ask = Tool.make("ask", {
      description: "Ask, then act",
      parameters: {},
      permission: { action: "act" },
      handler: () =>
        Effect.map(
          Effect.orDie(Tool.elicit({ message: "Which?", schema: { pick: Schema.String } })),
          (answer) => (answer._tag === "Accept" ? answer.content.pick : `got ${answer._tag}`)
        )
    })
    const Strict = Tool.make("strict", {
      description: "Ask, and fail without an answer",
      parameters: {},
      handler: () =>
        Effect.flatMap(
          Effect.orDie(Tool.elicit({ message: "Sure?", schema: { ok: Schema.Boolean } })),
          (answer) => (answer._tag === "Accept" ? Effect.succeed("ok") : Effect.dieMessage("no answer"))
        )
    })
    const kit = Toolkit.make(Ask, Strict)
    const host = (argv: ReadonlyArray<string>, layer: Layer.Layer<never>) =>
      Effect.gen(function*() {
        let stdout = ""
        let stderr = ""
        const io: Program.Io = {
          stdout: (text) => void (stdout += text),
          stderr: (text) => void (stderr += text),
          stdin: Effect.succeed("")
        }
        const code = yield* Program.run(kit, argv, { name: "p", description: undefined, questions: "host" }, io).pipe(
          Effect.provide(layer)
        )
        return { code, stdout, stderr }
      })

    it.effect("the host's requester and elicitor answer; a Cancel that sinks the call exits 3", () =>
      Effect.gen(function*() {
        const answers = Layer.merge(
          Permission.layer(() => Effect.succeed(Permission.allow)),
          Elicitation.layer(() => Effect.succeed(Elicitation.accept({ pick: "b" })))
        )
        expect(yield* host(["ask"], answers)).toEqual({ code: 0, stdout: "b\n", stderr: "" })
        const refusing = Permission.layer(() => Effect.succeed(Permission.deny("policy")))
        expect(yield* host(["ask"], refusing)).toEqual({
          code: 1,
          stdout: "",
          stderr: "Error: permission denied: ask (act): policy\n"
        })
        // no elicitor: Cancel; a tool that carries on exits 0, one that fails exits 3
        expect(yield* host(["--yes", "ask"], Layer.empty)).toEqual({ code: 0, stdout: "got Cancel\n", stderr: "" })
        const strict = yield* host(["strict"], Layer.empty)
        expect(strict.code).toBe(3)
        expect(strict.stderr).toBe(
          "Error: tool \"strict\" panicked: no answer\np: nobody was there to answer the question \"Sure?\"\n"
        )
      }))
  })

  describe("the parser", () => {
    const schema = {
      type: "object",
      properties: {
        n: { type: "number" },
        flag: { anyOf: [{ type: "boolean" }, { type: "null" }] },
        choice: { anyOf: [{ const: 1 }, { const: "two" }] },
        tags: { type: "array", items: { enum: ["a", "b"] } },
        nested: { $ref: "#/$defs/Nested" }
      },
      required: ["n"],
      $defs: { Nested: { type: "object", properties: { deep: { type: "string" } }, required: ["deep"] } }
    }
    const flags = flagsOf(schema)
    const call = (words: ReadonlyArray<string>, json?: string) => {
      const parsed = parse("t", flags, words, "p")
      if (parsed._tag !== "Call") return parsed
      return merge("t", flags, parsed, json ?? parsed.json, "p")
    }

    it("derives flags through nullable unions, literal unions, enum lists and $refs", () => {
      expect(flags.map((f) => [f.name, f.kind._tag, f.required, f.requiredWith])).toEqual([
        ["n", "number", true, undefined],
        ["flag", "boolean", false, undefined],
        ["choice", "enum", false, undefined],
        ["tags", "array", false, undefined],
        ["nested", "json", false, undefined],
        ["nested.deep", "string", false, "nested"]
      ])
    })

    it("values keep their types; -- ends the flags; a repeated list flag appends", () => {
      expect(call(["--n=-1.5", "--choice", "1", "--tags", "a", "--tags", "b", "--nested.deep", "x"])).toEqual({
        arguments: { n: -1.5, choice: 1, tags: ["a", "b"], nested: { deep: "x" } }
      })
      expect(call(["--n", "1", "--choice", "two", "--flag=false"])).toEqual({
        arguments: { n: 1, choice: "two", flag: false }
      })
      expect(call(["--n", "1", "--", "{\"flag\":true}"])).toEqual({ arguments: { flag: true, n: 1 } })
      expect(call(["--tags", "c"])).toEqual({ _tag: "UsageProblem", message: "--tags takes one of a, b; got \"c\"" })
    })

    it("a JSON list and a list flag for the same parameter conflict; JSON fields beside flag fields merge", () => {
      expect(call(["--tags", "a"], "{\"n\":1,\"tags\":[\"b\"]}")).toEqual({
        _tag: "UsageProblem",
        message: "--tags conflicts with \"tags\" in the JSON argument; give tags one way, as a flag or in the JSON"
      })
      expect(call(["--nested.deep", "x"], "{\"n\":1,\"nested\":{\"other\":2}}")).toEqual({
        arguments: { n: 1, nested: { other: 2, deep: "x" } }
      })
      expect(call(["--nested.deep", "x"], "{\"n\":1,\"nested\":5}")).toEqual({
        _tag: "UsageProblem",
        message: "--nested.deep conflicts with \"nested\" in the JSON argument; give nested.deep one way, as a flag " +
          "or in the JSON"
      })
    })
  })
})
