// Liveness, readiness, the 404 shape and the request id.
import t from 'tap';
import { databaseAnswers } from '../src/db/client';
import { buildTestApp } from './helper';

t.test('GET /healthz answers ok with a request id', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/healthz' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'ok' });
  t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/);
});

t.test('GET /readyz is 200 while the database answers, 503 once it is closed', async (t) => {
  const { app } = await buildTestApp(t);
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  t.equal(databaseAnswers(app.db), true);
  app.db.$client.close();
  t.equal(databaseAnswers(app.db), false);
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.same(res.json(), { statusCode: 503, code: 'DATABASE_UNAVAILABLE', error: 'Service Unavailable', message: 'The database does not answer' });
});

t.test('an unknown route gets the error shape', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/nope' });
  t.equal(res.statusCode, 404);
  t.same(res.json(), { statusCode: 404, code: 'ROUTE_NOT_FOUND', error: 'Not Found', message: 'Route GET /nope not found' });
});

t.test('a caller-supplied plain request id is echoed', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
  t.equal(res.headers['x-request-id'], 'abc-123');
});
