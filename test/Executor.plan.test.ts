/**
 * `Executor.plan`: the chains a batch runs in, given without running it, and the executor keeping to them. The
 * executor plans every batch with the same scan, so what a harness reads here is what the executor does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Schema } from "effect"
import { Executor, Tool, Toolkit } from "../src/index.js"

const parameters = {
  tag: Schema.Int,
  keys: Schema.optional(Schema.Array(Schema.String)),
  yields: Schema.optional(Schema.Int)
}

/** Records when each call starts and ends, on one counter, yielding `yields` times in between. */
const makeKit = () => {
  let tick = 0
  const starts = new Map<number, number>()
  const ends = new Map<number, number>()
  const body = ({ tag, yields }: { readonly tag: number; readonly yields?: number | undefined }) =>
    Effect.gen(function*() {
      starts.set(tag, tick++)
      for (let i = 0; i < (yields ?? 0); i++) yield* Effect.yieldNow()
      ends.set(tag, tick++)
    })
  const kit = Toolkit.make(
    Tool.make("keyed", {
      description: "Keys from its arguments",
      parameters,
      resource: ({ keys }) => keys,
      handler: body
    }),
    Tool.make("alone", { description: "Sequential", parameters, sequential: true, handler: body })
  )
  return { kit, starts, ends }
}

const call = (tag: number, keys?: ReadonlyArray<string>, name = "keyed"): Executor.ToolCall => ({
  id: `c${tag}`,
  name,
  arguments: keys === undefined ? { tag } : { tag, keys }
})

const waitsFor = (plan: Executor.Plan) => plan.calls.map((c) => c.waitsFor)

describe("Executor.plan", () => {
  it("a call waits for the latest earlier call on its key; calls on other keys wait for nothing", () => {
    const { kit } = makeKit()
    const plan = Executor.plan(kit, [call(0, ["a"]), call(1, ["b"]), call(2, ["a"]), call(3, ["a"]), call(4)])
    expect(waitsFor(plan)).toEqual([[], [], [0], [2], []])
    expect(plan.calls.map((c) => c.keys)).toEqual([["a"], ["b"], ["a"], ["a"], []])
    expect(plan.sequential).toBe(false)
    expect(plan.calls.every((c) => c.refused === undefined)).toBe(true)
    expect(plan.calls.map((c) => [c.index, c.call.id])).toEqual([[0, "c0"], [1, "c1"], [2, "c2"], [3, "c3"], [4, "c4"]])
  })

  it("a call with several keys waits for the latest call on each, once per predecessor, ascending", () => {
    const { kit } = makeKit()
    const plan = Executor.plan(kit, [
      call(0, ["b"]),
      call(1, ["a"]),
      call(2, ["a", "b"]),
      call(3, ["b", "a"]),
      call(4, ["c", "a"])
    ])
    expect(waitsFor(plan)).toEqual([[], [], [0, 1], [2], [3]])
  })

  it("a sequential tool anywhere makes the batch one chain in order, skipping calls that never run", () => {
    const { kit } = makeKit()
    const plan = Executor.plan(kit, [
      call(0, ["a"]),
      call(1, ["b"]),
      call(2, [], "nope"),
      call(3, [], "alone"),
      call(4)
    ])
    expect(plan.sequential).toBe(true)
    expect(waitsFor(plan)).toEqual([[], [0], [], [1], [3]])
    // the keys are still given
    expect(plan.calls[0].keys).toEqual(["a"])
  })

  it("options.sequential makes one chain too", () => {
    const { kit } = makeKit()
    const plan = Executor.plan(kit, [call(0, ["a"]), call(1, ["b"]), call(2)], { sequential: true })
    expect(plan.sequential).toBe(true)
    expect(waitsFor(plan)).toEqual([[], [0], [1]])
  })

  it("a call that never runs waits for nothing, nothing waits for it, and it says why", () => {
    const { kit } = makeKit()
    const plan = Executor.plan(kit, [
      call(0, ["a"]),
      { id: "bad", name: "keyed", arguments: { tag: "x", keys: ["a"] } },
      call(2, ["a"], "nope"),
      { id: "json", name: "keyed", arguments: "{not json" },
      call(4, ["a"])
    ])
    expect(waitsFor(plan)).toEqual([[], [], [], [], [0]])
    expect(plan.calls.map((c) => c.refused?._tag)).toEqual([
      undefined,
      "InvalidArguments",
      "ToolNotFound",
      "InvalidArguments",
      undefined
    ])
    expect(plan.calls[1].keys).toEqual([])
  })

  it("a resource function that throws refuses its call, as the executor would", () => {
    const Broken = Tool.make("broken", {
      description: "Its key function throws",
      resource: (): string => {
        throw new Error("no key")
      },
      handler: () => Effect.void
    })
    const plan = Executor.plan(Toolkit.make(Broken), [{ id: "1", name: "broken", arguments: {} }])
    expect(plan.calls[0].refused?._tag).toBe("ToolDefect")
  })

  it("an empty batch has an empty plan", () => {
    const { kit } = makeKit()
    expect(Executor.plan(kit, [])).toEqual({ calls: [], sequential: false })
  })

  it.effect("the executor's start order keeps the plan, whatever the batch (property)", () =>
    Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(
          FastCheck.array(
            FastCheck.record({
              kind: FastCheck.oneof(
                { arbitrary: FastCheck.constant("keyed" as const), weight: 8 },
                { arbitrary: FastCheck.constant("unknown" as const), weight: 1 },
                { arbitrary: FastCheck.constant("invalid" as const), weight: 1 },
                { arbitrary: FastCheck.constant("alone" as const), weight: 1 }
              ),
              keys: FastCheck.subarray(["a", "b", "c", "d"]),
              yields: FastCheck.integer({ min: 0, max: 4 })
            }),
            { maxLength: 14 }
          ),
          FastCheck.integer({ min: 1, max: 4 }),
          async (specs, maxParallel) => {
            const { ends, kit, starts } = makeKit()
            const calls = specs.map(({ keys, kind, yields }, tag): Executor.ToolCall => ({
              id: `c${tag}`,
              name: kind === "unknown" ? "nope" : kind === "alone" ? "alone" : "keyed",
              arguments: kind === "invalid" ? { tag: "not a number", keys } : { tag, keys, yields }
            }))
            const plan = Executor.plan(kit, calls)
            await Effect.runPromise(Executor.run(kit, calls, { maxParallel }))
            for (const planned of plan.calls) {
              const i = planned.index
              if (planned.refused !== undefined) {
                expect(starts.has(i)).toBe(false)
                continue
              }
              expect(starts.has(i)).toBe(true)
              for (const before of planned.waitsFor) {
                expect(before).toBeLessThan(i)
                expect(ends.get(before)!).toBeLessThan(starts.get(i)!)
              }
            }
            // and the plan is enough: calls sharing a key (or any two, in a sequential batch) never overlap
            const ran = plan.calls.filter((c) => c.refused === undefined)
            for (const a of ran) {
              for (const b of ran) {
                if (a.index >= b.index) continue
                if (plan.sequential || a.keys.some((key) => b.keys.includes(key))) {
                  expect(ends.get(a.index)!).toBeLessThan(starts.get(b.index)!)
                }
              }
            }
          }
        ),
        { numRuns: 200 }
      )
    ))
})
