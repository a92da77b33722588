/**
 * `Tool.wrap`: a tool that runs another function and is the original in every other way. The forwarding is checked
 * mechanically: every own property of a tool, and of its kernel, is enumerated and must be the original's, so a
 * property added to tools later that the wrap does not carry over fails here. Then what the wrapper runs and what
 * it may override, and the types it keeps.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Schema } from "effect"
import { expectTypeOf } from "vitest"
import { Executor, Permission, Tool, ToolDefinition, ToolError, Toolkit, ToolResult } from "../src/index.js"
import { KernelId, OptionsId } from "../src/Tool.js"
import { modelText } from "./helpers.js"

class TooBig extends Schema.TaggedError<TooBig>()("TooBig", { size: Schema.Int }) {
  override get message() {
    return `too big: ${this.size}`
  }
}

/** A tool with every option set, so every property has a value of its own. */
const Full = Tool.make("resize", {
  description: "Resize an image",
  title: "Resize",
  parameters: { path: Schema.String, width: Schema.optional(Schema.Int) },
  success: Schema.Struct({ width: Schema.Int, height: Schema.Int }),
  failure: TooBig,
  toModelOutput: ({ height, width }) => `${width}x${height}`,
  strict: true,
  sequential: true,
  replay: "keyed",
  resource: ({ path }) => `file:${path}`,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  timeout: "5 seconds",
  validate: true,
  confined: () => "workspace:/images",
  permission: {
    action: "write",
    describe: ({ path }) => `resize ${path}`,
    path: ({ path }) => path,
    preview: ({ path }) => Effect.succeed(`--- ${path}`)
  },
  handler: ({ width = 100 }) =>
    width > 1000 ? Effect.fail(new TooBig({ size: width })) : Effect.succeed({ width, height: 50 })
})

const Json = Tool.fromJsonSchema("lookup", {
  description: "Look up a key",
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  outputSchema: { type: "object", properties: { value: { type: "string" } } },
  annotations: { readOnly: true },
  handler: (args) => Effect.succeed({ value: String(args.key) })
})

const Prefixed = Toolkit.prefix(Toolkit.make(Full), "img").tools[0]

/** Every own key of a value, strings and symbols. */
const keysOf = (value: object): Array<string | symbol> => Reflect.ownKeys(value)

describe("Tool.wrap forwards every property", () => {
  for (
    const [label, original] of [
      ["made with Tool.make", Full],
      ["made with Tool.fromJsonSchema", Json],
      ["renamed by Toolkit.prefix", Prefixed]
    ] as const
  ) {
    it(`of a tool ${label}: every own property and every kernel field but the handler`, () => {
      const wrapped: Tool.Any = Tool.wrap(original as Tool.Any, (params, next) => next(params))
      expect(Object.getPrototypeOf(wrapped)).toBe(Object.getPrototypeOf(original))
      expect(keysOf(wrapped)).toEqual(keysOf(original))
      for (const key of keysOf(original)) {
        if (key === KernelId) continue
        expect([key, (wrapped as any)[key]]).toEqual([key, (original as any)[key]])
        expect(Object.is((wrapped as any)[key], (original as any)[key]), String(key)).toBe(true)
      }
      const kernel = original[KernelId] as unknown as Record<string, unknown>
      const wrappedKernel = wrapped[KernelId] as unknown as Record<string, unknown>
      expect(keysOf(wrappedKernel)).toEqual(keysOf(kernel))
      for (const key of keysOf(kernel)) {
        if (key === "handle") continue
        expect(Object.is(wrappedKernel[key as string], kernel[key as string]), `kernel.${String(key)}`).toBe(true)
      }
      expect(wrappedKernel.handle).not.toBe(kernel.handle)
      // and so everything made of them
      expect(wrapped.toJSON()).toEqual(original.toJSON())
      for (const format of ["openAiChat", "openAiResponses", "anthropic", "gemini", "mcp"] as const) {
        expect(ToolDefinition[format](wrapped)).toEqual(ToolDefinition[format](original))
      }
    })
  }

  it("the options a tool keeps are the ones it was made with", () => {
    expect(Full[OptionsId].description).toBe("Resize an image")
    expect(Full[OptionsId].confined!({})).toBe("workspace:/images")
  })
})

