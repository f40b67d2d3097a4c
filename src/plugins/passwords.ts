// Decorates the app's PasswordHasher: every password hashed or verified while serving requests goes through it.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createPasswordHasher, type HashSlots, type PasswordHasher } from '../services/passwords';

declare module 'fastify' {
  interface FastifyInstance {
    /** argon2id bounded to a few hashes at once (503 BUSY past the wait). */
    passwords: PasswordHasher;
  }
}

export default fp(async function passwords(app: FastifyInstance, options: HashSlots) {
  app.decorate('passwords', createPasswordHasher(options));
}, { name: 'passwords' });
