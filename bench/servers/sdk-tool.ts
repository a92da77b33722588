/**
 * The benchmark tool as the MCP SDK's own `McpServer` registers it, its parameters in zod (what `registerTool`
 * takes): the baselines of rows 4 and 10 serve it. Imports nothing of ours but the constants (a baseline's start-up
 * must load none of our code).
 */
import type { McpServer } from "@modelcontextprotocol/server"
import * as z from "zod/v4"
import { ANSWER, DESCRIPTION, TOOL_NAME } from "../constants.js"

export const registerReadFile = (server: McpServer): McpServer => {
  server.registerTool(TOOL_NAME, {
    description: DESCRIPTION,
    inputSchema: z.object({
      path: z.string().describe("Absolute path to read"),
      max_bytes: z.number().int().optional()
    }),
    annotations: { readOnlyHint: true }
  }, () => ({ content: [{ type: "text", text: ANSWER }] }))
  return server
}
