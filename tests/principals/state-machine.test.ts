/**
 * Model-based test of the principal state machine: fast-check drives random statement sequences
 * against the real service (both store backends) and a reference model; after every command the
 * status and session epoch of every user, and each refusal's error code, must agree.
 */
import t from 'tap';
import fc from 'fast-check';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { Authenticated } from '../../server/auth/tokens.js';
import { onEachBackend } from '../helpers/stores.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { adminAuth, runSql, strongPassword } from './helpers.js';

type Status = 'ACTIVE' | 'INVITED' | 'SUSPENDED' | 'DEACTIVATED';

interface ModelUser {
  status: Status;
  epoch: number;
  hasPassword: boolean;
  legalHold: boolean;
  hasRole: boolean;
}

/** The reference: users by lower-case name (EXPUNGED users leave the map: their name is free). */
type Model = Map<string, ModelUser>;

interface Real {
  readonly server: TestServer;
  readonly admin: Authenticated;
  readonly store: MetaStore;
}

const NAMES = ['ann', 'ben', 'cid'] as const;
type Name = (typeof NAMES)[number];
let emailCounter = 0;

/** What a command expects: the error code, or the model change. */
type Expectation = { readonly error: string } | { readonly apply: () => void };

abstract class UserCommand implements fc.AsyncCommand<Model, Real> {
  abstract sql(): string;
  abstract expect(m: Model): Expectation;
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    const expected = this.expect(m);
    const outcome = await runSql(r.server, r.admin, this.sql());
    if ('error' in expected) {
      if (outcome.ok) throw new Error(`${this.sql()}: expected ${expected.error}, succeeded`);
      if (outcome.error.code !== expected.error) throw new Error(`${this.sql()}: expected ${expected.error}, got ${outcome.error.code}: ${outcome.error.message}`);
    } else {
      if (!outcome.ok) throw new Error(`${this.sql()}: expected success, got ${outcome.error.code}: ${outcome.error.message}`);
      expected.apply();
    }
    await compare(m, r, this.sql());
  }
  toString(): string {
    return this.sql();
  }
}

async function compare(m: Model, r: Real, after: string): Promise<void> {
  const rows = (await r.store.query<{ name: string; status: string; session_epoch: number | string; legal_hold: boolean }>(
    "SELECT lower(name) AS name, status, session_epoch, legal_hold FROM principals WHERE tenant_id = 'default' AND kind = 'user' AND status <> 'EXPUNGED'")).rows;
  const real = new Map(rows.map((x) => [x.name, x]));
  if (real.size !== m.size) throw new Error(`after ${after}: ${real.size} users, model has ${m.size}`);
  for (const [name, u] of m) {
    const x = real.get(name);
    if (!x) throw new Error(`after ${after}: ${name} missing`);
    if (x.status !== u.status) throw new Error(`after ${after}: ${name} is ${x.status}, model says ${u.status}`);
    if (Number(x.session_epoch) !== u.epoch) throw new Error(`after ${after}: ${name} epoch ${x.session_epoch}, model says ${u.epoch}`);
    if (x.legal_hold !== u.legalHold) throw new Error(`after ${after}: ${name} legal_hold ${x.legal_hold}`);
  }
}

const get = (m: Model, n: string): ModelUser | undefined => m.get(n);

class CreateUser extends UserCommand {
  constructor(readonly name: Name, readonly withPassword: boolean) { super(); }
  sql(): string {
    emailCounter++;
    return `CREATE USER ${this.name} EMAIL='${this.name}${emailCounter}@example.com'${this.withPassword ? ` PASSWORD '${strongPassword('m')}'` : ''}`;
  }
  expect(m: Model): Expectation {
    if (m.has(this.name)) return { error: 'DUPLICATE_OBJECT' };
    return { apply: () => m.set(this.name, { status: this.withPassword ? 'ACTIVE' : 'INVITED', epoch: 0, hasPassword: this.withPassword, legalHold: false, hasRole: false }) };
  }
}

class Suspend extends UserCommand {
  constructor(readonly name: Name) { super(); }
  sql(): string { return `ALTER USER ${this.name} SUSPEND`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    if (u.status === 'DEACTIVATED') return { error: 'INVALID_STATE' };
    return { apply: () => { u.status = 'SUSPENDED'; u.epoch++; } };
  }
}

class Unsuspend extends UserCommand {
  constructor(readonly name: Name) { super(); }
  sql(): string { return `ALTER USER ${this.name} UNSUSPEND`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    if (u.status !== 'SUSPENDED') return { error: 'INVALID_STATE' };
    return { apply: () => { u.status = u.hasPassword ? 'ACTIVE' : 'INVITED'; } };
  }
}

