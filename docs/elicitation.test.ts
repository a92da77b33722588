/**
 * The examples of docs/elicitation.md, run (see ./examples.ts for how the page and this file are kept the same).
 * The MCP clients are the MCP SDK's own `Client` and ours, in memory.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client, InMemoryTransport, type Transport } from "@modelcontextprotocol/client"
import { Effect, Schema } from "effect"
import { Elicitation, Executor, McpClient, McpServer, Tool, Toolkit } from "../src/index.js"
import { modelText } from "../test/helpers.js"
import { checkExamples } from "./examples.js"

// #region ask
const Deploy = Tool.make("deploy", {
  description: "Deploy the current build",
  handler: () =>
    Effect.gen(function*() {
      const answer = yield* Tool.elicit({
        message: "Where to?",
        schema: {
          target: Schema.Literal("staging", "production").annotations({ title: "Target" }),
          notify: Schema.optionalWith(Schema.Boolean, { default: () => true })
        }
      })
      switch (answer._tag) {
        case "Accept":
          return `deploying to ${answer.content.target}${answer.content.notify ? ", telling the team" : ""}`
        case "Decline":
          return "not deployed: the user said no"
        case "Cancel":
          return "not deployed: nobody answered"
      }
    })
})

/** An Elicitor for tests and scripts: always the same answer. */
const always = (answer: Elicitation.Result<Elicitation.Content>) => Elicitation.layer(() => Effect.succeed(answer))

const deploy = Tool.execute(Deploy, { id: "call_1", arguments: {} })

const askDemo = Effect.all({
  accepted: Effect.provide(deploy, always(Elicitation.accept({ target: "staging" }))),
  declined: Effect.provide(deploy, always(Elicitation.decline)),
  nobody: deploy
})
// => {
//   accepted: Either.right(text "deploying to staging, telling the team"),
//   declined: Either.right(text "not deployed: the user said no"),
//   nobody: Either.right(text "not deployed: nobody answered")
// }
// #endregion

// #region form
const Profile = {
  name: Schema.String.annotations({ title: "Name", description: "As on your passport" }),
  age: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 150)), { default: () => 30 }),
  size: Schema.Union(
    Schema.Literal("s").annotations({ title: "Small" }),
    Schema.Literal("l").annotations({ title: "Large" })
  ),
  tags: Schema.Array(Schema.Literal("work", "home"))
}

const formDemo = Effect.gen(function*() {
  const asked: Array<Elicitation.Request> = []
  const recording = Elicitation.layer((request) =>
    Effect.sync(() => {
      asked.push(request)
      return Elicitation.cancel
    })
  )
  yield* Effect.provide(Tool.elicit({ message: "About you", schema: Profile }), recording)
  return asked[0]
})
// => {
//   message: "About you",
//   mode: "form",
//   requestedSchema: {
//     type: "object",
//     properties: {
//       name: { type: "string", title: "Name", description: "As on your passport" },
//       age: { type: "integer", description: "a number between 0 and 150", minimum: 0, maximum: 150, default: 30 },
//       size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
//       tags: { type: "array", items: { type: "string", enum: ["work", "home"] } }
//     },
//     required: ["name", "size", "tags"]
//   }
// }
// #endregion

// #region mcp
// continues the example "ask"

/** An MCP SDK client on a transport, closed with the scope. */
const connected = (client: Client, transport: Transport) =>
  Effect.acquireRelease(
    Effect.as(Effect.promise(() => client.connect(transport)), client),
    () => Effect.promise(() => client.close())
  )

const mcpDemo = Effect.scoped(Effect.gen(function*() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(Toolkit.make(Deploy), { name: "deployer", version: "1.0.0" }, serverSide)
  const client = new Client({ name: "desktop", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  const asked: Array<unknown> = []
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(request.params)
    return { action: "accept", content: { target: "production", notify: false } }
  })
  yield* connected(client, clientSide)
  const result = yield* Effect.promise(() => client.callTool({ name: "deploy" }))
  return { asked, result }
}))
// => {
//   asked: [{
//     mode: "form",
//     message: "Where to?",
//     requestedSchema: {
//       type: "object",
//       properties: {
//         target: { type: "string", title: "Target", enum: ["staging", "production"] },
//         notify: { type: "boolean", default: true }
//       },
//       required: ["target"]
//     }
//   }],
//   result: { content: [{ type: "text", text: "deploying to production" }] }
// }
// #endregion

// #region client
// continues the example "ask"

/** How this host asks its user: here, a fixed answer; in an app, a dialog. */
const AskTheUser = Elicitation.layer((request) =>
  Effect.succeed(request.mode === "form" ? Elicitation.accept({ target: "staging" }) : Elicitation.decline)
)

const clientDemo = Effect.scoped(Effect.gen(function*() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(Toolkit.make(Deploy), { name: "deployer", version: "1.0.0" }, serverSide)
  const client = yield* Effect.provide(McpClient.connect(clientSide), AskTheUser)
  return yield* Executor.run(yield* client.toolkit, [{ id: "call_1", name: "deploy", arguments: {} }])
}))
// => [Either.right(text "deploying to staging, telling the team")]
// #endregion

// #region sampling
// continues the example "mcp"

