/** Runs `check` until it holds (every `everyMs`, default 100 ms); throws `failure()` after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  failure: () => string,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(failure());
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
