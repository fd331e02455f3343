/** SSO for teams that require it: re-authentication tickets, and the gate that `/v2` and `/mcp` call. */
import { type Account, type Principal, ServiceError, type SsoGate, type User } from "./context.js";
import { newSecret } from "./ids.js";
import type { Store } from "./store.js";

const TICKET_TTL_MS = 15 * 60 * 1000;

export interface SsoTicket {
  id: string;
  subject: string;
  account: string;
  /** The person the credential belongs to, when known (OAuth); only they may complete it. */
  userId?: string;
  expiresAt: number;
}

export class SsoTickets implements SsoGate {
  /** Tickets live in memory only: an expired or forgotten one just means asking for a fresh link. */
  readonly #tickets = new Map<string, SsoTicket>();

  constructor(
    private readonly store: Store,
    private readonly accounts: ReadonlyMap<string, Account>,
    private readonly baseUrl: () => string,
    private readonly now: () => number = Date.now,
  ) {}

  assertVerified(principal: Principal): void {
    const account = this.accounts.get(principal.account);
    if (!account?.requiresSso || this.store.isSsoVerified(principal.subject)) return;
    const ticket = this.#ticketFor(principal);
    throw new ServiceError(
      "sso_required",
      `The team ${account.slug} requires SSO. Open reauthUrl in a browser, complete SSO, then retry the request.`,
      { reauthUrl: `${this.baseUrl()}/sso/reauth?ticket=${encodeURIComponent(ticket.id)}` },
    );
  }

  /** The live ticket with this id, or undefined. */
  ticket(id: string): SsoTicket | undefined {
    const ticket = this.#tickets.get(id);
    if (ticket && ticket.expiresAt > this.now()) return ticket;
    this.#tickets.delete(id);
    return undefined;
  }

  /** Marks the ticket's subject as verified when `user` is a member of its team (and its person, when known). */
  complete(id: string, user: User): "completed" | "unknown-ticket" | "not-allowed" {
    const ticket = this.ticket(id);
    if (!ticket) return "unknown-ticket";
    // Only a member of its team, and its person when known.
    if (!user.memberOf.includes(ticket.account) || (ticket.userId ?? user.id) !== user.id)
      return "not-allowed";
    this.store.markSsoVerified(ticket.subject);
    this.#tickets.delete(id);
    return "completed";
  }

  #ticketFor(principal: Principal): SsoTicket {
    const now = this.now();
    for (const [id, ticket] of this.#tickets) {
      if (ticket.expiresAt <= now) this.#tickets.delete(id);
      else if (ticket.subject === principal.subject) return ticket;
    }
    const ticket: SsoTicket = {
      id: newSecret(),
      subject: principal.subject,
      account: principal.account,
      ...(principal.userId ? { userId: principal.userId } : {}),
      expiresAt: now + TICKET_TTL_MS,
    };
    this.#tickets.set(ticket.id, ticket);
    return ticket;
  }
}
