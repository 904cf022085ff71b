/**
 * Where the state's background parts report what an operator should see (e.g. a data file whose
 * size is not its manifest's). The state is opened before the HTTP server whose logger is the
 * server's log, so the server attaches that logger once built; until then (or in a CLI command
 * that builds no server) a warning is one JSON line on stderr. Fields never carry secrets.
 */
export type WarningFields = Readonly<Record<string, string | number | boolean>>;

export class Warnings {
  #sink: ((fields: WarningFields, message: string) => void) | undefined;

  /** Warnings go to `sink` from now on (the server's logger). */
  attach(sink: (fields: WarningFields, message: string) => void): void {
    this.#sink = sink;
  }

  warn(fields: WarningFields, message: string): void {
    if (this.#sink !== undefined) this.#sink(fields, message);
    else process.stderr.write(`${JSON.stringify({ level: 'warn', ...fields, msg: message })}\n`);
  }
}
