/**
 * The examples of docs/shell-program.md, run (see ./examples.ts for how the page and this file are kept the same).
 * `NodeRuntime.runMain` is replaced by a recorder: the page's program is type-checked and kept, not run (it would
 * read this process's command line); its toolkit is run with `ShellProgram.run` instead, and what it writes is
 * caught on the way to the process's streams.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import { vi } from "vitest"
import { ShellProgram, Tool, Toolkit } from "../src/index.js"
import { checkExamples } from "./examples.js"

const mains = vi.hoisted(() => [] as Array<unknown>)
vi.mock("@effect/platform-node/NodeRuntime", () => ({ runMain: (main: unknown) => void mains.push(main) }))

// #region host
const Deploy = Tool.make("deploy", {
  description: "Deploy a service to an environment.",
  parameters: {
    service: Schema.String.annotations({ description: "The service's name" }),
    env: Schema.Literal("staging", "production"),
    tags: Schema.optional(Schema.Array(Schema.String).annotations({ description: "Labels for the release" })),
    dry_run: Schema.optional(Schema.Boolean.annotations({ description: "Only say what would happen" }))
  },
  annotations: { readOnly: false, destructive: true },
  permission: { action: "deploy", describe: ({ env, service }) => `deploy ${service} to ${env}` },
  handler: ({ dry_run, env, service, tags = [] }) =>
    Effect.succeed(`${dry_run === true ? "would deploy" : "deployed"} ${service} to ${env} [${tags.join(", ")}]`)
})

const kit = Toolkit.make(Deploy)

NodeRuntime.runMain(ShellProgram.main(kit, { name: "my-tools", description: "Deploys, for the release agent." }))
// #endregion

// #region run
// continues the example "host"

const runDemo = Effect.forEach([
  ["--yes", "deploy", "--service", "api", "--env", "staging", "--tags", "v2", "--tags", "canary", "--dry_run"],
  ["deploy", "--service", "api", "--env", "prod"],
  ["deploy", "--service", "api", "--env", "staging"]
], (argv) => ShellProgram.run(kit, argv, { name: "my-tools" }))
// => [0, 2, 3], having written
//    stdout: would deploy api to staging [v2, canary]
//    stderr: my-tools: --env takes one of staging, production; got "prod"
//    stderr: Error: permission denied: deploy api to staging: no terminal to ask on; run again with --yes to allow it
//            my-tools: nobody was there to answer a request for permission to deploy (deploy api to staging)
// #endregion

// #region usage
// continues the example "host"

const forTheModel = ShellProgram.usage(kit, { name: "my-tools", description: "Deploys, for the release agent." })
// => the Markdown below
// #endregion

/** What `effect` writes to one of the process's streams while it runs. */
const written = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const err: Array<string> = []
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true))
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (err.push(String(chunk)), true))
    const value = yield* Effect.ensuring(effect, Effect.sync(() => (stdout.mockRestore(), stderr.mockRestore())))
    return { value, stdout: out.join(""), stderr: err.join("") }
  })

describe("docs/shell-program.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./shell-program.md", import.meta.url), new URL("./shell-program.test.ts", import.meta.url)))

  it("host: the program hands runMain its main (kept, not run)", () => {
    expect(mains).toHaveLength(1)
    expect(Effect.isEffect(mains[0])).toBe(true)
  })

  it.effect("run: a call, a usage error, a question nobody answered", () =>
    Effect.map(written(runDemo), ({ stderr, stdout, value }) => {
      expect(value).toEqual([0, 2, 3])
      expect(stdout).toBe("would deploy api to staging [v2, canary]\n")
      expect(stderr).toBe(
        "my-tools: --env takes one of staging, production; got \"prod\"\n" +
          "Error: permission denied: deploy api to staging: no terminal to ask on; run again with --yes to allow it\n" +
          "my-tools: nobody was there to answer a request for permission to deploy (deploy api to staging)\n"
      )
    }))

  it("usage: the page shows the Markdown the program gives", () => {
    const page = fs.readFileSync(new URL("./shell-program.md", import.meta.url), "utf8")
    const shown = /<!-- usage output -->\n````markdown\n([\s\S]*?)````\n/.exec(page)?.[1]
    expect(shown).toBe(forTheModel)
  })
})
