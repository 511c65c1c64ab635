/**
 * Whether node was started with one of the V8 flags `names` (without their leading dashes, in
 * either spelling: V8 takes `_` for `-`), on its command line or in NODE_OPTIONS, negated or
 * not: a setting the user chose, which ppdp leaves as it is.
 */
export function nodeFlagSet(
  names: readonly string[],
  execArgv: readonly string[],
  nodeOptions = '',
): boolean {
  const wanted = new Set(names);
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => {
    const name = /^--(?:no-)?([\w-]+)/.exec(arg.replaceAll('_', '-'))?.[1];
    return name !== undefined && wanted.has(name);
  });
}