const Title = Tool.make("title", {
  description: "Suggest a title for a text, asking the client's model",
  parameters: { text: Schema.String },
  handler: ({ text }) =>
    McpServer.sample({
      messages: [{ role: "user", content: { type: "text", text: `A title for:\n${text}` } }],
      systemPrompt: "Answer with the title only.",
      maxTokens: 30
    }).pipe(Effect.map((result) => (result.content.type === "text" ? result.content.text : "")))
})

const samplingDemo = Effect.scoped(Effect.gen(function*() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(Toolkit.make(Title), { name: "writer", version: "1.0.0" }, serverSide)
  const client = new Client({ name: "desktop", version: "1.0.0" }, { capabilities: { sampling: {} } })
  client.setRequestHandler("sampling/createMessage", () => ({
    role: "assistant",
    content: { type: "text", text: "Tools, Typed" },
    model: "some-model"
  }))
  yield* connected(client, clientSide)
  const served = yield* Effect.promise(() => client.callTool({ name: "title", arguments: { text: "..." } }))
  const local = yield* Tool.execute(Title, { id: "call_1", arguments: { text: "..." } })
  return { served, local }
}))
// => {
//   served: { content: [{ type: "text", text: "Tools, Typed" }] },
//   local: Either.left(ToolFailure "sampling needs an MCP client to ask: McpServer.sample works only in a call
//     served over MCP")
// }
// #endregion

// #region logging
// continues the example "mcp"

const Migrate = Tool.make("migrate", {
  description: "Run the database migrations",
  handler: () =>
    Effect.gen(function*() {
      yield* Effect.logDebug("connecting")
      yield* Effect.logInfo("applying 3 migrations")
      yield* Effect.logWarning("migration 2 took 40 s")
      return "migrated"
    })
})

const loggingDemo = Effect.scoped(Effect.gen(function*() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* McpServer.serve(Toolkit.make(Migrate), { name: "db", version: "1.0.0" }, serverSide)
  const client = new Client({ name: "desktop", version: "1.0.0" })
  const logs: Array<unknown> = []
  client.setNotificationHandler("notifications/message", (notification) => {
    logs.push(notification.params)
  })
  yield* connected(client, clientSide)
  yield* Effect.promise(() => client.setLoggingLevel("info"))
  yield* Effect.promise(() => client.callTool({ name: "migrate" }))
  return logs
}))
// => [
//   { level: "info", logger: "migrate", data: "applying 3 migrations" },
//   { level: "warning", logger: "migrate", data: "migration 2 took 40 s" }
// ]
// #endregion

describe("docs/elicitation.md", () => {
  it("shows each example exactly as this file runs it", () =>
    checkExamples(new URL("./elicitation.md", import.meta.url), new URL("./elicitation.test.ts", import.meta.url)))

  it.effect("ask: accepted, declined, and nobody to ask", () =>
    Effect.map(
      askDemo,
      ({ accepted, declined, nobody }) =>
        expect([modelText(accepted), modelText(declined), modelText(nobody)]).toEqual([
          "deploying to staging, telling the team",
          "not deployed: the user said no",
          "not deployed: nobody answered"
        ])
    ))

  it.effect("form: what an Elicitor is asked", () =>
    Effect.map(formDemo, (request) =>
      expect(request).toEqual({
        message: "About you",
        mode: "form",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", title: "Name", description: "As on your passport" },
            age: {
              type: "integer",
              description: "a number between 0 and 150",
              minimum: 0,
              maximum: 150,
              default: 30
            },
            size: { type: "string", oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
            tags: { type: "array", items: { type: "string", enum: ["work", "home"] } }
          },
          required: ["name", "size", "tags"]
        }
      })))

  it.scopedLive("mcp: what an MCP client is asked, and the result", () =>
    Effect.map(mcpDemo, (demo) =>
      expect(demo).toEqual({
        asked: [{
          mode: "form",
          message: "Where to?",
          requestedSchema: {
            type: "object",
            properties: {
              target: { type: "string", title: "Target", enum: ["staging", "production"] },
              notify: { type: "boolean", default: true }
            },
            required: ["target"]
          }
        }],
        result: { content: [{ type: "text", text: "deploying to production" }] }
      })))

  it.scopedLive("client: our client answers with the host's Elicitor, defaults filled in", () =>
    Effect.map(
      clientDemo,
      (outcomes) => expect(outcomes.map(modelText)).toEqual(["deploying to staging, telling the team"])
    ))

  it.scopedLive("sampling: served, the client's model answers; run locally, a SamplingError", () =>
    Effect.map(samplingDemo, ({ local, served }) => {
      expect(served).toEqual({ content: [{ type: "text", text: "Tools, Typed" }] })
      expect(modelText(local)).toBe(
        "Error: sampling needs an MCP client to ask: McpServer.sample works only in a call served over MCP"
      )
    }))

  it.scopedLive("logging: info and up, named after the tool", () =>
    Effect.gen(function*() {
      const logs = yield* loggingDemo
      yield* Effect.sleep("20 millis")
      expect(logs).toEqual([
        { level: "info", logger: "migrate", data: "applying 3 migrations" },
        { level: "warning", logger: "migrate", data: "migration 2 took 40 s" }
      ])
    }))
})
