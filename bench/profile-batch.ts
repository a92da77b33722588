/**
 * A loop over small batches (8 calls of 8 tools, each answering a value: row 9's step without the model), to time
 * a batch's fixed cost or run under `node --cpu-prof`: `node
 * node_modules/.cache/effect-agent-tools-bench/bench/profile-batch.js [batches]`; prints µs a batch, three times.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Executor from "../src/Executor.js"
import * as Tool from "../src/Tool.js"
import * as Toolkit from "../src/Toolkit.js"

const names = Array.from({ length: 8 }, (_, i) => `read_${i}`)
const kit = Toolkit.make(
  ...names.map((name) =>
    Tool.make(name, {
      description: `Read a file (${name})`,
      parameters: { path: Schema.String },
      handler: ({ path }) => Effect.succeed(`read ${path}`)
    })
  )
)
const calls = names.map((name, i) => ({ id: `call_${i}`, name, arguments: `{"path":"/srv/data/${i}.txt"}` }))
const batches = Number(process.argv[2] ?? 20_000)
const run = Executor.run(kit, calls)
for (let round = 0; round < 3; round++) {
  const start = performance.now()
  for (let i = 0; i < batches; i++) await Effect.runPromise(run)
  process.stdout.write(`${(((performance.now() - start) / batches) * 1000).toFixed(1)} µs a batch\n`)
}
