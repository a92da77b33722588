/**
 * Type tests: what the compiler knows about a tool's parameters, success and failure, and how those types reach a
 * program (`Tool.call`, `Toolkit.call`, typed outcomes, `pick` / `omit`). They are checked by `npm run check`
 * (tsc includes test/): an `expectTypeOf` that does not hold, or a `@ts-expect-error` line that compiles, fails
 * the check. The `it` blocks only make vitest list them.
 */
import { Tool as AiTool, Toolkit as AiToolkit } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Schema } from "effect"
import { expectTypeOf } from "vitest"
import type * as EffectAi from "../src/EffectAi.js"
import type { McpClient, StdioProvider, ToolResult } from "../src/index.js"
import { Executor, Permission, Tool, ToolError, Toolkit } from "../src/index.js"

class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}
class TooLarge extends Schema.TaggedError<TooLarge>()("TooLarge", { bytes: Schema.Int }) {}
class Disk extends Context.Tag("Disk")<Disk, { readonly read: (path: string) => Effect.Effect<string> }>() {}

/** Every option that shapes a type: parameters, a success and a failure schema, services. */
const ReadFile = Tool.make("read_file", {
  description: "Read a file",
  parameters: { path: Schema.String, max_bytes: Schema.optional(Schema.Int) },
  success: Schema.String,
  failure: FileNotFound,
  handler: ({ path }) =>
    path === "" ? Effect.fail(new FileNotFound({ path })) : Effect.flatMap(Disk, (disk) => disk.read(path))
})

/** No schemas: success and failure come from the handler. */
const Stat = Tool.make("stat", {
  description: "Size of a file",
  parameters: { path: Schema.String },
  handler: ({ path }) =>
    path.length > 100 ? Effect.fail(new TooLarge({ bytes: path.length })) : Effect.succeed({ size: 1 })
})

/** A success schema whose encoded side differs from its type. */
const Modified = Tool.make("modified", {
  description: "When a file was last modified",
  parameters: { path: Schema.String },
  success: Schema.Struct({ at: Schema.Date }),
  handler: () => Effect.succeed({ at: new Date(0) })
})

/** No parameters, nothing returned. */
const Ping = Tool.make("ping", { description: "Ping", handler: () => Effect.void })

const Echo = Tool.fromJsonSchema("echo", {
  description: "Echo",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  handler: (args) => Effect.succeed(String(args.text))
})

const kit = Toolkit.make(ReadFile, Stat, Modified, Ping)

type ReadParameters = { readonly path: string } & { readonly max_bytes?: number | undefined }

