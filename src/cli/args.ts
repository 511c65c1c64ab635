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
