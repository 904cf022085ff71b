/**
 * The console's shell: who is signed in, the navigation, and which page the URL's fragment names
 * (`#/sql`, `#/history`, `#/catalog/...`). Routing by fragment keeps every page at one URL the
 * server serves (`/console`), and a reload (which forgets the in-memory token) lands on sign-in.
 */
import { Api } from './api.js';
import { h, replaceChildren, type Child } from './dom.js';

/** What a page gets: the API client, the route's remaining path segments and query, navigation. */
export interface PageContext {
  readonly api: Api;
  readonly path: readonly string[];
  readonly params: URLSearchParams;
  navigate(hash: string): void;
  /** Re-renders the current route (after sign-in, or when a page changed what the shell shows). */
  refresh(): void;
}

export interface Page {
  readonly title: string;
  render(ctx: PageContext): Child | Promise<Child>;
}

export interface NavItem { readonly route: string; readonly label: string }

export class ConsoleApp {
  readonly api = new Api();
  #notice: string | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly pages: ReadonlyMap<string, Page>,
    private readonly signInPage: Page,
    private readonly nav: readonly NavItem[],
    private readonly invitationPage: (token: string) => Page,
  ) {
    this.api.onSignedOut = (reason) => {
      this.#notice = `Signed out: ${reason}`;
      this.navigate('#/sign-in');
    };
    window.addEventListener('hashchange', () => void this.render());
  }

  navigate(hash: string): void {
    if (location.hash === hash) void this.render();
    else location.hash = hash;
  }

  /** A one-time message for the sign-in page (why the console signed out). */
  takeNotice(): string | undefined {
    const n = this.#notice;
    this.#notice = undefined;
    return n;
  }

  async render(): Promise<void> {
    const raw = location.hash.replace(/^#\/?/, '');
    const [pathPart = '', query = ''] = raw.split('?');
    const segments = pathPart.split('/').filter((s) => s.length > 0).map(decodeURIComponent);
    const params = new URLSearchParams(query);
    const session = this.api.session;
    // Without a session (or with a token restricted to setting a password or a second factor),
    // only the sign-in flow renders, whatever the fragment says.
    const route = segments[0] ?? '';
    // An invitation link (`/invite#token=…` → `/console#token=…`) opens the set-password page.
    const invitation = /^#token=([^&]+)/.exec(location.hash);
    const page = invitation ? this.invitationPage(decodeURIComponent(invitation[1]!))
      : !session || session.restriction || route === 'sign-in' ? this.signInPage : this.pages.get(route) ?? this.pages.get('sql')!;
    const bare = page === this.signInPage || invitation !== null;
    const ctx: PageContext = {
      api: this.api, path: bare ? segments : segments.slice(1), params,
      navigate: (hash) => this.navigate(hash), refresh: () => void this.render(),
    };
    const main = h('main', { id: 'main', tabindex: '-1' });
    replaceChildren(this.root,
      h('a', { class: 'skip', href: '#main', onclick: (e: Event) => { e.preventDefault(); main.focus(); } }, 'Skip to content'),
      this.header(bare ? undefined : route),
      main);
    document.title = `${page.title} · Floe console`;
    try {
      replaceChildren(main, await page.render(ctx));
      // A page names the field to start in; focus moves there once the page is in the document.
      main.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    } catch (e) {
      replaceChildren(main, h('div', { class: 'alert error', role: 'alert' }, (e as Error).message));
    }
  }

  private header(active: string | undefined): HTMLElement {
    const session = this.api.session;
    const signedIn = session && !session.restriction && active !== undefined;
    return h('header', { class: 'top' },
      h('span', { class: 'brand' }, 'Floe'),
      signedIn ? h('nav', { 'aria-label': 'Main' }, h('ul', {}, this.nav.map((n) =>
        h('li', {}, h('a', { href: `#/${n.route}`, ...(n.route === active ? { 'aria-current': 'page' } : {}) }, n.label))))) : null,
      signedIn ? h('span', { class: 'who' }, `${session.username} @ ${session.tenant}`,
        h('button', { type: 'button', class: 'link', onclick: () => { this.api.signOut(); this.navigate('#/sign-in'); } }, 'Sign out')) : null);
  }
}
