// A request's logger, made only when the request logs something: pino builds each child's bindings (the request id)
// through the log's redaction, which cost about 8 % of a small request, and at the usual levels most requests log
// nothing at all. What is logged, and with which bindings and redaction, is the child's as before.
import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
/** Fastify's logger is pino's, which tells whether a level is on. */
export type ParentLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

export class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(private readonly parent: ParentLogger, private readonly bindings: Bindings, private readonly options: ChildLoggerOptions) {
    // A route with a level of its own: the child is what knows it.
    if (options.level !== undefined) this.made = parent.child(bindings, options);
  }

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  private log(level: Level, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return;
    const real = this.real;
    (real[level] as (...args: unknown[]) => void).apply(real, args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: unknown[]): void { this.log('fatal', args); }
  error(...args: unknown[]): void { this.log('error', args); }
  warn(...args: unknown[]): void { this.log('warn', args); }
  info(...args: unknown[]): void { this.log('info', args); }
  debug(...args: unknown[]): void { this.log('debug', args); }
  trace(...args: unknown[]): void { this.log('trace', args); }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}
