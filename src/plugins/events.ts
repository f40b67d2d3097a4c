// The event feed's infrastructure: the log's repositories, the notifier woken after each commit, the stream hub, API
// keys, and the metrics they feed. Routes and the deliverer use what it decorates.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createApiKeysRepo, type ApiKeysRepo } from '../db/api-keys-repo';
import { createEventsRepo, eventLogOf, type EventsRepo } from '../db/events-repo';
import { createNotifier, type Notifier } from '../events/notifier';
import { createStreamHub, type StreamCredential, type StreamHub } from '../events/stream-hub';
import { createEventEndpointsRepo, type EventEndpointsRepo } from '../db/event-endpoints-repo';
import { createAddressPolicy, type AddressPolicy, type Resolve } from '../events/endpoint-address';
import { createEndpointClient } from '../events/endpoint-client';
import { createEventDeliveries, type DeliveryOutcome, type EventDeliveries } from '../jobs/event-deliveries';
import { runForAppLifetime } from './background-job';

declare module 'fastify' {
  interface FastifyInstance {
    eventsRepo: EventsRepo;
    apiKeysRepo: ApiKeysRepo;
    /** Wakes long polls, streams and deliveries once events commit. */
    eventNotifier: Notifier;
    eventStreams: StreamHub;
    eventEndpointsRepo: EventEndpointsRepo;
    /** Which endpoint URLs and addresses are allowed (at save and at connect time). */
    endpointAddresses: AddressPolicy;
    eventDeliveries: EventDeliveries;
  }
}

export interface EventsPluginOptions {
  /** Seconds between the comment lines that keep a stream open through proxies (tests shrink it). */
  heartbeatMs?: number;
  /** Unsent bytes after which a stream that does not read is cut off. */
  streamMaxBufferedBytes?: number;
  /** Resolves endpoint host names (tests inject a resolver whose answers they control). */
  resolve?: Resolve;
  /** A delivery's time limit (10 s). */
  deliveryTimeoutMs?: number;
  /** The backoff's jitter source, 0 ≤ x < 1. */
  random?: () => number;
  /** Told of each delivery attempt's outcome (metrics). */
  deliveryCounted?: (outcome: DeliveryOutcome) => void;
}


export default fp(async function events(app: FastifyInstance, options: EventsPluginOptions) {
  const log = eventLogOf(app.db.$client);
  log.setClock(app.now);
  const notifier = createNotifier();
  app.writer.afterCommit(() => {
    const users = log.takeTouched();
    if (users.length > 0) notifier.notify(users);
  });
  app.decorate('eventsRepo', createEventsRepo(app.db));
  app.decorate('apiKeysRepo', createApiKeysRepo(app.db));
  app.decorate('eventNotifier', notifier);

  function stillValid(credential: StreamCredential): boolean {
    const user = app.usersRepo.findById(credential.callerId);
    if (!user || !user.isActive) return false;
    if (credential.keyId !== undefined) return app.apiKeysRepo.exists(credential.keyId);
    if (credential.jti === undefined || credential.ver !== user.tokenVersion) return false;
    return !app.sessionsRepo.isRevoked(credential.jti);
  }
  const hub = createStreamHub({
    events: app.eventsRepo, notifier, stillValid, maxPerUser: app.config.eventStreamsPerUser,
    maxBufferedBytes: options.streamMaxBufferedBytes ?? 1024 * 1024, heartbeatMs: options.heartbeatMs ?? 15_000,
  });
  app.decorate('eventStreams', hub);
  const addresses = createAddressPolicy({
    allowHttp: app.config.eventEndpointsAllowHttp, allowedCidrs: app.config.eventEndpointsAllowedCidrs, resolve: options.resolve,
  });
  app.decorate('endpointAddresses', addresses);
  app.decorate('eventEndpointsRepo', createEventEndpointsRepo(app.db));
  const client = createEndpointClient({ policy: addresses, timeoutMs: options.deliveryTimeoutMs ?? 10_000, now: () => app.now().getTime() });
  const deliveries = createEventDeliveries({
    writer: app.writer, endpoints: app.eventEndpointsRepo, events: app.eventsRepo, client, notifier,
    openSecret: (sealed) => app.tokenCipher.open(sealed), now: app.now, random: options.random, log: app.log,
    // Metrics register after this plugin: looked up when an attempt ends.
    counted: (outcome) => {
      options.deliveryCounted?.(outcome);
      app.metrics?.deliveryOutcome(outcome);
    },
  });
  app.decorate('eventDeliveries', deliveries);
  runForAppLifetime(app, 'onReady', deliveries);
  app.addHook('onClose', async () => client.close());
  // Open streams would keep the server from closing.
  app.addHook('preClose', async () => hub.stop());
}, { name: 'events', dependencies: ['db'] });
