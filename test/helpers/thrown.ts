/** The error `work` throws, when it is of one of `classes`; any other error is thrown on. */
// biome-ignore lint/suspicious/noExplicitAny: error classes take constructor arguments of their own
export function thrown<E extends Error>(work: () => unknown, ...classes: (new (...args: any[]) => E)[]): E {
  try {
    work();
  } catch (e) {
    if (classes.some((c) => e instanceof c)) return e as E;
    throw e;
  }
  throw new Error(`expected ${classes.map((c) => c.name).join(' or ')}, nothing was thrown`);
}
