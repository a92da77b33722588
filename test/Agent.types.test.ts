/**
 * The types users see: what a run needs from its environment, and the transcript as @effect/ai's Prompt messages.
 */
import type { LanguageModel } from "@effect/ai"
import { Prompt } from "@effect/ai"
import { describe, expectTypeOf, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import type { Stream } from "effect"
import { Agent, Tool, Toolkit } from "../src/index.js"

class Clock extends Context.Tag("test/Clock")<Clock, { readonly now: Effect.Effect<string> }>() {}

const Now = Tool.make("now", { description: "The time", handler: () => Effect.flatMap(Clock, (clock) => clock.now) })
const kit = Toolkit.make(Now)

describe("Agent types", () => {
  it("a run with a plain-function model needs what its tools and its model need, no more", () => {
    const plain = Agent.run({ toolkit: kit, prompt: "hi", model: () => Effect.succeed({ text: "noon" }) })
    expectTypeOf(plain).toEqualTypeOf<Effect.Effect<Agent.Result, Agent.AgentError, Clock>>()
    class Ledger extends Context.Tag("test/Ledger")<Ledger, {}>() {}
    const needing = Agent.stream({ toolkit: kit, prompt: "hi", model: () => Effect.as(Ledger, { text: "x" }) })
    expectTypeOf(needing).toEqualTypeOf<Stream.Stream<Agent.Event, Agent.AgentError, Clock | Ledger>>()
  })

  it("a run without a model needs the @effect/ai LanguageModel", () => {
    const run = Agent.run({ toolkit: kit, prompt: "hi" })
    expectTypeOf(run).toEqualTypeOf<
      Effect.Effect<Agent.Result, Agent.AgentError, LanguageModel.LanguageModel | Clock>
    >()
  })

  it("onStart's requirements are the run's", () => {
    class Journal extends Context.Tag("test/Journal")<Journal, {}>() {}
    const run = Agent.run({
      toolkit: kit,
      prompt: "hi",
      model: () => Effect.succeed({}),
      onStart: () => Effect.asVoid(Journal)
    })
    expectTypeOf(run).toEqualTypeOf<Effect.Effect<Agent.Result, Agent.AgentError, Clock | Journal>>()
  })

  it("a transcript is what Prompt.make takes, and a Prompt's messages are transcript messages", () => {
    expectTypeOf<ReadonlyArray<Agent.Message>>().toMatchTypeOf<Prompt.RawInput>()
    expectTypeOf<Prompt.Message>().toMatchTypeOf<Agent.Message>()
    expectTypeOf<Prompt.Prompt>().toMatchTypeOf<Agent.PromptInput>()
    const prompt = Prompt.make([{ role: "system", content: "terse" }, { role: "user", content: "hi" }])
    const run = Agent.run({ toolkit: kit, prompt, model: () => Effect.succeed({}) })
    expectTypeOf(run).toEqualTypeOf<Effect.Effect<Agent.Result, Agent.AgentError, Clock>>()
  })
})