describe("Tool.wrap runs the wrapper", () => {
  it.effect("with the decoded parameters and the original as next; its value is mapped as the original's", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const Wrapped = Tool.wrap(Full, (params, next) =>
        Effect.suspend(() => {
          seen.push(params)
          return next({ ...params, width: (params.width ?? 100) * 2 })
        }))
      const outcome = yield* Tool.execute(Wrapped, { id: "1", arguments: { path: "a.png", width: 30 } })
      // toModelOutput and the success schema applied to the wrapper's value
      expect(modelText(outcome)).toBe("60x50")
      expect(Either.getOrThrow(outcome).structured).toEqual({ width: 60, height: 50 })
      expect(seen).toEqual([{ path: "a.png", width: 30 }])
      // its typed failure rendered by the failure schema, and given back typed to a program
      const failed = yield* Tool.execute(Wrapped, { id: "2", arguments: { path: "a.png", width: 600 } })
      expect(modelText(failed)).toBe("Error: too big: 1200")
      const error = yield* Effect.flip(Tool.call(Wrapped, { path: "a.png", width: 600 }))
      expect(error).toEqual(new TooBig({ size: 1200 }))
    }))

  it.effect("asks the original's permission, with its confinement, before the wrapper runs", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const Wrapped = Tool.wrap(
        Full,
        (params, next) => Effect.zipRight(Effect.sync(() => log.push("wrapper")), next(params))
      )
      const requests: Array<Permission.PermissionRequest> = []
      yield* Tool.execute(Wrapped, { id: "p", arguments: { path: "b.png" } }).pipe(
        Effect.provide(Permission.layer((request) =>
          Effect.sync(() => {
            log.push("permission")
            requests.push(request)
            return Permission.allow
          })
        ))
      )
      expect(log).toEqual(["permission", "wrapper"])
      expect(requests[0]).toMatchObject({
        tool: "resize",
        action: "write",
        description: "resize b.png",
        path: "b.png",
        preview: "--- b.png",
        confined: "workspace:/images"
      })
    }))

  it.effect("answers without next when it wants, and a wrapper that throws is the call's defect", () =>
    Effect.gen(function*() {
      const Cached = Tool.wrap(Full, () => Effect.succeed({ width: 1, height: 1 }))
      expect(modelText(yield* Tool.execute(Cached, { id: "1", arguments: { path: "x" } }))).toBe("1x1")
      const Throws = Tool.wrap(Full, () => {
        throw new Error("the wrapper broke")
      })
      expect(modelText(yield* Tool.execute(Throws, { id: "2", arguments: { path: "x" } }))).toBe(
        "Error: tool \"resize\" panicked: the wrapper broke"
      )
    }))
})

