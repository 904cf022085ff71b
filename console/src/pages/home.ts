/** The landing page after sign-in until the SQL editor exists: who you are. */
import { h } from '../dom.js';
import type { Page } from '../app.js';

export const homePage: Page = {
  title: 'Home',
  render(ctx) {
    const s = ctx.api.session!;
    return h('section', { class: 'card' }, h('h1', {}, 'Welcome'), h('p', {}, `Signed in as ${s.username} in tenant ${s.tenant}.`));
  },
};