class Drop extends UserCommand {
  constructor(readonly name: Name, readonly cascade: boolean) { super(); }
  sql(): string { return `DROP USER ${this.name}${this.cascade ? ' CASCADE' : ''}`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    if (u.status === 'DEACTIVATED') return { error: 'INVALID_STATE' };
    if (u.hasRole && !this.cascade) return { error: 'OBJECT_IN_USE' };
    return { apply: () => { u.status = 'DEACTIVATED'; u.epoch++; u.hasRole = false; } };
  }
}

class Undrop extends UserCommand {
  constructor(readonly name: Name) { super(); }
  sql(): string { return `UNDROP USER ${this.name}`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    if (u.status !== 'DEACTIVATED') return { error: 'INVALID_STATE' };
    return { apply: () => { u.status = 'ACTIVE'; } };
  }
}

class Expunge extends UserCommand {
  constructor(readonly name: Name) { super(); }
  sql(): string { return `EXPUNGE USER ${this.name} REASON 'erasure request'`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    if (u.status !== 'DEACTIVATED') return { error: 'INVALID_STATE' };
    if (u.legalHold) return { error: 'LegalHoldActive' };
    return { apply: () => { m.delete(this.name); } };
  }
}

class LegalHold extends UserCommand {
  constructor(readonly name: Name, readonly on: boolean) { super(); }
  sql(): string { return this.on ? `ALTER USER ${this.name} SET LEGAL HOLD REASON 'case 42'` : `ALTER USER ${this.name} CLEAR LEGAL HOLD`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    return { apply: () => { u.legalHold = this.on; } };
  }
}

class GrantRole extends UserCommand {
  constructor(readonly name: Name, readonly grant: boolean) { super(); }
  sql(): string { return this.grant ? `GRANT ROLE analyst TO USER ${this.name}` : `REVOKE ROLE analyst FROM USER ${this.name}`; }
  expect(m: Model): Expectation {
    const u = get(m, this.name);
    if (!u) return { error: 'NOT_FOUND' };
    if (this.grant && u.status === 'DEACTIVATED') return { error: 'INVALID_STATE' };
    return { apply: () => { u.hasRole = this.grant; } };
  }
}

class Rename extends UserCommand {
  constructor(readonly from: Name, readonly to: Name) { super(); }
  sql(): string { return `ALTER USER ${this.from} RENAME TO ${this.to}`; }
  expect(m: Model): Expectation {
    const u = get(m, this.from);
    if (!u) return { error: 'NOT_FOUND' };
    if (u.status === 'DEACTIVATED') return { error: 'INVALID_STATE' };
    if (this.to !== this.from && m.has(this.to)) return { error: 'DUPLICATE_OBJECT' };
    return { apply: () => { m.delete(this.from); m.set(this.to, u); u.epoch++; } };
  }
}

class Unlock extends UserCommand {
  constructor(readonly name: Name) { super(); }
  sql(): string { return `ALTER USER ${this.name} UNLOCK`; }
  expect(m: Model): Expectation {
    return m.has(this.name) ? { apply: () => undefined } : { error: 'NOT_FOUND' };
  }
}

const name = fc.constantFrom(...NAMES);
const commands = [
  fc.tuple(name, fc.boolean(), fc.nat(9)).map(([n, p, roll]) => new CreateUser(n, p && roll < 3)),
  name.map((n) => new Suspend(n)),
  name.map((n) => new Unsuspend(n)),
  fc.tuple(name, fc.boolean()).map(([n, c]) => new Drop(n, c)),
  name.map((n) => new Undrop(n)),
  name.map((n) => new Expunge(n)),
  fc.tuple(name, fc.boolean()).map(([n, on]) => new LegalHold(n, on)),
  fc.tuple(name, fc.boolean()).map(([n, g]) => new GrantRole(n, g)),
  fc.tuple(name, name).map(([a, b]) => new Rename(a, b)),
  name.map((n) => new Unlock(n)),
];

t.test('principal state machine agrees with the reference model', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const server = await startTestServer(store, { keepStore: true, config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false } }) });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    const r0 = await runSql(server, admin, 'CREATE ROLE analyst');
    t.ok(r0.ok);
    let runs = 0;
    await fc.assert(fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (cmds) => {
      runs++;
      // Each run starts from no users: tombstone whatever the previous run left.
      await store.query("UPDATE principals SET status = 'EXPUNGED', name = 'gone-' || id::text, email = NULL WHERE kind = 'user' AND status <> 'EXPUNGED'");
      await store.query("DELETE FROM principal_roles WHERE role = 'analyst'");
      await fc.asyncModelRun(() => ({ model: new Map() as Model, real: { server, admin, store } }), cmds);
    }), { numRuns: 20, seed: Number(process.env.FLOE_TEST_SEED ?? Date.now() % 100000), verbose: 1 });
    t.equal(runs >= 20, true, `${runs} runs`);
  });
});
