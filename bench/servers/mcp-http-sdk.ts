/**
 * Row 10's baseline: the same no-op tool served over HTTP by the MCP SDK's own v2 server, the way its docs serve
 * both eras: `createMcpHandler` with a server made per request (`McpServer` with the tool in zod), on `node:http`
 * through the SDK's Node glue (`@modelcontextprotocol/node`'s `toNodeHandler`); prints `{"url": ...}`.
 */
import { toNodeHandler } from "@modelcontextprotocol/node"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { registerReadFile } from "./sdk-tool.js"

const factory = () => registerReadFile(new McpServer({ name: "bench-sdk", version: "1.0.0" }))

const handler = toNodeHandler(createMcpHandler(factory))
// node:http types `method` and `url` as optional; the glue takes a request that has them, as every real one does
const server = Http.createServer((req, res) => void handler(req as Parameters<typeof handler>[0], res))
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` })}\n`)
})
