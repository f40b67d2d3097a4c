// The request logger made only when the request logs: what it writes is what a pino child writes (bindings, levels,
// redaction), and the gateway's requests still log with their request id.
import Fastify from 'fastify';
import { Writable } from 'node:stream';
import t from 'tap';
import { LazyChildLogger, type ParentLogger } from '../src/support/lazy-logger';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(JSON.parse(chunk.toString())); done(); } });
  const app = Fastify({ logger: { level: 'warn', stream, redact: ['*.password'] } });
  return { lines, parent: app.log as ParentLogger };
}

t.test('below the level nothing is written; at it, the line carries the bindings and the redaction', async (t) => {
  const { lines, parent } = capture();
  const log = new LazyChildLogger(parent, { reqId: 'req-1' }, {});
  log.info({ user: { password: 'p' } }, 'not written');
  log.debug('nor this');
  t.same(lines, []);
  t.equal(log.level, 'warn', 'the level is the parent’s');
  log.warn({ user: { password: 'secret', name: 'ana' } }, 'written');
  t.match(lines, [{ level: 40, reqId: 'req-1', msg: 'written', user: { password: '[Redacted]', name: 'ana' } }]);
  t.notOk(JSON.stringify(lines).includes('secret'));
  log.error(new Error('boom'));
  t.match(lines[1], { level: 50, reqId: 'req-1', err: { message: 'boom' } });
});

t.test('a level set on it, or given by the route, applies to it alone', async (t) => {
  const { lines, parent } = capture();
  const log = new LazyChildLogger(parent, { reqId: 'req-2' }, {});
  log.level = 'info';
  log.info('now written');
  t.match(lines, [{ level: 30, reqId: 'req-2', msg: 'now written' }]);
  const routed = new LazyChildLogger(parent, { reqId: 'req-3' }, { level: 'debug' });
  t.equal(routed.level, 'debug');
  routed.debug('debug of this route');
  t.match(lines[1], { level: 20, reqId: 'req-3' });
  new LazyChildLogger(parent, { reqId: 'req-4' }, {}).info('the parent stays at warn');
  t.equal(lines.length, 2);
});

t.test('its children keep its bindings and add theirs', async (t) => {
  const { lines, parent } = capture();
  new LazyChildLogger(parent, { reqId: 'req-5' }, {}).child({ job: 'x' }).warn('from a child');
  t.match(lines, [{ reqId: 'req-5', job: 'x', msg: 'from a child' }]);
});
