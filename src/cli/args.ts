/**
 * Command-line parsing shared by the commands: node's parseArgs, with an unknown flag or a flag
 * missing its value turned into a usage error that suggests the nearest flag (`--kernal` →
 * "did you mean --kernel?") and points at the command's --help.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { PpdpError } from '../errors.ts';
import { nearest } from '../util/nearest.ts';

export function parseCommandArgs<T extends ParseArgsConfig>(
  command: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
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
