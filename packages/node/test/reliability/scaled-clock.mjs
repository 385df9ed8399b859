// Test-only preload (`node --import`) for `pair serve` children in the crash tests: the wall clock
// (`Date.now`) runs PAIR_TEST_TIME_SCALE times faster than real time from PAIR_TEST_TIME_ORIGIN_MS,
// the same virtual time as a Hugging Face emulator started with `startMs` = that origin and
// `timeScale` = that scale. Monotonic time (`performance.now`) and timers stay real. Without both
// variables it changes nothing. Never loaded by product code.
// Must not know: PAIR, the emulator.
const scale = Number(process.env.PAIR_TEST_TIME_SCALE);
const origin = Number(process.env.PAIR_TEST_TIME_ORIGIN_MS);
if (scale > 0 && Number.isFinite(origin)) {
  const realNow = Date.now.bind(Date);
  Date.now = () => Math.round(origin + (realNow() - origin) * scale);
}
