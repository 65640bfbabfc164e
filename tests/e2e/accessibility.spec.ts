// Accessibility: names, landmarks and headings, the keyboard (tabs, dialogs, visible focus), inline errors,
// the charts' text alternatives, colour contrast in both schemes, reduced motion.
import type { Page } from '@playwright/test';
import { expect, jobDone, open, openTab, setField, test, unlabelled } from './helpers.js';

/** Controls in the accessibility tree whose name is empty or has no letter ("1", "↓"): role, name and HTML. */
async function badNames(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const roles = new Set([
    'button',
    'link',
    'combobox',
    'listbox',
    'textbox',
    'searchbox',
    'spinbutton',
    'checkbox',
    'radio',
    'switch',
    'slider',
    'tab',
    'menuitem',
    'dialog',
    'tablist',
    'tabpanel',
    'img',
  ]);
  const bad: string[] = [];
  for (const n of nodes) {
    const role = String(n.role?.value ?? '');
    if (n.ignored || !roles.has(role)) continue;
    const name = String(n.name?.value ?? '').trim();
    if (/\p{L}/u.test(name)) continue;
    let html = '';
    if (n.backendDOMNodeId) {
      const { object } = await cdp.send('DOM.resolveNode', { backendNodeId: n.backendDOMNodeId });
      const r = await cdp.send('Runtime.callFunctionOn', {
        objectId: object.objectId,
        functionDeclaration: 'function () { return this.outerHTML?.slice(0, 120) ?? ""; }',
        returnByValue: true,
      });
      html = String(r.result.value);
    }
    bad.push(`${role} "${name}": ${html}`);
  }
  await cdp.detach();
  return bad;
}

/** Ids used twice, and id references (label for, aria-*) that point at nothing. */
const idProblems = (page: Page) =>
  page.evaluate(() => {
    const seen = new Map<string, number>();
    for (const el of document.querySelectorAll('[id]')) seen.set(el.id, (seen.get(el.id) ?? 0) + 1);
    const out = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `id "${id}" used ${n} times`);
    for (const attr of ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'aria-errormessage']) {
      for (const el of document.querySelectorAll(`[${attr}]`)) {
        for (const ref of (el.getAttribute(attr) ?? '').split(/\s+/).filter(Boolean))
          if (!document.getElementById(ref))
            out.push(`${attr}="${ref}" on <${el.tagName.toLowerCase()}> points at nothing`);
      }
    }
    return out;
  });

/** Everything that names its controls: names, ids and references, inputs' labels. */
async function checkNames(page: Page, where: string) {
  expect(await badNames(page), `controls without a name (${where})`).toEqual([]);
  expect(await idProblems(page), `ids (${where})`).toEqual([]);
  expect(
    await unlabelled(page, 'input:not([type=hidden]):not([hidden]), select, textarea'),
    `unlabelled inputs (${where})`,
  ).toEqual([]);
}

/** The accessibility tree's view of one element: its name, description and invalid state. */
async function axNode(page: Page, selector: string) {
  const cdp = await page.context().newCDPSession(page);
  const { result } = await cdp.send('Runtime.evaluate', {
    expression: `document.querySelector(${JSON.stringify(selector)})`,
  });
  const { node } = await cdp.send('DOM.describeNode', { objectId: result.objectId });
  const { nodes } = await cdp.send('Accessibility.getPartialAXTree', {
    backendNodeId: node.backendNodeId,
    fetchRelatives: false,
  });
  await cdp.detach();
  const n = nodes[0];
  return {
    name: String(n.name?.value ?? ''),
    description: String(n.description?.value ?? ''),
    invalid: String(n.properties?.find((p) => p.name === 'invalid')?.value.value ?? ''),
  };
}

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');
/** Press Tab until the focused element matches `selector` (at most `max` presses). */
async function tabUntil(page: Page, selector: string, max = 200): Promise<boolean> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => !!document.activeElement?.matches(s), selector)) return true;
  }
  return false;
}

