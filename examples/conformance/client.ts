/**
 * The client the MCP conformance suite (`@modelcontextprotocol/conformance`, client scenarios) runs: `npm run
 * conformance` points the suite's `--command` at it, and the suite runs
 *
 *   node --import tsx examples/conformance/client.ts <server url>
 *
 * with the scenario's name in `MCP_CONFORMANCE_SCENARIO`. A scenario it plays (./scenarios.ts, on `McpClient`) runs
 * against the URL; any other (the OAuth scenarios: this library does not implement OAuth, see
 * conformance-baseline.yml) is refused at once with exit code 1, before the library is even loaded, since the suite
 * starts this program once per scenario. `client.ts --list` prints the scenarios it plays, as JSON.
 */
/** The scenarios ./scenarios.ts plays (the keys of its table). */
const PLAYED = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""

if (url === "--list") {
  process.stdout.write(`${JSON.stringify(PLAYED)}\n`)
} else if (url === undefined) {
  process.stderr.write("usage: MCP_CONFORMANCE_SCENARIO=<scenario> client.ts <server url>\n")
  process.exitCode = 2
} else if (!PLAYED.includes(scenario)) {
  process.stderr.write(
    `client.ts: scenario ${JSON.stringify(scenario)} is not implemented (it plays ${PLAYED.join(", ")})\n`
  )
  process.exitCode = 1
} else {
  const { main } = await import("./scenarios.js")
  main(url, scenario)
}
