/**
 * Stages end to end on both store backends: CREATE/DROP/SHOW STAGES, LIST and REMOVE with
 * PATTERN, the user's own stage, USAGE grants to users and roles, and the refusals: another user's
 * stage, path escapes, a URL outside the catalog's stage area.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { Floe } from '../../index.js';
import { floeErrorOf } from '../helpers/floe-error.js';
import type { QueryPrincipal } from '../../engine/session/query-service.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { onEachBackend } from '../helpers/stores.js';

await onEachBackend(t, async (t, store) => {
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;
  const failure = (p: Promise<unknown>) => floeErrorOf(p);
  const principalOf = async (name: string, roles: string[] = []): Promise<QueryPrincipal> => {
    const id = (await store.query<{ id: string }>('SELECT id FROM principals WHERE name = $1', [name])).rows[0]!.id;
    return { tenantId: 'default', principalId: id, name, kind: 'user', authMethod: 'password', scopeClaim: 'sql', roles, isTenantAdmin: false, amr: ['pwd'], authTime: 0, defaultWarehouse: null };
  };
  const as = (p: QueryPrincipal) => (text: string) => floe.state.queries.execute(p, { sql: text });
  const admin = { tenantId: 'default', principalId: 'x', roles: ['tenant_admin'] };
  /** Puts a file into a stage directly through the catalog's FileIO (uploads come with the presign endpoints). */
  const put = async (stageUrl: string, key: string, text: string) => {
    const io = await floe.state.catalog.fileIOFor(admin, 'default');
    await io.write(stageUrl + key, Buffer.from(text), { overwrite: true });
  };
  const urlOf = async (name: string) => (await rows('SHOW STAGES')).find((r) => r[0] === name)![2] as string;

  await t.test('CREATE, SHOW, LIST with PATTERN, REMOVE, DROP', async (t) => {
    t.same((await sql("CREATE STAGE raw FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1) COMMENT = 'landing'")).rows, [['stage raw created']]);
    t.same((await sql('CREATE STAGE IF NOT EXISTS raw')).rows, [['stage raw already exists']]);
    t.match(await failure(sql('CREATE STAGE raw')), { code: 'DUPLICATE_OBJECT' });
    const shown = await rows('SHOW STAGES');
    t.equal(shown.length, 1);
    t.match(shown[0], ['raw', 'default', /\/warehouse\/stages\/[0-9a-f-]{36}\/$/, "TYPE = 'CSV', SKIP_HEADER = 1", String, 'landing', String]);
    t.same(await rows("SHOW STAGES LIKE 'x%'"), []);
    const url = await urlOf('raw');
    await put(url, '2024/a.csv', 'id\n1\n');
    await put(url, '2024/b.csv.gz', 'x');
    await put(url, 'top.json', '{}');
    t.same((await rows('LIST @raw')).map((r) => [r[0], r[1]]), [['raw/2024/a.csv', 5], ['raw/2024/b.csv.gz', 1], ['raw/top.json', 2]]);
    t.same((await rows('LIST @raw/2024/')).map((r) => r[0]), ['raw/2024/a.csv', 'raw/2024/b.csv.gz']);
    t.same((await rows("LS @raw PATTERN = '.*[.]csv'")).map((r) => r[0]), ['raw/2024/a.csv']);
    t.same((await rows("LIST @RAW PATTERN = '2024/.*'")).length, 2, 'an unquoted stage name is case-insensitive');
    t.same(await rows("REMOVE @raw PATTERN = '.*gz'"), [['raw/2024/b.csv.gz', 'removed']]);
    t.same((await rows('LIST @raw')).map((r) => r[0]), ['raw/2024/a.csv', 'raw/top.json']);
    t.same(await rows('RM @raw/top.json'), [['raw/top.json', 'removed']]);
    t.match(await failure(sql("LIST @raw PATTERN = '(['")), { code: 'INVALID_PARAMETER' });
    t.same((await sql('DROP STAGE raw')).rows, [['stage raw dropped']]);
    t.notOk(existsSync(resolveLocalPath(url)), 'the stage folder is gone with the stage');
    t.match(await failure(sql('LIST @raw')), { code: 'NOT_FOUND' });
    t.match(await failure(sql('DROP STAGE raw')), { code: 'NOT_FOUND' });
    t.same((await sql('DROP STAGE IF EXISTS raw')).rows, [['stage raw does not exist']]);
  });

  await t.test('URL must name a folder under the catalog\'s stage area', async (t) => {
    await sql('CREATE STAGE base');
    const url = await urlOf('base');
    const area = url.slice(0, url.indexOf('/stages/') + '/stages/'.length);
    await sql(`CREATE STAGE landing URL = '${area}landing/2024'`);
    t.equal(await urlOf('landing'), `${area}landing/2024/`);
    t.match(await failure(sql(`CREATE STAGE s1 URL = '${area}landing/'`)), { code: 'INVALID_PARAMETER', message: /overlaps/ });
    t.match(await failure(sql(`CREATE STAGE s2 URL = '${area.slice(0, -'stages/'.length)}'`)), { code: 'INVALID_PARAMETER', message: /stage area/ });
    t.match(await failure(sql(`CREATE STAGE s3 URL = '${area}../x/'`)), { code: 'INVALID_PARAMETER' });
    t.match(await failure(sql(`CREATE STAGE s4 URL = '${area}users/x/'`)), { code: 'INVALID_PARAMETER' });
    t.match(await failure(sql("CREATE STAGE s5 URL = 'file:///etc/'")), { code: 'INVALID_PARAMETER' });
    t.match(await failure(sql(`CREATE STAGE s6 URL = '${area}a%2f..%2fb/'`)), { code: 'INVALID_PARAMETER' });
    await sql('DROP STAGE landing');
    await sql('DROP STAGE base');
  });

  await t.test('paths cannot leave the stage', async (t) => {
    await sql('CREATE STAGE p');
    for (const bad of ['@p/../x', '@p/a/../../b', '@p/a//b', '@p/%2e%2e/x', '@p/a%2Fb', '@~/../other']) {
      t.match(await failure(sql(`LIST ${bad}`)), { code: 'INVALID_PARAMETER' }, `LIST ${bad}`);
      t.match(await failure(sql(`REMOVE ${bad}`)), { code: 'INVALID_PARAMETER' }, `REMOVE ${bad}`);
    }
    t.match(await failure(sql('LIST @%t')), { code: 'UNSUPPORTED_STATEMENT' }, 'table stages are not supported');
    await sql('DROP STAGE p');
  });

  await t.test('USAGE: owner, tenant_admin, grants to users and roles; the user stage is private', async (t) => {
    await sql("CREATE USER alice EMAIL = 'alice@example.com'");
    await sql("CREATE USER bob EMAIL = 'bob@example.com'");
    await sql('CREATE ROLE loaders');
    const alice = as(await principalOf('alice'));
    const bob = as(await principalOf('bob'));
    const bobLoader = as(await principalOf('bob', ['loaders']));
    t.same((await alice('CREATE STAGE alices')).rows, [['stage alices created']]);
    const url = await urlOf('alices');
    await put(url, 'f.csv', 'a\n');
    t.same((await alice('LIST @alices')).rows.length, 1, 'the owner');
    t.same((await sql('LIST @alices')).rows.length, 1, 'tenant_admin');
    t.match(await failure(bob('LIST @alices')), { code: 'PERMISSION_DENIED', sqlState: '42501' });
    t.match(await failure(bob('REMOVE @alices/f.csv')), { code: 'PERMISSION_DENIED' });
    t.same((await bob('SHOW STAGES')).rows, [], 'SHOW STAGES lists only usable stages');
    t.match(await failure(bob('GRANT USAGE ON STAGE alices TO USER bob')), { code: 'PERMISSION_DENIED' }, 'no self-grants');
    t.match(await failure(bob('DROP STAGE alices')), { code: 'PERMISSION_DENIED' });
    await alice('GRANT USAGE ON STAGE alices TO USER bob');
    t.same((await bob('LIST @alices')).rows.length, 1, 'granted to the user');
    t.same((await bob('SHOW STAGES')).rows.map((r) => r[0]), ['alices']);
    await alice('REVOKE USAGE ON STAGE alices FROM USER bob');
    t.match(await failure(bob('LIST @alices')), { code: 'PERMISSION_DENIED' }, 'revoked');
    await alice('GRANT USAGE ON STAGE alices TO ROLE loaders');
    t.same((await bobLoader('LIST @alices')).rows.length, 1, 'granted to a role bob holds');
    t.match(await failure(bob('LIST @alices')), { code: 'PERMISSION_DENIED' }, 'not without the role');
    t.match(await failure(alice('GRANT USAGE ON STAGE alices TO ROLE nobody')), { code: 'NOT_FOUND' });

    // The user stage: each user's own folder, nobody else's.
    const aliceP = await principalOf('alice');
    const bobP = await principalOf('bob');
    const userUrl = (id: string) => `${url.slice(0, url.indexOf('/stages/') + '/stages/'.length)}users/${id}/`;
    await put(userUrl(aliceP.principalId), 'mine.csv', 'x\n');
    t.same((await alice('LIST @~')).rows.map((r) => r[0]), ['~/mine.csv']);
    t.same((await bob('LIST @~')).rows, [], "bob's @~ is his own");
    t.same((await sql('LIST @~')).rows, [], "the administrator's @~ too");
    await put(userUrl(bobP.principalId), 'b.csv', 'x\n');
    t.same((await alice('REMOVE @~')).rows, [['~/mine.csv', 'removed']]);
    t.same((await bob('LIST @~')).rows.map((r) => r[0]), ['~/b.csv'], "alice's REMOVE @~ did not reach bob's");
    await alice('DROP STAGE alices');
  });
});
