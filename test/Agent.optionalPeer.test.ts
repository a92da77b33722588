/**
 * `Agent` is in the root module, and @effect/ai is an optional peer: in a process where no @effect/ai module can
 * be loaded (a resolve hook refuses them, as on a machine without the peer), a run with a plain-function model
 * works, and a run without a model fails with a defect that says what it needed. A real child process, since a
 * module once loaded in this one cannot be unloaded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/agent/${name}`, import.meta.url))

const runNode = (
  args: ReadonlyArray<string>
): Promise<{ readonly code: number | null; readonly out: string; readonly err: string }> =>
  new Promise((resolve) => {
    const child = ChildProcess.spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk) => out += chunk)
    child.stderr.on("data", (chunk) => err += chunk)
    child.on("close", (code) => resolve({ code, out, err }))
  })

describe("Agent without @effect/ai installed", () => {
  it("runs with a plain-function model; without a model, says it needs @effect/ai", async () => {
    const { code, err, out } = await runNode([
      "--import",
      "tsx",
      "--import",
      fixture("no-effect-ai.mjs"),
      fixture("plain-model.ts")
    ])
    expect(err).toBe("")
    expect(code).toBe(0)
    expect(JSON.parse(out)).toEqual({
      reason: "NoCalls",
      text: "5",
      withoutModel: "Error: Agent: a run without a model uses the @effect/ai LanguageModel, and @effect/ai could " +
        "not be loaded: Error: Cannot find package '@effect/ai/LanguageModel' (blocked by the test)"
    })
  })

  it("the hook does block @effect/ai: the EffectAi module does not load under it", async () => {
    const { code, err } = await runNode([
      "--import",
      "tsx",
      "--import",
      fixture("no-effect-ai.mjs"),
      "--eval",
      `import(${JSON.stringify(fileURLToPath(new URL("../src/EffectAi.ts", import.meta.url)))})`
    ])
    expect(code).not.toBe(0)
    expect(err).toContain("blocked by the test")
  })
})
