/**
 * The provider projections of a real third-party server's tools: `@modelcontextprotocol/server-everything` (its
 * schemas as the SDK's zod serves them, `$schema` and all), each projected for OpenAI strict mode and for Gemini
 * and checked against the subsets those providers document (test/fixtures/providerSubsets.ts), or refused with a
 * reason. The corpus of test/fixtures/foreignSchemas.ts is written after such servers; this is one of them as it is.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as McpClient from "../../src/McpClient.js"
import * as ToolSchema from "../../src/ToolSchema.js"
import { geminiProblems, openAiStrictProblems } from "../fixtures/providerSubsets.js"
import * as peers from "./peers.js"

type Json = { readonly [key: string]: unknown }

describe("projections of server-everything's tools", () => {
  it.scopedLive(
    "every tool is in OpenAI's strict subset and in Gemini's, or refused saying why",
    () =>
      Effect.gen(function*() {
        const client = yield* McpClient.connect(
          McpClient.stdio({ command: process.execPath, args: [peers.serverEverything] })
        )
        const tools = yield* client.tools
        expect(tools.length).toBeGreaterThanOrEqual(10)
        const problems: Array<string> = []
        let refused = 0
        for (const tool of tools) {
          for (
            const [target, check] of [["openai-strict", openAiStrictProblems], ["gemini", geminiProblems]] as const
          ) {
            let projected: Json
            try {
              projected = ToolSchema.jsonSchema(tool, { target })
            } catch (error) {
              expect(error, `${tool.name} ${target}`).toBeInstanceOf(ToolSchema.UnsupportedSchemaError)
              expect((error as Error).message.length).toBeGreaterThan(0)
              refused++
              continue
            }
            for (const problem of check(projected)) problems.push(`${tool.name} (${target}): ${problem}`)
          }
        }
        expect(problems).toEqual([])
        // a refusal is the exception: most real tools must be servable
        expect(refused).toBeLessThan(tools.length / 4)
      }),
    { timeout: 60_000 }
  )
})
