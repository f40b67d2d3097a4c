// Configuration: one TypeBox schema (also the TS type), read from the environment once at start-up.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { FormatRegistry, Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseDotenv } from 'dotenv';
import { Email, EMAIL_PATTERN } from '../schemas/common';

/** The folder holding package.json, templates/ and data/ — also when running from dist/. */
export const projectRoot: string = (() => {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + __dirname);
    dir = parent;
  }
  return dir;
})();

// TypeBox knows no formats of its own: ADMIN_EMAIL follows the same rule as the API.
FormatRegistry.Set('email', (value) => EMAIL_PATTERN.test(value));

const Bool = Type.Boolean();
export const ConfigSchema = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  databasePath: Type.String({ minLength: 1 }),
  jwtSecret: Type.Optional(Type.String({ minLength: 32 })),
  jwtTtl: Type.String({ pattern: '^[1-9][0-9]*[smhd]?$' }),
  adminEmail: Type.Optional(Email),
  adminPassword: Type.Optional(Type.String({ minLength: 8, maxLength: 256 })),
  messagingApiUrl: Type.String({ pattern: '^https?://[^\\s]+[^/]$' }),
  messagingVerifyToken: Type.Optional(Type.String({ minLength: 1 })),
  messagingAppSecret: Type.Optional(Type.String({ minLength: 1 })),
  messagingTimeoutMs: Type.Integer({ minimum: 1, maximum: 600000 }),
  messagingAllowUnsigned: Bool,
  messagingTokenKey: Type.Optional(Type.String({ minLength: 32 })),
  timezone: Type.String({ minLength: 1 }),
  cookieSecure: Bool,
  // false, a hop count, or the addresses/CIDRs of the trusted proxies (never `true`: see parseTrustProxy).
  trustProxy: Type.Union([Type.Literal(false), Type.Integer({ minimum: 1, maximum: 100 }), Type.Array(Type.String(), { minItems: 1 })]),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  requestTimeoutMs: Type.Integer({ minimum: 1000, maximum: 3_600_000 }),
  // Days kept; 0 keeps forever (at most a century: a cut-off before the epoch would be meaningless).
  retentionWebhookEventsDays: Type.Integer({ minimum: 0, maximum: 36500 }),
  retentionMessagesDays: Type.Integer({ minimum: 0, maximum: 36500 }),
  // The event log (feed, streams, deliveries): days kept; 0 keeps forever.
  retentionEventsDays: Type.Integer({ minimum: 0, maximum: 36500 }),
  // Event endpoints: plain http allowed (else https only), and address ranges allowed despite being private/loopback.
  eventEndpointsAllowHttp: Bool,
  eventEndpointsAllowedCidrs: Type.Array(Type.String()),
  // Event streams one user may hold open at once.
  eventStreamsPerUser: Type.Integer({ minimum: 1, maximum: 10_000 }),
  metricsToken: Type.Optional(Type.String({ minLength: 16 })),
  // Largest inbound media file archived, in bytes.
  mediaMaxBytes: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  // The archive's total size cap in bytes; unset: no cap (the free-space floor still holds).
  mediaArchiveMaxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  // Free space (MiB) the database's filesystem keeps: below it /readyz warns and no media download starts.
  storageMinFreeMb: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
  // How long a synchronous send waits for its phone number's turn before 429 SEND_QUEUE_FULL.
  sendWaitMs: Type.Integer({ minimum: 0, maximum: 600_000 }),
});
export type Config = Static<typeof ConfigSchema>;

// Environment variable -> config key, with the default used when the variable is unset or empty.
const VARIABLES: Record<keyof Config, [string, string | undefined]> = {
  host: ['HOST', '127.0.0.1'],
  port: ['PORT', '3000'],
  databasePath: ['DATABASE_PATH', 'data/gateway.db'],
  jwtSecret: ['JWT_SECRET', undefined],
  jwtTtl: ['JWT_TTL', '12h'],
  adminEmail: ['ADMIN_EMAIL', undefined],
  adminPassword: ['ADMIN_PASSWORD', undefined],
  messagingApiUrl: ['MESSAGING_API_URL', 'https://graph.facebook.com/v25.0'],
  messagingVerifyToken: ['MESSAGING_VERIFY_TOKEN', undefined],
  messagingAppSecret: ['MESSAGING_APP_SECRET', undefined],
  messagingTimeoutMs: ['MESSAGING_TIMEOUT_MS', '10000'],
  messagingAllowUnsigned: ['MESSAGING_ALLOW_UNSIGNED', 'false'],
  messagingTokenKey: ['MESSAGING_TOKEN_KEY', undefined],
  timezone: ['TIMEZONE', 'UTC'],
  // Unset: on whenever TRUST_PROXY is set (a proxy in front means TLS in front); an explicit false still wins.
  cookieSecure: ['COOKIE_SECURE', undefined],
  trustProxy: ['TRUST_PROXY', 'false'],
  logLevel: ['LOG_LEVEL', 'info'],
  requestTimeoutMs: ['REQUEST_TIMEOUT_MS', '30000'],
  retentionWebhookEventsDays: ['RETENTION_WEBHOOK_EVENTS_DAYS', '30'],
  retentionMessagesDays: ['RETENTION_MESSAGES_DAYS', '0'],
  retentionEventsDays: ['RETENTION_EVENTS_DAYS', '7'],
  eventEndpointsAllowHttp: ['EVENT_ENDPOINTS_ALLOW_HTTP', 'false'],
  eventEndpointsAllowedCidrs: ['EVENT_ENDPOINTS_ALLOWED_CIDRS', ''],
  eventStreamsPerUser: ['EVENT_STREAMS_PER_USER', '5'],
  metricsToken: ['METRICS_TOKEN', undefined],
  mediaMaxBytes: ['MEDIA_MAX_BYTES', '104857600'],
  mediaArchiveMaxBytes: ['MEDIA_ARCHIVE_MAX_BYTES', undefined],
  storageMinFreeMb: ['STORAGE_MIN_FREE_MB', '64'],
  sendWaitMs: ['SEND_WAIT_MS', '10000'],
};

