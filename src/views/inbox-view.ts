// A user's own pages (/inbox): the administrator's thread model with its links moved under /inbox.
import type { ThreadPage } from './thread-view';

/** `href` if it starts the administrator's thread URL of `userId`, moved to `/inbox` (query kept); else unchanged. */
export function inboxHref(href: string, userId: number): string {
  const from = `/admin/user/${userId}/conversation-thread`;
  return href === from || href.startsWith(`${from}?`) ? `/inbox${href.slice(from.length)}` : href;
}

/** The same page, every filter, contact and "show all" link pointing at /inbox. */
export function inboxThreadPage(page: ThreadPage, userId: number): ThreadPage {
  const move = <T extends { href: string }>(link: T): T => ({ ...link, href: inboxHref(link.href, userId) });
  return {
    ...page,
    selfHref: inboxHref(page.selfHref, userId),
    periods: page.periods.map(move), types: page.types.map(move), contacts: page.contacts.map(move),
    clearHref: inboxHref(page.clearHref, userId),
  };
}
