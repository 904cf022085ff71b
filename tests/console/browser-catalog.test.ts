/**
 * The catalog browser in real Chromium: catalogs → namespace → table; the table page shows field
 * ids and nested types, the partition spec, counts, snapshots with their exact 64-bit ids, and a
 * time-travel link that opens the editor on the older snapshot and answers its rows; a preview.
 */
import t from 'tap';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startConsoleServer } from '../helpers/console.js';
import { strongPassword } from '../principals/helpers.js';

const browser = await launchChromium(t);
if (browser) {
  const { server, http, adminSql } = await startConsoleServer(t);
  await adminSql('CREATE SCHEMA sales');
  await adminSql('CREATE TABLE sales.orders (id bigint NOT NULL, placed timestamptz, total decimal(12,2), info STRUCT(a INTEGER, b VARCHAR)) PARTITIONED BY (day(placed))');
  await adminSql("INSERT INTO sales.orders VALUES (1, TIMESTAMPTZ '2024-05-01 10:00:00+00', 19.90, {'a': 1, 'b': 'x'})");
  await adminSql("INSERT INTO sales.orders VALUES (2, TIMESTAMPTZ '2024-05-02 10:00:00+00', 5.00, {'a': 2, 'b': 'y'})");
  const raw = await http.request('GET', '/v1/default/namespaces/sales/tables/orders', { token: await server.token() });
  const ids = [...raw.text.matchAll(/"snapshot-id":(\d+)/g)].map((m) => m[1]!);
  // The older snapshot is the newer one's parent.
  const parent = /"parent-snapshot-id":(\d+)/.exec(raw.text)?.[1] ?? '';
  const snapshotIds = [parent, ...new Set(ids.filter((id) => id !== parent))];
  const password = strongPassword('browser-user');
  await adminSql(`CREATE USER cat_user EMAIL 'c@example.com' PASSWORD '${password}'`);

  t.test('browse to a table and time-travel from its snapshot list', async (t) => {
    t.equal(snapshotIds.length, 2, 'two snapshots');
    const { page, context, watch } = await openPage(browser, http.url);
    t.teardown(() => context.close());
    await page.goto('/console');
    await page.getByLabel('User name').fill('cat_user');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Catalog' }).click();
    await page.getByRole('heading', { name: 'Catalogs' }).waitFor();
    await page.getByRole('main').getByRole('link', { name: 'default' }).click();
    await page.getByRole('main').getByRole('link', { name: 'sales' }).click();
    await page.getByRole('main').getByRole('link', { name: 'orders' }).click();
    await page.getByRole('heading', { name: 'Table sales.orders' }).waitFor();
    const main = page.getByRole('main');
    const text = (await main.textContent())!;
    t.match(text, /struct<a: int, b: string>/, 'nested type');
    t.match(text, /placed_day = day\(placed\)/, 'partition spec');
    for (const id of snapshotIds) t.ok(text.includes(id), `snapshot id ${id} exact`);
    const overview = await page.getByRole('table', { name: 'Overview' }).textContent();
    t.match(overview, /Rows2/, 'row count');
    t.match(overview, /Data files2/, 'file count');
    await page.getByRole('link', { name: `Query snapshot ${snapshotIds[0]}` }).click();
    await page.getByRole('heading', { name: 'SQL' }).waitFor();
    const editor = page.getByLabel('SQL script');
    t.match(await editor.inputValue(), new RegExp(`FOR VERSION AS OF ${snapshotIds[0]}`));
    await editor.press('Control+Enter');
    await page.getByText(/1 row ·/).or(page.getByRole('alert')).waitFor();
    t.equal(await page.getByRole('alert').count(), 0, String(await page.getByRole('alert').first().textContent().catch(() => '')));
    t.equal(await page.locator('.grid-scroll tbody td').first().textContent(), '1', 'the older snapshot has the first row only');

    await page.goBack();
    await page.getByRole('heading', { name: 'Table sales.orders' }).waitFor();
    await page.getByRole('button', { name: 'Preview first 100 rows' }).click();
    await page.locator('.grid-scroll tbody tr').nth(1).waitFor();
    t.equal(await page.locator('.grid-scroll tbody tr').count(), 2, 'preview shows both rows');
    t.same(watch.errors, []);
  });
}