/** Variables whose values never appear in an error message. */
const SECRETS = new Set(['JWT_SECRET', 'ADMIN_PASSWORD', 'MESSAGING_APP_SECRET', 'MESSAGING_VERIFY_TOKEN', 'MESSAGING_TOKEN_KEY', 'METRICS_TOKEN']);
/** Address ranges proxy-addr knows by name, accepted in TRUST_PROXY's list. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export class ConfigError extends Error {}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function isAddressOrCidr(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY: `false`, a hop count, or a comma-separated list of proxy addresses/CIDRs.
 * `true` would trust every X-Forwarded-For hop, which any client can write: refused.
 */
function parseTrustProxy(value: string): Config['trustProxy'] {
  const text = value.trim();
  if (/^(false|0)$/i.test(text)) return false;
  if (/^true$/i.test(text)) {
    throw new ConfigError('Invalid TRUST_PROXY: "true" would trust any X-Forwarded-For header a client sends, '
      + 'so client IPs (and login limits) could be forged. Use the number of proxies in front of the gateway '
      + '(TRUST_PROXY=1 behind one reverse proxy) or their addresses (TRUST_PROXY=127.0.0.1,10.0.0.0/8)');
  }
  if (/^[0-9]+$/.test(text)) {
    const hops = Number(text);
    if (hops > 100) throw new ConfigError('Invalid TRUST_PROXY: a hop count must be between 1 and 100');
    return hops;
  }
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const bad = entries.find((entry) => !isAddressOrCidr(entry));
  if (entries.length === 0 || bad !== undefined) {
    throw new ConfigError(`Invalid TRUST_PROXY: ${JSON.stringify(bad ?? text)} is not an IP address or CIDR; `
      + 'use false, a hop count, or a comma-separated list of proxy addresses');
  }
  return entries;
}

/** EVENT_ENDPOINTS_ALLOWED_CIDRS: a comma-separated list of addresses or CIDRs (empty: none). */
function parseCidrs(value: string): string[] {
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const bad = entries.find((entry) => NAMED_RANGES.has(entry) || !isAddressOrCidr(entry));
  if (bad !== undefined) throw new ConfigError(`Invalid EVENT_ENDPOINTS_ALLOWED_CIDRS: ${JSON.stringify(bad)} is not an IP address or CIDR`);
  return entries;
}

/** Parses and validates `env`; throws ConfigError naming the first bad variable (never echoing a secret). */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {};
  for (const [key, [name, fallback]] of Object.entries(VARIABLES)) {
    const value = env[name] === undefined || env[name] === '' ? fallback : env[name];
    if (value !== undefined) raw[key] = value;
  }
  raw.trustProxy = parseTrustProxy(String(raw.trustProxy));
  raw.cookieSecure ??= String(raw.trustProxy !== false);
  raw.eventEndpointsAllowedCidrs = parseCidrs(String(raw.eventEndpointsAllowedCidrs ?? ''));
  const converted = Value.Convert(ConfigSchema, raw) as Record<string, unknown>;
  for (const error of Value.Errors(ConfigSchema, converted)) {
    const key = error.path.slice(1).split('/')[0] as keyof Config;
    const name = VARIABLES[key]?.[0] ?? key;
    const got = SECRETS.has(name) ? '' : ` (got ${JSON.stringify(env[name] ?? null)})`;
    throw new ConfigError(`Invalid ${name}: ${error.message}${got}`);
  }
  const config = converted as Config;
  if (!isTimeZone(config.timezone)) throw new ConfigError(`Invalid TIMEZONE: unknown IANA zone ${JSON.stringify(config.timezone)}`);
  if (config.databasePath !== ':memory:') config.databasePath = resolve(projectRoot, config.databasePath);
  return config;
}

/** Reads `.env` from the working directory (when present) under the real environment, then parses. */
export function loadConfig(): Config {
  const dotenvPath = resolve(process.cwd(), '.env');
  const fromFile = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath, 'utf8')) : {};
  return parseConfig({ ...fromFile, ...process.env });
}

/** A start-up warning when `.env` in `dir` can be read by other users (it usually holds secrets); undefined otherwise. */
export function dotenvWarning(dir = process.cwd()): string | undefined {
  const dotenvPath = resolve(dir, '.env');
  if (!existsSync(dotenvPath)) return undefined;
  const mode = statSync(dotenvPath).mode & 0o777;
  if ((mode & 0o044) === 0) return undefined;
  return `${dotenvPath} is readable by other users (mode ${mode.toString(8).padStart(3, '0')}); it may hold secrets: chmod 600 it`;
}

/** Where the operator typed a shell command: `npm run` moves to the project folder but keeps it in INIT_CWD. */
export function invocationDir(): string {
  return process.env.INIT_CWD ?? process.cwd();
}

/** `12h`, `30m`, `7d`, `45s` or plain seconds -> seconds. */
export function durationSeconds(value: string): number {
  const unit = value.at(-1) ?? 's';
  const n = Number.parseInt(value, 10);
  const factor = { s: 1, m: 60, h: 3600, d: 86400 }[unit] ?? 1;
  return n * factor;
}