test('names: every control, link, input, tab, dialog and image is named; no duplicate ids or dangling references', async ({
  page,
}) => {
  await open(page, '/');
  await page.waitForSelector('[data-testid=ranks]'); // the cards below the timeline
  await checkNames(page, 'the page');
  for (const tab of ['sweep', 'search', 'compare', 'measured']) {
    await openTab(page, tab);
    await page.waitForSelector(`#panel-${tab}`);
    if (tab === 'sweep' || tab === 'search') await jobDone(page, tab);
    await checkNames(page, `the ${tab} tab`);
  }
  for (const d of ['import', 'export']) {
    await page.click(`[data-testid=${d}]`);
    await page.waitForSelector(`[data-testid=${d}-dialog][open]`);
    if (d === 'export') await page.waitForSelector('[data-testid=export-text]');
    else await page.waitForSelector('[data-testid=import-loading]', { state: 'detached', timeout: 10000 });
    await checkNames(page, `the ${d} dialog`);
    await page.keyboard.press('Escape');
    await page.waitForSelector(`[data-testid=${d}-dialog]`, { state: 'detached' });
  }
});

test('structure: a language, a title, one h1, one main, banner and contentinfo, named regions, no skipped heading level', async ({
  page,
}) => {
  await open(page, '/');
  await page.waitForSelector('[data-testid=why]');
  const s = await page.evaluate(() => {
    const sectioning = 'main, section, article, aside, nav, dialog';
    const visible = (el: Element) => (el as HTMLElement).offsetParent !== null || el.getClientRects().length > 0;
    const heads = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(visible);
    const skips: string[] = [];
    let prev = 0;
    for (const h of heads) {
      const level = Number(h.tagName[1]);
      if (level > prev + 1) skips.push(`h${prev} → ${h.tagName.toLowerCase()} "${h.textContent?.trim()}"`);
      prev = level;
    }
    const unnamedRegions = [...document.querySelectorAll('section, form, [role=region], [role=group]')]
      .filter((el) => !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
      .map((el) => el.outerHTML.slice(0, 80));
    return {
      lang: document.documentElement.lang,
      title: document.title,
      h1: heads.filter((h) => h.tagName === 'H1').map((h) => h.textContent?.trim()),
      first: heads[0]?.tagName,
      skips,
      main: document.querySelectorAll('main, [role=main]').length,
      // a header or footer outside sectioning content is the page's banner or contentinfo
      banner: [...document.querySelectorAll('header')].filter((h) => !h.parentElement?.closest(sectioning)).length,
      contentinfo: [...document.querySelectorAll('footer')].filter((f) => !f.parentElement?.closest(sectioning)).length,
      unnamedRegions,
      resultsHeading: document.querySelector('#results h2')?.textContent ?? null,
    };
  });
  expect(s.lang).toBe('en');
  expect(s.title).toMatch(/llmem/);
  expect(s.h1, 'one h1').toEqual([expect.stringMatching(/^llmem/)]);
  expect(s.first, 'the h1 comes first').toBe('H1');
  expect(s.skips, 'heading levels skipped').toEqual([]);
  expect(s.main, 'one main landmark').toBe(1);
  expect(s.banner, 'the header is a banner').toBe(1);
  expect(s.contentinfo, 'a footer').toBe(1);
  expect(s.unnamedRegions, 'sections and forms without a name').toEqual([]);
  expect(s.resultsHeading, 'the results column has its own h2 (its cards are h3)').toBe('Results');
});

test('keyboard: Tab reaches the form; the planner tabs follow the WAI-ARIA tabs pattern', async ({ page }) => {
  await open(page, '/');
  expect(await tabUntil(page, '#f-model-preset', 12), 'Tab reaches the model preset').toBe(true);

  // one tab stop for the whole tab list
  const inOrder = await page.$$eval('[role=tablist][aria-label="Planner tools"] [role=tab]', (tabs) =>
    tabs.filter((t) => (t as HTMLElement).tabIndex >= 0).map((t) => t.id),
  );
  expect(inOrder, 'only one tab is in the Tab order').toEqual(['tab-sweep']);
  expect(await tabUntil(page, '#tab-sweep'), 'Tab reaches the planner tabs').toBe(true);

  const selected = () =>
    page.$$eval('[aria-label="Planner tools"] [role=tab][aria-selected=true]', (t) => t.map((x) => x.id));
  await page.keyboard.press('Enter');
  await page.waitForSelector('#panel-sweep[role=tabpanel][aria-labelledby=tab-sweep]');
  expect(await selected()).toEqual(['tab-sweep']);
  expect(await page.getAttribute('#tab-sweep', 'aria-controls')).toBe('panel-sweep');

  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('#panel-search');
  expect(await focusedId(page), 'ArrowRight moves focus').toBe('tab-search');
  expect(await selected()).toEqual(['tab-search']);
  await page.keyboard.press('ArrowLeft');
  await page.waitForSelector('#panel-sweep');
  expect(await focusedId(page)).toBe('tab-sweep');
  await page.keyboard.press('ArrowLeft');
  expect(await focusedId(page), 'ArrowLeft wraps to the last tab').toBe('tab-measured');
  await page.waitForSelector('#panel-measured');
  await page.keyboard.press('Home');
  expect(await focusedId(page), 'Home: the first tab').toBe('tab-sweep');
  await page.keyboard.press('End');
  expect(await focusedId(page), 'End: the last tab').toBe('tab-measured');
  await page.waitForSelector('#panel-measured');
  const stops = await page.$$eval('[aria-label="Planner tools"] [role=tab]', (tabs) =>
    tabs.filter((t) => (t as HTMLElement).tabIndex >= 0).map((t) => t.id),
  );
  expect(stops, 'the selected tab is the tab stop').toEqual(['tab-measured']);

  // Space on the selected tab closes the planner (a second click does), Space again opens it
  await page.keyboard.press('Space');
  await page.waitForSelector('#panel-measured', { state: 'detached' });
  expect(await selected()).toEqual([]);
  await page.keyboard.press('Space');
  await page.waitForSelector('#panel-measured');
  // Tab from the tab moves into the panel, not along the tabs
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.getAttribute('role')), 'Tab leaves the tab list').not.toBe(
    'tab',
  );
});