describe("Tool types", () => {
  it("the handler takes the decoded parameters", () => {
    Tool.make("typed", {
      description: "Typed",
      parameters: { path: Schema.String, at: Schema.Date, n: Schema.optional(Schema.NumberFromString) },
      handler: (params) => {
        expectTypeOf(params).toEqualTypeOf<
          { readonly path: string } & { readonly at: Date } & { readonly n?: number | undefined }
        >()
        return Effect.void
      }
    })
    Tool.fromJsonSchema("raw", {
      description: "Raw",
      handler: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>()
        return Effect.void
      }
    })
  })

  it("the handler is held to the success and failure schemas", () => {
    Tool.make("wrong_success", {
      description: "A number for a string schema",
      success: Schema.String,
      // @ts-expect-error the handler must succeed with the success schema's Type
      handler: () => Effect.succeed(1)
    })
    Tool.make("wrong_failure", {
      description: "A string for a FileNotFound schema",
      failure: FileNotFound,
      // @ts-expect-error the handler must fail with the failure schema's Type
      handler: () => Effect.fail("nope")
    })
    // a ToolError (what Permission.require fails with) is allowed beside the declared failure
    const Guarded = Tool.make("guarded", {
      description: "Asks first",
      parameters: { path: Schema.String },
      failure: FileNotFound,
      handler: ({ path }) =>
        Effect.zipRight(
          Permission.require({ action: "read", description: `read ${path}` }),
          path === "" ? Effect.fail(new FileNotFound({ path })) : Effect.succeed("ok")
        )
    })
    expectTypeOf(Tool.call(Guarded, { path: "a" })).toEqualTypeOf<
      Effect.Effect<string, FileNotFound | ToolError.ToolError, never>
    >()
  })

  it("extractors: Parameters, Success, Failure, Requirements, Structured, Name", () => {
    expectTypeOf<Tool.Parameters<typeof ReadFile>>().toEqualTypeOf<ReadParameters>()
    expectTypeOf<Tool.Success<typeof ReadFile>>().toEqualTypeOf<string>()
    expectTypeOf<Tool.Failure<typeof ReadFile>>().toEqualTypeOf<FileNotFound>()
    expectTypeOf<Tool.Requirements<typeof ReadFile>>().toEqualTypeOf<Disk>()
    expectTypeOf<Tool.Structured<typeof ReadFile>>().toEqualTypeOf<undefined>()
    expectTypeOf<Tool.Name<typeof ReadFile>>().toEqualTypeOf<"read_file">()

    // without schemas: what the handler gives and fails with
    expectTypeOf<Tool.Success<typeof Stat>>().toEqualTypeOf<{ size: number }>()
    expectTypeOf<Tool.Failure<typeof Stat>>().toEqualTypeOf<TooLarge>()
    expectTypeOf<Tool.Requirements<typeof Stat>>().toEqualTypeOf<never>()
    expectTypeOf<Tool.Structured<typeof Stat>>().toEqualTypeOf<{ size: number }>()

    // the program gets the Type, `structured` holds the encoded value
    expectTypeOf<Tool.Success<typeof Modified>>().toEqualTypeOf<{ readonly at: Date }>()
    expectTypeOf<Tool.Structured<typeof Modified>>().toEqualTypeOf<{ readonly at: string }>()

    expectTypeOf<Tool.Success<typeof Ping>>().toEqualTypeOf<void>()
    expectTypeOf<Tool.Failure<typeof Ping>>().toEqualTypeOf<never>()
    expectTypeOf<Tool.Structured<typeof Ping>>().toEqualTypeOf<undefined>()

    expectTypeOf<Tool.Parameters<typeof Echo>>().toEqualTypeOf<Record<string, unknown>>()
    expectTypeOf<Tool.Success<typeof Echo>>().toEqualTypeOf<string>()
    expectTypeOf<Tool.Failure<typeof Echo>>().toEqualTypeOf<never>()

    // a permission preview's error is a failure of the call, its services the tool's
    const Previewed = Tool.make("previewed", {
      description: "Previews",
      parameters: { path: Schema.String },
      permission: {
        action: "write",
        preview: ({ path }) =>
          Effect.flatMap(Disk, (disk) => disk.read(path)).pipe(Effect.zipLeft(Effect.fail(new TooLarge({ bytes: 1 }))))
      },
      handler: () => Effect.succeed("ok")
    })
    expectTypeOf(Tool.call(Previewed, { path: "a" })).toEqualTypeOf<
      Effect.Effect<string, TooLarge | ToolError.ToolError, Disk>
    >()
  })

  it("Toolkit.Tools and Toolkit.Requirements", () => {
    expectTypeOf<Toolkit.Tools<typeof kit>>().toEqualTypeOf<
      typeof ReadFile | typeof Stat | typeof Modified | typeof Ping
    >()
    expectTypeOf<Toolkit.Requirements<typeof kit>>().toEqualTypeOf<Disk>()
    expectTypeOf<Tool.Name<Toolkit.Tools<typeof kit>>>().toEqualTypeOf<"read_file" | "stat" | "modified" | "ping">()
  })

  it("toModelOutput takes the typed success value", () => {
    Tool.make("shaped", {
      description: "Shaped",
      success: Schema.Struct({ at: Schema.Date }),
      toModelOutput: (value) => {
        expectTypeOf(value).toEqualTypeOf<{ readonly at: Date }>()
        return value.at.toISOString()
      },
      handler: () => Effect.succeed({ at: new Date(0) })
    })
    Tool.make("shaped_parts", {
      description: "Shaped into parts",
      toModelOutput: (value) => [{ type: "text", text: value.lines.join("\n") }],
      handler: () => Effect.succeed({ lines: ["a", "b"] })
    })
  })
})

