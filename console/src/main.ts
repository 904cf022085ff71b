/** The console's entry point (bundled into /console/assets/app.js). */
import { ConsoleApp, type Page } from './app.js';
import { accountPage } from './pages/account.js';
import { adminPage } from './pages/admin.js';
import { catalogPage } from './pages/catalog.js';
import { historyPage } from './pages/history.js';
import { invitationPage, signInPage } from './pages/sign-in.js';
import { newWorkspace, sqlPage } from './pages/sql.js';

const root = document.getElementById('app');
if (!root) throw new Error('the console page has no #app element');
const pages = new Map<string, Page>([
  ['sql', sqlPage(newWorkspace())],
  ['history', historyPage],
  ['catalog', catalogPage],
  ['admin', adminPage],
  ['account', accountPage],
]);
let app: ConsoleApp | undefined = undefined;
app = new ConsoleApp(root, pages, signInPage(() => app?.takeNotice()), [
  { route: 'sql', label: 'SQL' },
  { route: 'history', label: 'History' },
  { route: 'catalog', label: 'Catalog' },
  { route: 'admin', label: 'Administration' },
  { route: 'account', label: 'Account' },
], invitationPage);
void app.render();
