/**
 * Command-line parsing shared by the commands: node's parseArgs, with an unknown flag or a flag
 * missing its value turned into a usage error that suggests the nearest flag (`--kernal` →
 * "did you mean --kernel?") and points at the command's --help; a value option given twice
 * refused, and a negative number after a value option taken as its value.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { PpdpError } from '../errors.ts';
import { nearest } from '../util/nearest.ts';

export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  config = { ...config, ...(config.args ? { args: negativeValues(config.args, config.options ?? {}) } : {}) };
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
  } catch (e) {
    const code = (e as { code?: string }).code;
    const help = `run \`ppdp ${command} --help\` for its options`;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const flag = /'(-[^']*)'/.exec((e as Error).message)?.[1] ?? '';
      const flags = Object.keys(config.options ?? {}).map((name) => `--${name}`);
      const near = nearest(flag.split('=')[0]!, flags);
      throw new PpdpError(
        'E_ARGS',
        `ppdp ${command}: unknown option '${flag}'${near ? ` (did you mean ${near}?)` : ''}`,
        near ? `write ${near}, or ${help}` : help,
      );
    }
    if (code?.startsWith('ERR_PARSE_ARGS')) {
      throw new PpdpError('E_ARGS', `ppdp ${command}: ${(e as Error).message}`, help);
    }
    throw e;
  }
  refuseRepeated(command, config);
  return parsed;
}

/** A negative number, as an option's value: `-1`, `-0.5`, `-5e3`. */
const NEGATIVE = /^-(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * `--workers -1` as `--workers=-1`: parseArgs refuses a value starting with '-' as ambiguous
 * (it could be a flag), so the command's own check could not name the option's range. No
 * flag is a negative number, so one after a value option is its value.
 */
function negativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const long = /^--([^=]+)$/.exec(arg)?.[1];
    const short = /^-([^-])$/.exec(arg)?.[1];
    const name = long ?? Object.keys(options).find((n) => short !== undefined && options[n]!.short === short);
    const next = args[i + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && NEGATIVE.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * A value option given twice (`--out a --out b`) is refused: parseArgs keeps the last one in
 * silence, and the user meant one of them. Options declared `multiple` repeat by design; a
 * repeated switch (`--force --force`) means what it says once.
 */
function refuseRepeated(command: string, config: ParseArgsConfig): void {
  const options = config.options ?? {};
  const { tokens } = parseArgs({ ...config, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (option === undefined || option.type !== 'string' || option.multiple) continue;
    if (seen.has(token.name)) {
      throw new PpdpError(
        'E_USAGE',
        `ppdp ${command}: --${token.name} is given more than once`,
        `give --${token.name} once: only one of its values would be used`,
      );
    }
    seen.add(token.name);
  }
}

/**
 * A comma-separated list of column names given to `option` (`--qi age,sex`): trimmed, empty
 * items dropped, and a name given twice refused (it would be measured or reported twice).
 */
export function columnList(option: string, text: string | undefined): string[] {
  const names = (text ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) {
    throw new PpdpError(
      'E_USAGE',
      `${option}: the column '${twice}' is named more than once`,
      `name each column once, e.g. ${option} ${[...new Set(names)].join(',')}`,
    );
  }
  return names;
}

/** How a command is called: its --help text, and the positionals (and flags) it cannot do without. */
export interface CommandUsage {
  /** Printed by --help. */
  readonly help: string;
  /** Whether the call has what the command needs; by default, exactly one positional. */
  readonly accepts?: (positionals: readonly string[], values: Readonly<Record<string, unknown>>) => boolean;
  /** What the command takes, e.g. "exactly one release spec": the usage error says it. */
  readonly takes: string;
  /** A call that works, shown as the hint. */
  readonly synopsis: string;
}

type HelpOption = { help: { type: 'boolean'; short: 'h'; default: false } };

/**
 * Every command's prologue: parse the arguments (with --help / -h added), print the help and
 * give undefined when it was asked for, and refuse a call without what the command needs.
 */
export function commandArgs<const O extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  args: string[],
  options: O,
  usage: CommandUsage,
):
  | ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & HelpOption }>>
  | undefined {
  const help: HelpOption = { help: { type: 'boolean', short: 'h', default: false } };
  const parsed = parseCommandArgs(command, {
    args,
    allowPositionals: true,
    options: { ...options, ...help },
  });
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage.help);
    return undefined;
  }
  const accepts = usage.accepts ?? ((positionals) => positionals.length === 1);
  if (!accepts(parsed.positionals, parsed.values)) {
    throw new PpdpError('E_USAGE', `ppdp ${command} takes ${usage.takes}`, usage.synopsis);
  }
  return parsed as ReturnType<
    typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & HelpOption }>
  >;
}
