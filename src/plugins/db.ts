// Opens the database for the app's lifetime and decorates the repositories routes may use.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createContactResolver, type ContactResolver } from '../contacts/resolve';
import { openDatabase, openToOthers, type DB } from '../db/client';
import { createContactsRepo } from '../db/contacts-repo';
import { createAuditRepo, type AuditRepo } from '../db/audit-repo';
import { createConversationsRepo, type ConversationsRepo } from '../db/conversations-repo';
import { createCreditsRepo, type CreditsRepo } from '../db/credits-repo';
import { createIdempotencyRepo, type IdempotencyRepo } from '../db/idempotency-repo';
import { WRITER_CHECKPOINT_PAGES } from '../db/checkpoints';
import { createMessagesRepo, type MessagesRepo } from '../db/messages-repo';
import { createSessionsRepo, type SessionsRepo } from '../db/sessions-repo';
import { createUsageRepo, type UsageRepo } from '../db/usage-repo';
import { createUsersRepo, type UsersRepo } from '../db/users-repo';
import { createWebhookEventsRepo, type WebhookEventsRepo } from '../db/webhook-events-repo';
import { createWriter, type Writer } from '../db/writer';
import { createTokenCipher, resolveTokenKey, type TokenCipher } from '../support/token-cipher';
import { listedMessage, listedMessageJson } from '../views/message-json';
import { createConversationsReader, type ConversationsReader } from '../listing/conversations-reader';

declare module 'fastify' {
  interface FastifyInstance {
    db: DB;
    /** The one door for writes (group commit). */
    writer: Writer;
    usersRepo: UsersRepo;
    creditsRepo: CreditsRepo;
    messagesRepo: MessagesRepo;
    /** Identity resolution: a payload's or a send's identifiers -> the user's contact. */
    contacts: ContactResolver;
    idempotencyRepo: IdempotencyRepo;
    conversationsRepo: ConversationsRepo;
    /** Conversation listings, answered on a thread of their own. */
    conversationsReader: ConversationsReader;
    webhookEventsRepo: WebhookEventsRepo;
    /** Seals and opens messaging tokens (MESSAGING_TOKEN_KEY or the `token-key` file). */
    tokenCipher: TokenCipher;
    /** A user's stored (sealed) token opened for a send; undefined when this key cannot open it (logged once per user). */
    openMessagingToken: (sealed: string, userId: number) => string | undefined;
    sessionsRepo: SessionsRepo;
    /** Who changed what (append inside the change's write). */
    auditRepo: AuditRepo;
    /** Sends by outcome and pricing, last activity (the console). */
    usageRepo: UsageRepo;
  }
}

/** Opened messaging tokens kept in memory: several times the users a gateway serves. */
const OPENED_TOKENS_KEPT = 1000;

export default fp(async function database(app: FastifyInstance, options: { path: string; tokenKey?: string }) {
  const db = openDatabase(options.path);
  for (const entry of openToOthers(options.path)) {
    app.log.warn({ path: entry }, 'Other users of this machine can read the database files here: chmod o-rwx it (0700 for a directory, 0600 for a file)');
  }
  const tokenCipher = createTokenCipher(resolveTokenKey(options.tokenKey, options.path));
  const usersRepo = createUsersRepo(db, tokenCipher);
  const sealedNow = usersRepo.sealPlainTokens();
  if (sealedNow > 0) app.log.info({ count: sealedNow }, 'Encrypted messaging tokens that were stored in plain text');
  const unreadable = usersRepo.countUnreadableTokens();
  if (unreadable > 0) {
    app.log.error({ count: unreadable }, 'Some stored messaging tokens cannot be decrypted with this key (MESSAGING_TOKEN_KEY or the token-key file beside the database changed): '
      + 'restore the previous key, or set those users\' messaging_token again');
  }
  const warned = new Set<number>();
  app.decorate('tokenCipher', tokenCipher);
  // Opened tokens by their sealed form (a changed token is a new entry): a send does not decrypt again.
  const opened = new Map<string, string>();
  app.decorate('openMessagingToken', (sealed: string, userId: number) => {
    const known = opened.get(sealed);
    if (known !== undefined) return known;
    const token = tokenCipher.open(sealed);
    if (token !== undefined) {
      if (opened.size >= OPENED_TOKENS_KEPT) opened.clear();
      opened.set(sealed, token);
    }
    if (token === undefined && !warned.has(userId)) {
      warned.add(userId);
      app.log.error({ userId }, 'This user\'s messaging token cannot be decrypted with the current key: restore the previous key, or set the user\'s messaging_token again');
    }
    return token;
  });
  app.decorate('db', db);
  app.decorate('writer', createWriter(db.$client, {
    onHealthChange: (health) => (health.ok ? app.log.info('storage takes writes again')
      : app.log.error({ code: health.code, reason: health.reason }, 'storage refuses writes: every write answers 503 until it is fixed')),
  }));
  app.decorate('usersRepo', usersRepo);
  app.decorate('creditsRepo', createCreditsRepo(db));
  app.decorate('messagesRepo', createMessagesRepo(db, listedMessage));
  app.decorate('contacts', createContactResolver(createContactsRepo(db)));
  // Messages stored without their listed JSON (an older database, a raw import) are rendered once, here.
  app.messagesRepo.fillListedJson();
  app.decorate('idempotencyRepo', createIdempotencyRepo(db));
  app.decorate('conversationsRepo', createConversationsRepo(db, listedMessageJson));
  app.decorate('conversationsReader', createConversationsReader(options.path, app.config.timezone, app.conversationsRepo));
  // A server's first listing does not wait for the thread to start (an app only injected into starts it when it lists).
  // Its thread then runs the WAL checkpoints too: the writer's connection only checkpoints itself if they fall far behind.
  app.addHook('onListen', async () => {
    if (app.conversationsReader.warm()) db.$client.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  });
  app.decorate('webhookEventsRepo', createWebhookEventsRepo(db));
  app.decorate('sessionsRepo', createSessionsRepo(db));
  app.decorate('auditRepo', createAuditRepo(db));
  app.decorate('usageRepo', createUsageRepo(db));
  app.addHook('onClose', async () => {
    await app.conversationsReader.close();
    await app.writer.close();
    db.$client.close();
  });
}, { name: 'db' });