test('keyboard: the focused control shows a focus ring (outline or box-shadow on :focus-visible)', async ({ page }) => {
  await open(page, '/');
  await page.waitForSelector('[data-testid=why]');
  await openTab(page, 'search');
  await jobDone(page, 'search');
  await page.focus('body');
  const missing: string[] = [];
  const kinds = new Set<string>();
  for (let i = 0; i < 160; i++) {
    await page.keyboard.press('Tab');
    const f = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const cs = getComputedStyle(el);
      const ring =
        (cs.outlineStyle !== 'none' && Number.parseFloat(cs.outlineWidth) >= 1) ||
        (cs.boxShadow && cs.boxShadow !== 'none');
      return {
        what: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.getAttribute('role') ? `[role=${el.getAttribute('role')}]` : ''} "${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 30)}"`,
        kind: el.getAttribute('role') ?? el.tagName.toLowerCase(),
        ring,
        visible: el.matches(':focus-visible'),
      };
    });
    if (!f) continue;
    kinds.add(f.kind);
    if (!f.visible || !f.ring) missing.push(f.what);
  }
  expect(missing, 'focused without a visible ring').toEqual([]);
  for (const k of ['button', 'select', 'input', 'summary', 'tab'])
    expect([...kinds], `Tab reached a ${k}`).toContain(k);
});

for (const d of ['import', 'export'] as const) {
  test(`keyboard: the ${d} dialog opens with Enter, holds focus, closes with Escape and gives focus back`, async ({
    page,
  }) => {
    await open(page, '/');
    expect(await tabUntil(page, `[data-testid=${d}]`, 20), `Tab reaches ${d}`).toBe(true);
    await page.keyboard.press('Enter');
    const dialog = `[data-testid=${d}-dialog]`;
    await page.waitForSelector(`${dialog}[open]`);
    await page.waitForFunction((sel) => document.querySelector(sel)?.contains(document.activeElement), dialog);
    const name = await page.evaluate((sel) => {
      const el = document.querySelector(sel)!;
      return document.getElementById(el.getAttribute('aria-labelledby') ?? '')?.textContent;
    }, dialog);
    expect(name, 'the dialog is named by its title').toMatch(d === 'import' ? /Import/ : /Export/);
    expect(await page.$eval(dialog, (el) => (el as HTMLDialogElement).matches(':modal')), 'modal').toBe(true);
    if (d === 'export') {
      // the format tabs: arrow keys move along them, one tab stop
      const first = await focusedId(page);
      expect(first, 'focus starts on the chosen format').toBe('export-tab-config');
      await page.keyboard.press('ArrowRight');
      expect(await focusedId(page)).not.toBe(first);
      expect(await page.getAttribute(`#${await focusedId(page)}`, 'aria-selected')).toBe('true');
      const stops = await page.$$eval(
        '[data-testid=export-dialog] [role=tab]',
        (tabs) => tabs.filter((t) => (t as HTMLElement).tabIndex >= 0).length,
      );
      expect(stops, 'one tab stop in the format tabs').toBe(1);
      await page.keyboard.press('Home');
      expect(await focusedId(page)).toBe(first);
    }
    // the page behind is inert: Tab goes round the dialog's controls (and, as a native modal dialog, through the
    // browser's own controls: no element focused), never to the page
    const inside = new Set<string>();
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Tab');
      const at = await page.evaluate((sel) => {
        const el = document.activeElement;
        if (!el || el === document.body) return 'browser';
        return document.querySelector(sel)?.contains(el)
          ? el.outerHTML.slice(0, 60)
          : `outside: ${el.outerHTML.slice(0, 60)}`;
      }, dialog);
      expect(at, `Tab ${i + 1} stays off the page`).not.toMatch(/^outside/);
      if (at !== 'browser') inside.add(at);
    }
    expect(inside.size, 'Tab reaches the controls of the dialog').toBeGreaterThanOrEqual(3);
    await page.keyboard.press('Escape');
    await page.waitForSelector(dialog, { state: 'detached' });
    // the opener takes focus back as the dialog unmounts, which can land a frame after its node is gone
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')), {
        message: 'focus back on the opener',
        timeout: 2000,
      })
      .toBe(d);
  });
}

