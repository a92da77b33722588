/**
 * A loop over one of row 1-2's variants, to run under `node --cpu-prof`: `npm run bench -- --only 1` says how
 * fast, this says where the time goes. Run compiled (see `build.ts`):
 * `node --cpu-prof node_modules/.cache/effect-agent-tools-bench/bench/profile.js valid|invalid|gen [rounds]`.
 */
import * as Effect from "effect/Effect"
import * as Executor from "../src/Executor.js"
import * as Toolkit from "../src/Toolkit.js"
import * as Fixtures from "./fixtures.js"

const CALLS = 10_000

const variants = {
  valid: () => Executor.run(Fixtures.toolkit, Fixtures.validCalls(CALLS), { maxParallel: 8 }),
  invalid: () => Executor.run(Fixtures.toolkit, Fixtures.invalidCalls(CALLS), { maxParallel: 8 }),
  gen: () => Executor.run(Toolkit.make(Fixtures.ReadFileGen), Fixtures.validCalls(CALLS), { maxParallel: 8 })
}

const name = (process.argv[2] ?? "valid") as keyof typeof variants
const rounds = Number(process.argv[3] ?? 30)
const batch = variants[name]()
for (let round = 0; round < rounds; round++) {
  const started = performance.now()
  await Effect.runPromise(batch)
  process.stderr.write(`${name} ${round}: ${(performance.now() - started).toFixed(1)} ms\n`)
}
