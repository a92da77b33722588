/**
 * Row 6: 100,000 no-op calls through `Executor.stream`, every event consumed. The figure is the highest heap in use
 * seen while the batch runs (sampled every 1,000 events and when it ends) minus the heap in use just before it,
 * after a full collection (the process runs with `--expose-gc`). The calls themselves are made before that.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Executor from "../src/Executor.js"
import * as Fixtures from "./fixtures.js"
import { interleave, median, megabytes, plan, ratioOf, report } from "./harness.js"

const CALLS = 100_000
const SAMPLE_EVERY = 1_000
const TARGET_BYTES = 50 * 1024 * 1024

const collect = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("row 6 needs node --expose-gc")
  gc()
}

const calls = Fixtures.validCalls(CALLS)

/** One batch; gives the peak growth of the heap in use, in bytes. */
const batch = async (): Promise<number> => {
  collect()
  const before = process.memoryUsage().heapUsed
  let peak = before
  let events = 0
  let finished = 0
  await Effect.runPromise(Stream.runForEach(Executor.stream(Fixtures.toolkit, calls), (event) =>
    Effect.sync(() => {
      if (event._tag === "Finished") finished++
      if (++events % SAMPLE_EVERY === 0) peak = Math.max(peak, process.memoryUsage().heapUsed)
    })))
  peak = Math.max(peak, process.memoryUsage().heapUsed)
  if (finished !== CALLS) throw new Error(`row 6: ${finished} Finished events for ${CALLS} calls`)
  return peak - before
}

const main = async () => {
  const figures = await interleave({ ours: batch }, { ...plan({ warmup: 1, rounds: 5 }), label: "row 6" })
  const growth = ratioOf(figures.ours, figures.ours.map(() => TARGET_BYTES))
  report([{
    id: "6",
    what: "100,000 no-op calls through `Executor.stream`, events consumed",
    figure: `peak heap growth ${megabytes(median(figures.ours))}`,
    baseline: "heap in use before the batch",
    ...growth,
    target: "<= 50 MB (ratio to 50 MB <= 1.0)",
    met: growth.ratio <= 1
  }])
}

await main()
