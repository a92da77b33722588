/**
 * Row 4's baseline: the same no-op tool served over stdio by the MCP SDK's own `McpServer` (the v2 line,
 * `@modelcontextprotocol/server`), with its parameters in zod (what `registerTool` takes).
 */
import { McpServer } from "@modelcontextprotocol/server"
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio"
import { registerReadFile } from "./sdk-tool.js"

await registerReadFile(new McpServer({ name: "bench-sdk", version: "1.0.0" })).connect(new StdioServerTransport())