describe("Tool.wrap overrides", () => {
  /** Each option a wrap may override, a value for it, and what it changes. */
  const overrides = {
    description: ["Resize, logged", (t: Tool.Any) => t.description],
    title: ["Resize (logged)", (t: Tool.Any) => t.title],
    annotations: [{ readOnly: true }, (t: Tool.Any) => [t.annotations, t[KernelId].annotations]],
    sequential: [false, (t: Tool.Any) => t.sequential],
    replay: ["safe", (t: Tool.Any) => t.replay],
    timeout: ["1 second", (t: Tool.Any) => [t.timeout, t[KernelId].timeout]],
    resource: ["images", (t: Tool.Any) => t[KernelId].resources({ path: "a" })],
    permission: [{ action: "edit" }, (t: Tool.Any) => [t.permissionAction, t[KernelId].permission?.action]],
    confined: [() => "container:abc", (t: Tool.Any) => t[KernelId].confined?.({})]
  } as const
  // every option of WrapOptions is in the list above: one added to tools later must be classified here
  type Listed = keyof typeof overrides
  expectTypeOf<Listed>().toEqualTypeOf<keyof Tool.WrapOptions<unknown>>()
  // and the options a wrap may not override are exactly these (they shape the served schema and the decoder)
  expectTypeOf<Exclude<keyof Tool.CommonOptions<unknown, never>, Listed>>().toEqualTypeOf<"strict" | "validate">()

  for (const [key, [value, read]] of Object.entries(overrides)) {
    it(`${key}: the wrap has the override, the original keeps its own`, () => {
      const wrapped = Tool.wrap(Full, (params, next) => next(params), { [key]: value } as Tool.WrapOptions<any>)
      expect(read(wrapped)).not.toEqual(read(Full))
      // everything else as it was
      for (const [other, [, readOther]] of Object.entries(overrides)) {
        if (other === key || (key === "annotations" && other === "title")) continue
        expect(readOther(wrapped), other).toEqual(readOther(Full))
      }
    })
  }

  it("values as the original derives them: a title from the annotations' when none was given; undefined keeps", () => {
    const Untitled = Tool.make("t", {
      description: "d",
      annotations: { title: "From hints" },
      handler: () => Effect.void
    })
    expect(Tool.wrap(Untitled, (p, next) => next(p), { annotations: { title: "New hint" } }).title).toBe("New hint")
    // the original's own title stays its title
    expect(Tool.wrap(Full, (p, next) => next(p), { annotations: { title: "New hint" } }).title).toBe("Resize")
    expect(Tool.wrap(Full, (p, next) => next(p), { timeout: "2 seconds" }).timeout).toEqual(Duration.seconds(2))
    const kept = Tool.wrap(Full, (p, next) => next(p), { timeout: undefined, description: "other" })
    expect(kept.timeout).toEqual(Duration.seconds(5))
  })

  it.effect("an overriding permission is asked instead of the original's", () =>
    Effect.gen(function*() {
      const Ask = Tool.wrap(Full, (params, next) => next(params), {
        permission: { action: "review", describe: ({ path }) => `review ${path}` }
      })
      const [outcome] = yield* Executor.run(Toolkit.make(Ask), [{ id: "1", name: "resize", arguments: { path: "c" } }])
        .pipe(
          Effect.provide(Permission.layer((request) =>
            Effect.succeed(request.action === "review" ? Permission.deny("not reviewed") : Permission.allow)
          ))
        )
      expect(modelText(outcome)).toBe("Error: permission denied: review c: not reviewed")
    }))
})

/** The type of a tool like `Full` that needs `R`. */
type LikeFull<R> = Tool.Tool<
  "resize",
  Tool.Parameters<typeof Full>,
  Tool.Success<typeof Full>,
  Tool.Failure<typeof Full>,
  R,
  Tool.Structured<typeof Full>
>

describe("Tool.wrap types", () => {
  it("keeps the six type parameters, adding the wrapper's services", () => {
    const Wrapped = Tool.wrap(Full, (params, next) => next(params))
    expectTypeOf(Wrapped).toEqualTypeOf<LikeFull<never>>()
    expectTypeOf<Tool.Parameters<typeof Wrapped>>().toEqualTypeOf<
      { readonly path: string } & { readonly width?: number | undefined }
    >()
    class Clock extends Effect.Tag("Clock")<Clock, { readonly now: Effect.Effect<number> }>() {}
    expectTypeOf(Tool.wrap(Full, (params, next) => Effect.zipRight(Clock.now, next(params))))
      .toEqualTypeOf<LikeFull<Clock>>()
    // it must give what the original gives
    // @ts-expect-error a string is not the original's success
    Tool.wrap(Full, () => Effect.succeed("done"))
    // @ts-expect-error nor a failure the original does not have
    Tool.wrap(Full, () => Effect.fail(new Error("other")))
    // a ToolError is always allowed
    Tool.wrap(Full, (p) => Effect.fail(new ToolError.PermissionDenied({ tool: "resize", description: p.path })))
    expect(ToolResult.isToolResult(ToolResult.text(""))).toBe(true)
  })
})
