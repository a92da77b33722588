/**
 * Row 12: connecting to a server over Streamable HTTP and having its tools listed, ours (`McpClient.connect` of
 * `McpClient.http`, which gives the tools as `Tool`s) against the SDK's `Client` (`connect`, then `listTools`), each
 * connection made and closed in turn. The server is the SDK's v2 `Server` behind `createMcpHandler` on `node:http`
 * in this process, listing 28 tools with the schemas tools have in the wild (descriptions, enums, bounds, arrays,
 * nested objects, defaults); both clients negotiate the revision the same way (`server/discover`, so 2026-07-28
 * here), so the two make the same requests and what differs is the client's own work.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { createMcpHandler, Server } from "@modelcontextprotocol/server"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as McpClient from "../src/McpClient.js"
import { interleave, median, micros, plan, quick, ratioOf, report, timed } from "./harness.js"

const TOOLS = 28
const CONNECTS = quick ? 10 : 30

/** One tool of 28: a few properties of the usual kinds, a nested object, a default; one name per index. */
const tool = (i: number) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}: does one thing to a resource and says what it did`,
  inputSchema: {
    type: "object" as const,
    properties: {
      path: { type: "string", description: "The resource to act on", minLength: 1 },
      mode: { type: "string", enum: ["read", "write", "append"], default: "read" },
      limit: { type: "integer", minimum: 1, maximum: 1000, description: "At most this many items" },
      tags: { type: "array", items: { type: "string" }, maxItems: 16 },
      options: {
        type: "object",
        properties: { recursive: { type: "boolean" }, depth: { type: "integer", minimum: 0 } },
        additionalProperties: false
      },
      [`field_${i}`]: { type: "string", pattern: "^[a-z]+$" }
    },
    required: ["path"],
    additionalProperties: false
  },
  annotations: { readOnlyHint: i % 2 === 0 }
})

const tools = Array.from({ length: TOOLS }, (_, i) => tool(i))

const serve = async () => {
  const handler = createMcpHandler(() => {
    const server = new Server({ name: "bench-28", version: "1.0.0" }, { capabilities: { tools: {} } })
    server.setRequestHandler("tools/list", () => ({ tools }))
    server.setRequestHandler("tools/call", () => ({ content: [{ type: "text", text: "ok" }] }))
    return server
  }, { legacy: "stateless" })
  const http = Http.createServer((incoming, outgoing) => {
    let body = ""
    incoming.setEncoding("utf8")
    incoming.on("data", (chunk: string) => (body += chunk))
    incoming.on("end", async () => {
      const headers = new Headers()
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (typeof value === "string") headers.set(name, value)
      }
      const method = incoming.method ?? "GET"
      const response = await handler.fetch(
        new Request(`http://${incoming.headers.host}${incoming.url}`, {
          method,
          headers,
          ...(method === "POST" ? { body } : {})
        })
      )
      outgoing.writeHead(response.status, Object.fromEntries(response.headers.entries()))
      outgoing.end(Buffer.from(await response.arrayBuffer()))
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await handler.close()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    }
  }
}

const main = async () => {
  const server = await serve()
  const ours = () =>
    Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const client = yield* McpClient.connect(McpClient.http(server.url))
      return (yield* client.tools).length
    })))
  const theirs = async () => {
    const client = new Client({ name: "bench", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    const { tools: listed } = await client.listTools()
    await client.close()
    return listed.length
  }
  const [oursListed, theirsListed] = [await ours(), await theirs()]
  if (oursListed !== TOOLS || theirsListed !== TOOLS) {
    throw new Error(`row 12: listed ${oursListed} (ours) and ${theirsListed} (SDK) tools, not ${TOOLS}`)
  }
  const figures = await interleave({
    ours: () =>
      timed(async () => {
        for (let i = 0; i < CONNECTS; i++) await ours()
      }),
    sdk: () =>
      timed(async () => {
        for (let i = 0; i < CONNECTS; i++) await theirs()
      })
  }, { ...plan({ warmup: 2, rounds: 21 }), label: "row 12" })
  await server.close()
  const ratio = ratioOf(figures.ours, figures.sdk)
  report([{
    id: "12",
    what: `our \`McpClient\` over Streamable HTTP: connect to listed tools, ${TOOLS} tools`,
    figure: `${micros(median(figures.ours) / CONNECTS)}/connect`,
    baseline: `SDK \`Client\` connect + listTools ${micros(median(figures.sdk) / CONNECTS)}/connect`,
    ...ratio,
    target: "<= 1.1x",
    met: ratio.ratio <= 1.1
  }])
}

await main()
