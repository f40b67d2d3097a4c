// What the shell commands share: clear one-line errors with an exit code, the configuration, and the existing database.
import { existsSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from '../config';

/** A failure the operator can fix: printed as one line, no stack. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

/** Exit 2: the command line itself is wrong. */
export const usageError = (message: string, usage: string) => new CliError(`${message}\n${usage}`, 2);

/** The configuration as the gateway reads it (environment and `.env`). */
export function cliConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`Configuration error: ${error.message}`);
    throw error;
  }
}

/** DATABASE_PATH, which must be a database the gateway has already created (a command never creates an empty one). */
export function existingDatabase(config: Config): string {
  if (config.databasePath === ':memory:') throw new CliError('DATABASE_PATH is :memory:; there is no database file to work on');
  if (!existsSync(config.databasePath)) {
    throw new CliError(`No database at ${config.databasePath}: check DATABASE_PATH (and the .env file), or start the gateway once to create it`);
  }
  return config.databasePath;
}

/** Runs a command: exit 0 when it resolves, the error's code (1 unless told) with its message on stderr when not. */
export function runCli(main: (args: string[]) => Promise<void>): void {
  main(process.argv.slice(2)).then(() => {
    process.exitCode = 0;
  }, (error: unknown) => {
    if (error instanceof CliError) {
      process.stderr.write(`Error: ${error.message}\n`);
      process.exitCode = error.exitCode;
    } else {
      process.stderr.write(`Error: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  });
}
