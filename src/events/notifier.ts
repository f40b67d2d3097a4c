// In-process notifier of the event log: told after each commit which users got events, it wakes their long polls,
// streams and deliveries. No database polling, no HTTP.

export type Listener = () => void;

export function createNotifier() {
  const listeners = new Map<number, Set<Listener>>();
  const everyUser = new Set<(userId: number) => void>();

  return {
    /** Calls `listener` whenever `userId` gets new events; returns the unsubscribe function. */
    subscribe(userId: number, listener: Listener): () => void {
      let set = listeners.get(userId);
      if (!set) listeners.set(userId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(userId) === set) listeners.delete(userId);
      };
    },
    /** Told of every user that gets events (the deliverer). */
    subscribeAll(listener: (userId: number) => void): () => void {
      everyUser.add(listener);
      return () => everyUser.delete(listener);
    },
    /** Resolves when `userId` gets an event, or after `ms`, or when `signal` aborts; true when woken by an event. */
    wait(userId: number, ms: number, signal?: AbortSignal): Promise<boolean> {
      return new Promise((resolve) => {
        const done = (woken: boolean) => {
          clearTimeout(timer);
          unsubscribe();
          signal?.removeEventListener('abort', aborted);
          resolve(woken);
        };
        const aborted = () => done(false);
        const unsubscribe = this.subscribe(userId, () => done(true));
        const timer = setTimeout(() => done(false), ms);
        signal?.addEventListener('abort', aborted, { once: true });
        if (signal?.aborted) done(false);
      });
    },
    /** Wakes the listeners of these users (after a commit). */
    notify(userIds: readonly number[]): void {
      for (const userId of userIds) {
        for (const listener of [...(listeners.get(userId) ?? [])]) listener();
        for (const listener of everyUser) listener(userId);
      }
    },
    /** Listeners now, for metrics and tests. */
    size: (): number => [...listeners.values()].reduce((n, set) => n + set.size, 0),
  };
}
export type Notifier = ReturnType<typeof createNotifier>;