test('errors: a bad value is marked invalid, its message tied to the input and announced', async ({ page }) => {
  await open(page, '/');
  const id = 'f-training-micro_batch';
  const state = () =>
    page.evaluate((i) => {
      const input = document.getElementById(i)!;
      const refs = (input.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
      const described = refs.map((r) => document.getElementById(r));
      return {
        invalid: input.getAttribute('aria-invalid'),
        dangling: refs.filter((_, k) => !described[k]),
        description: described.map((e) => e?.textContent ?? '').join(' '),
        announced: described.some((e) =>
          e?.closest('[role=alert], [aria-live=assertive], [aria-live=polite], [role=status]'),
        ),
      };
    }, id);
  const before = await state();
  expect(before.invalid).toBe('false');
  expect(before.dangling).toEqual([]);

  for (const [value, message] of [
    ['0', /out of range.*1 to/],
    ['x', /"x" is not a number/],
  ] as const) {
    await setField(page, 'training.micro_batch', value);
    await page.waitForFunction((i) => document.getElementById(i)?.getAttribute('aria-invalid') === 'true', id);
    const s = await state();
    expect(s.dangling, `describedby of ${value} points at nothing`).toEqual([]);
    expect(s.description, `the message of ${value} describes the input`).toMatch(message);
    expect(s.announced, `the message of ${value} is announced`).toBe(true);
    // the screen reader's view: invalid, described by the message
    const node = await axNode(page, `#${id}`);
    expect(node.name).toMatch(/Micro-batch/);
    expect(node.description).toMatch(message);
    expect(node.invalid).toBe('true');
  }
  // the banner above the results names it too, with a way to the input
  await expect(page.locator('[data-testid=error-banner][role=alert]')).toContainText('Micro-batch');
  await page.click('[data-testid=error-banner] button');
  expect(await focusedId(page), 'the banner button focuses the input').toBe(id);

  await setField(page, 'training.micro_batch', '2');
  await page.waitForFunction((i) => document.getElementById(i)?.getAttribute('aria-invalid') === 'false', id);
  expect((await state()).dangling).toEqual([]);
  await expect(page.locator(`#${id}-err`)).toHaveCount(0);

  // the planner's own number boxes do the same
  await page.fill('#plan-free', '95');
  await expect(page.locator('#plan-free')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator('#plan-free-err[role=alert]')).toContainText('at most 90');
  await expect(page.locator('#plan-free')).toHaveAttribute('aria-describedby', 'plan-free-err');
});

test('charts: each chart is an image with a text alternative that gives its numbers; the sweep has a data table', async ({
  page,
}) => {
  await open(page, '/');
  await page.waitForSelector('[data-testid=ranks] [role=img]');
  await page.waitForSelector('[data-testid=timeline] canvas');
  const images = () =>
    page.$$eval('.chart, .stackbar, canvas, svg', (els) =>
      els
        .filter((el) => !el.closest('[aria-hidden=true]') && !el.parentElement?.closest('[role=img]'))
        .map((el) => ({
          what: `${el.tagName.toLowerCase()}.${el.getAttribute('class')}`,
          role: el.getAttribute('role'),
          label: el.getAttribute('aria-label') ?? '',
        })),
    );
  const main = await images();
  expect(main.length, 'the breakdown, the timeline and the per-stage bars').toBeGreaterThanOrEqual(3);
  for (const c of main) {
    expect(c.role, `${c.what} is an image`).toBe('img');
    expect(c.label, `${c.what} gives its numbers`).toMatch(/\d+(\.\d+)? GiB/);
  }
  const breakdown = await page.getAttribute('[data-testid=breakdown] [role=img]', 'aria-label');
  expect(breakdown, 'the breakdown names each part').toMatch(/Weights [\d.]+ GiB.*Activations [\d.]+ GiB/);
  expect(await page.getAttribute('[data-testid=timeline] [role=img]', 'aria-label')).toMatch(/peak [\d.]+ GiB during/);

  await openTab(page, 'sweep');
  const done = await jobDone(page, 'sweep');
  await page.waitForSelector('[data-testid=sweep-chart] canvas');
  for (const c of await images()) {
    expect(c.role, `${c.what} is an image`).toBe('img');
    expect(c.label, `${c.what} is described`).toMatch(/\d/);
  }
  // every point's numbers, as a table a screen reader reads (hidden from view: the chart shows them)
  const table = page.locator('[data-testid=sweep-chart] table');
  await expect(table.locator('caption')).toContainText(/Peak memory per GPU along/);
  const rows = table.locator('tbody tr');
  await expect(rows).toHaveCount(Number(done.count));
  expect(await table.locator('thead th').allTextContents()).toEqual(
    expect.arrayContaining([expect.stringMatching(/Allocated/), expect.stringMatching(/nvidia-smi/)]),
  );
  expect(await rows.first().locator('td').allTextContents()).toEqual(
    expect.arrayContaining([expect.stringMatching(/^[\d.]+ GiB$/)]),
  );

  // the layout search: its scatter beside the table of every layout
  await openTab(page, 'search');
  await jobDone(page, 'search');
  await expect(page.locator('#panel-search .chart[role=img]')).toHaveAttribute('aria-label', /\d+ layouts/);
  await expect(page.locator('#panel-search table')).toHaveCount(1);
});

// --- colour contrast (WCAG 2.x relative luminance) ---
type RGBA = [number, number, number, number];
/** rgb()/rgba()/color(srgb …) as computed by the browser, channels 0..255, alpha 0..1. */
function parseColor(c: string): RGBA | null {
  let m = c.match(/^rgba?\(([\d.]+),?\s*([\d.]+),?\s*([\d.]+)(?:\s*[,/]\s*([\d.]+))?\)$/);
  if (m) return [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
  m = c.match(/^color\(srgb ([\d.]+) ([\d.]+) ([\d.]+)(?: \/ ([\d.]+))?\)$/);
  if (m) return [+m[1] * 255, +m[2] * 255, +m[3] * 255, m[4] === undefined ? 1 : +m[4]];
  return null;
}
const over = (top: RGBA, under: RGBA): RGBA => {
  const a = top[3] + under[3] * (1 - top[3]);
  if (a === 0) return [0, 0, 0, 0];
  const ch = (i: number) => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a;
  return [ch(0), ch(1), ch(2), a];
};
const luminance = ([r, g, b]: RGBA) => {
  const lin = (v: number) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
};
const contrast = (a: RGBA, b: RGBA) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};

/** Each element with its own text under `selector`: its colour, its backgrounds (innermost first), size, weight. */
const textStyles = (page: Page, selector: string) =>
  page.$$eval(selector, (roots) => {
    const out: { what: string; color: string; bgs: string[]; opacity: number; size: number; weight: number }[] = [];
    const els = new Set<Element>();
    for (const r of roots)
      for (const el of [r, ...r.querySelectorAll('*')])
        if ([...el.childNodes].some((n) => n.nodeType === 3 && n.textContent?.trim()) && el.getClientRects().length)
          els.add(el);
    for (const el of els) {
      if (el.closest('.sr-only')) continue;
      const cs = getComputedStyle(el);
      const bgs: string[] = [];
      let opacity = 1;
      for (let a: Element | null = el; a; a = a.parentElement) {
        const s = getComputedStyle(a);
        bgs.push(s.backgroundColor);
        opacity *= Number(s.opacity);
      }
      out.push({
        what: `${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''} "${el.textContent?.trim().slice(0, 30)}"`,
        color: cs.color,
        bgs,
        opacity,
        size: Number.parseFloat(cs.fontSize),
        weight: Number(cs.fontWeight),
      });
    }
    return out;
  });

for (const scheme of ['light', 'dark'] as const) {
  test(`contrast: the headline, the title and the form's labels meet WCAG AA in the ${scheme} scheme`, async ({
    page,
  }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await open(page, '/');
    await page.waitForSelector('[data-testid=largest-fit] dd');
    const canvas: RGBA = scheme === 'dark' ? [0, 0, 0, 1] : [255, 255, 255, 1];
    const rows = await textStyles(
      page,
      '.header h1, [data-testid=headline], .panel h2, .field > label, .field > legend, .check span, .chip span, .group > summary, .field .hint, .numbox .unit',
    );
    expect(rows.length).toBeGreaterThan(40);
    const low: string[] = [];
    const unread = new Set<string>();
    const read = (c: string): RGBA => {
      const v = parseColor(c);
      if (!v) unread.add(c);
      return v ?? [0, 0, 0, 0];
    };
    for (const r of rows) {
      let bg = canvas;
      for (const c of [...r.bgs].reverse()) bg = over(read(c), bg);
      const [cr, cg, cb, ca] = read(r.color);
      const fg = over([cr, cg, cb, ca * r.opacity], bg); // a faded ancestor fades the text
      const large = r.size >= 24 || (r.size >= 18.66 && r.weight >= 700);
      const ratio = contrast(fg, bg);
      if (ratio < (large ? 3 : 4.5)) low.push(`${r.what}: ${ratio.toFixed(2)} (${r.color} on ${r.bgs.join(' < ')})`);
    }
    expect([...unread], 'colours this test cannot read').toEqual([]);
    expect(low, 'text below AA').toEqual([]);
  });
}

test('reduced motion: nothing transitions or animates when the system asks for less motion', async ({ page }) => {
  const moving = () =>
    page.evaluate(() => {
      const out: string[] = [];
      const seconds = (v: string) => Math.max(...v.split(',').map((t) => Number.parseFloat(t) || 0));
      for (const el of document.querySelectorAll('*'))
        for (const pseudo of [null, '::before', '::after']) {
          const cs = getComputedStyle(el, pseudo);
          if (seconds(cs.transitionDuration) > 0 || (cs.animationName !== 'none' && seconds(cs.animationDuration) > 0))
            out.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''}${pseudo ?? ''}`);
        }
      return [...new Set(out)];
    });
  await open(page, '/');
  await page.waitForSelector('[data-testid=why]');
  expect((await moving()).length, 'the page does animate by default (else this test checks nothing)').toBeGreaterThan(
    0,
  );
  await page.emulateMedia({ reducedMotion: 'reduce' });
  expect(await moving(), 'still moving with reduced motion').toEqual([]);
});
