#!/usr/bin/env node
/**
 * The `floe` command's entry. `floe sql` is the users' client, run on laptops: it speaks HTTP only
 * (server/sql-shell.ts) and loads nothing else, so it starts in a tenth of the time the server's
 * modules (DuckDB, the stores, the console) take to load. Every other command — `floe serve`,
 * `floe admin …` — is server/cli-commands.ts.
 */
import { ShellUsageError, sqlShell } from './sql-shell.js';

const [command, ...rest] = process.argv.slice(2);
if (command === 'sql') {
  try {
    const code = await sqlShell(rest);
    if (code !== 0) process.exit(code);
  } catch (e) {
    if (e instanceof ShellUsageError) {
      console.error(`floe: ${e.message}`);
      process.exit(2);
    }
    console.error('floe: failed:', e);
    process.exit(1);
  }
} else {
  await import('./cli-commands.js');
}
