/**
 * Row 4's baseline: the same no-op tool served over stdio by the MCP SDK's own `McpServer` (the v2 line,
 * `@modelcontextprotocol/server`), with its parameters in zod (what `registerTool` takes).
 */
import { McpServer } from "@modelcontextprotocol/server"
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio"
import * as z from "zod/v4"
import { ANSWER, DESCRIPTION, TOOL_NAME } from "../constants.js"

const server = new McpServer({ name: "bench-sdk", version: "1.0.0" })
server.registerTool(TOOL_NAME, {
  description: DESCRIPTION,
  inputSchema: z.object({
    path: z.string().describe("Absolute path to read"),
    max_bytes: z.number().int().optional()
  }),
  annotations: { readOnlyHint: true }
}, () => ({ content: [{ type: "text", text: ANSWER }] }))
await server.connect(new StdioServerTransport())