describe("Tool.Any and assignability", () => {
  it("every kind of tool is a Tool.Any", () => {
    expectTypeOf(ReadFile).toMatchTypeOf<Tool.Any>()
    expectTypeOf(Stat).toMatchTypeOf<Tool.Any>()
    expectTypeOf(Ping).toMatchTypeOf<Tool.Any>()
    expectTypeOf(Echo).toMatchTypeOf<Tool.Any>()
    expectTypeOf<McpClient.McpClient["tools"]>().toMatchTypeOf<Effect.Effect<ReadonlyArray<Tool.Any>>>()
    expectTypeOf<StdioProvider.Provider["tools"]>().toMatchTypeOf<Effect.Effect<ReadonlyArray<Tool.Any>>>()
    expectTypeOf<Toolkit.Tools<ReturnType<typeof Toolkit.prefix<typeof ReadFile, "fs">>>>().toMatchTypeOf<Tool.Any>()
    const Greet = AiTool.make("greet", { parameters: { name: Schema.String }, success: Schema.String })
    expectTypeOf<EffectAi.ToolsFor<{ readonly greet: typeof Greet }>>().toMatchTypeOf<Tool.Any>()
    expectTypeOf<Tool.Parameters<EffectAi.ToolFor<typeof Greet>>>().toEqualTypeOf<{ readonly name: string }>()
    expectTypeOf<Tool.Success<EffectAi.ToolFor<typeof Greet>>>().toEqualTypeOf<string>()
    // a toolkit of anything is a toolkit of Tool.Any; `Toolkit.make` takes any mix
    expectTypeOf(Toolkit.make(ReadFile, Echo, Ping)).toMatchTypeOf<Toolkit.Toolkit<Tool.Any>>()
    expect(AiToolkit.make(Greet).tools.greet.name).toBe("greet")
  })

  it("a remote tool is a Tool.Dynamic: JSON parameters, the far end's ToolResult", () => {
    expectTypeOf<McpClient.McpClient["tools"]>().toEqualTypeOf<Effect.Effect<ReadonlyArray<Tool.Dynamic>>>()
    expectTypeOf<Tool.Parameters<Tool.Dynamic>>().toEqualTypeOf<Record<string, unknown>>()
    expectTypeOf<Tool.Success<Tool.Dynamic>>().toEqualTypeOf<ToolResult.ToolResult>()
    expectTypeOf<Tool.Failure<Tool.Dynamic<StdioProvider.StdioProviderError>>>().toEqualTypeOf<
      StdioProvider.StdioProviderError
    >()
  })

  it("Tool.Tool<Name> takes any tool of that name needing no services", () => {
    expectTypeOf(Stat).toMatchTypeOf<Tool.Tool<"stat">>()
    expectTypeOf(Echo).toMatchTypeOf<Tool.Tool<string>>()
    // a tool needing services is not one that needs none
    expectTypeOf(ReadFile).not.toMatchTypeOf<Tool.Tool<"read_file">>()
    expectTypeOf(ReadFile).toMatchTypeOf<Tool.Tool<"read_file", never, unknown, unknown, Disk>>()
  })

  it("parameters are contravariant, the rest covariant", () => {
    // a tool that takes less is one that may be given more
    expectTypeOf(Stat).toMatchTypeOf<Tool.Tool<"stat", { readonly path: string; readonly extra: number }>>()
    // not the other way: a tool that needs `path` cannot stand for one that may be given nothing
    expectTypeOf(Stat).not.toMatchTypeOf<Tool.Tool<"stat", {}>>()
    // success and failure widen
    expectTypeOf(Stat).toMatchTypeOf<Tool.Tool<"stat", never, { size: number } | string, TooLarge | FileNotFound>>()
    expectTypeOf(Stat).not.toMatchTypeOf<Tool.Tool<"stat", never, string>>()
    expectTypeOf(Stat).not.toMatchTypeOf<Tool.Tool<"stat", never, unknown, FileNotFound>>()
    // Tool.Any is no particular tool
    expectTypeOf<Tool.Any>().not.toMatchTypeOf<typeof Stat>()
    expectTypeOf<Tool.Any>().not.toMatchTypeOf<Tool.Tool<string>>()
  })
})

describe("typed calls", () => {
  it("Tool.call takes the parameters and gives Success, Failure | ToolError", () => {
    expectTypeOf(Tool.call(ReadFile, { path: "a" })).toEqualTypeOf<
      Effect.Effect<string, FileNotFound | ToolError.ToolError, Disk>
    >()
    expectTypeOf(Tool.call(Modified, { path: "a" })).toEqualTypeOf<
      Effect.Effect<{ readonly at: Date }, ToolError.ToolError, never>
    >()
    // @ts-expect-error a parameter of the wrong type
    Tool.call(ReadFile, { path: 1 })
    // @ts-expect-error a missing parameter
    Tool.call(ReadFile, {})
    // a union of tools (a lookup's) must be given what every one of them takes
    const Resize = Tool.make("resize", {
      description: "Resize",
      parameters: { width: Schema.Int },
      handler: () => Effect.void
    })
    const either = [Stat, Resize][0]
    // @ts-expect-error `width` is missing for resize
    Tool.call(either, { path: "a" })
    expectTypeOf(Tool.call(either, { path: "a", width: 1 })).toEqualTypeOf<
      Effect.Effect<void | { size: number }, TooLarge | ToolError.ToolError, never>
    >()
    // @ts-expect-error a tool nothing is known about cannot be called with anything
    Tool.call(ReadFile as Tool.Any, { path: "a" })
  })

  it("Toolkit.call checks the name against the toolkit and the parameters against that tool", () => {
    expectTypeOf(Toolkit.call(kit, "stat", { path: "a" })).toEqualTypeOf<
      Effect.Effect<{ size: number }, TooLarge | ToolError.ToolError, never>
    >()
    // @ts-expect-error a name the toolkit does not have
    Toolkit.call(kit, "stats", { path: "a" })
    // @ts-expect-error parameters of another tool
    Toolkit.call(kit, "stat", { text: "a" })
    // @ts-expect-error a parameter of the wrong type
    Toolkit.call(kit, "read_file", { path: "a", max_bytes: "10" })
    // a name typed as a union must be given what every one of those tools takes
    const either = "stat" as "stat" | "modified"
    expectTypeOf(Toolkit.call(kit, either, { path: "a" })).toEqualTypeOf<
      Effect.Effect<{ size: number } | { readonly at: Date }, TooLarge | ToolError.ToolError, never>
    >()
    // a remote toolkit: any name, JSON parameters
    const remote: Toolkit.Toolkit<Tool.Dynamic> = Toolkit.make()
    expectTypeOf(Toolkit.call(remote, "anything", { q: 1 })).toEqualTypeOf<
      Effect.Effect<ToolResult.ToolResult, ToolError.ToolError, never>
    >()
  })

  it("the tool's own failure flows out of Toolkit.call, and catchTag removes it", () => {
    const handled = Toolkit.call(kit, "read_file", { path: "a" }).pipe(
      Effect.catchTag("FileNotFound", (error) => {
        expectTypeOf(error).toEqualTypeOf<FileNotFound>()
        return Effect.succeed("")
      })
    )
    expectTypeOf(handled).toEqualTypeOf<Effect.Effect<string, ToolError.ToolError, Disk>>()
    // the call errors are a ToolError union of their own tags
    const all = handled.pipe(
      Effect.catchTags({ InvalidArguments: () => Effect.succeed(""), ToolTimeout: () => Effect.succeed("") })
    )
    expectTypeOf(all).toEqualTypeOf<
      Effect.Effect<
        string,
        | ToolError.ToolNotFound
        | ToolError.ToolFailure
        | ToolError.ToolDefect
        | ToolError.PermissionDenied
        | ToolError.ToolInterrupted
        | ToolError.ToolOutcomeUnknown,
        Disk
      >
    >()
  })
})

describe("typed outcomes", () => {
  it("Executor.run's outcomes are typed by the toolkit's tools", () => {
    const outcomes = Executor.run(Toolkit.make(Stat, Modified), [])
    expectTypeOf(outcomes).toEqualTypeOf<
      Effect.Effect<ReadonlyArray<Executor.Outcome<typeof Stat | typeof Modified>>, never, never>
    >()
    type O = Effect.Effect.Success<typeof outcomes>[number]
    expectTypeOf<Either.Either.Right<O>["structured"]>().toEqualTypeOf<{ size: number } | { readonly at: string }>()
    // untyped code keeps working: a typed outcome is an Outcome
    expectTypeOf<O>().toMatchTypeOf<Executor.Outcome>()
    expectTypeOf<Executor.Outcome>().toEqualTypeOf<
      Either.Either<ToolResult.ToolResult, ToolError.ToolError>
    >()
  })

  it("a typed ToolFailure carries the tool's failure, and onStart's", () => {
    type Failed = Extract<Either.Either.Left<Executor.Outcome<typeof Stat>>, { _tag: "ToolFailure" }>
    expectTypeOf<Failed["error"]>().toEqualTypeOf<TooLarge>()
    const withStart = Executor.run(Toolkit.make(Stat), [], {
      onStart: () => Effect.fail(new FileNotFound({ path: "" }))
    })
    expectTypeOf(withStart).toEqualTypeOf<
      Effect.Effect<ReadonlyArray<Executor.Outcome<typeof Stat, FileNotFound>>, never, never>
    >()
    type S = Effect.Effect.Success<typeof withStart>[number]
    expectTypeOf<Extract<Either.Either.Left<S>, { _tag: "ToolFailure" }>["error"]>().toEqualTypeOf<
      TooLarge | FileNotFound
    >()
    // a ToolError from onStart stays itself: it is no ToolFailure's error
    const timedOut = Executor.run(Toolkit.make(Stat), [], {
      onStart: () => Effect.fail(new ToolError.ToolTimeout({ tool: "stat", timeout: Duration.seconds(1) }))
    })
    expectTypeOf(timedOut).toEqualTypeOf<Effect.Effect<ReadonlyArray<Executor.Outcome<typeof Stat>>, never, never>>()
    // an onStart typed as anything at all makes the error unknown again
    const options: Executor.Options = { onStart: () => Effect.void }
    type U = Effect.Effect.Success<ReturnType<typeof Executor.run<typeof Stat, never, unknown>>>[number]
    expectTypeOf<Extract<Either.Either.Left<U>, { _tag: "ToolFailure" }>["error"]>().toEqualTypeOf<unknown>()
    expect(options.onStart).toBeDefined()
  })

  it("isOutcomeOf narrows an outcome to the tool its call named", () => {
    const isStat = Executor.isOutcomeOf(kit, "stat")
    const outcome = {} as Executor.Outcome<Toolkit.Tools<typeof kit>>
    const call: Executor.ToolCall = { id: "1", name: "stat", arguments: {} }
    if (isStat(call, outcome)) {
      expectTypeOf(outcome).toEqualTypeOf<Executor.Outcome<typeof Stat>>()
      if (Either.isRight(outcome)) expectTypeOf(outcome.right.structured).toEqualTypeOf<{ size: number }>()
    }
    // @ts-expect-error a name the toolkit does not have
    expect(() => Executor.isOutcomeOf(kit, "stats")).toThrow("no tool \"stats\" in this toolkit")
    // on a Finished event
    const event = {} as Executor.ToolEvent<Toolkit.Tools<typeof kit>>
    if (event._tag === "Finished" && isStat(event.call, event.outcome)) {
      expectTypeOf(event.outcome).toEqualTypeOf<Executor.Outcome<typeof Stat>>()
    }
  })

  it("Tool.execute gives the tool's outcome", () => {
    expectTypeOf(Tool.execute(Modified, { id: "1", arguments: {} })).toEqualTypeOf<
      Effect.Effect<Executor.Outcome<typeof Modified>, never, never>
    >()
  })
})

describe("pick and omit", () => {
  it("keep only the named tools, by name", () => {
    const picked = Toolkit.pick(kit, "stat", "ping")
    expectTypeOf(picked).toEqualTypeOf<Toolkit.Toolkit<typeof Stat | typeof Ping>>()
    const omitted = Toolkit.omit(kit, "read_file")
    expectTypeOf(omitted).toEqualTypeOf<Toolkit.Toolkit<typeof Stat | typeof Modified | typeof Ping>>()
    expectTypeOf<Toolkit.Requirements<typeof omitted>>().toEqualTypeOf<never>()
    // @ts-expect-error a name the toolkit does not have
    expect(() => Toolkit.pick(kit, "stat", "stats")).toThrow("no tool \"stats\" in this toolkit")
    // @ts-expect-error a name the toolkit does not have
    expect(() => Toolkit.omit(kit, "nope")).toThrow("no tool \"nope\" in this toolkit")
    // what is left can be called, and what is gone cannot
    Toolkit.call(picked, "stat", { path: "a" })
    // @ts-expect-error picked away
    Toolkit.call(picked, "read_file", { path: "a" })
  })
})
