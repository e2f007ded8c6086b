import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';

const ROOT = join(__dirname, '..', '..');

/** The reader's documents: the README, CONTRIBUTING.md and every page under docs/. */
function documents(): string[] {
  const pages: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) pages.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return [join(ROOT, 'README.md'), join(ROOT, 'CONTRIBUTING.md'), ...pages.sort()];
}

/** The text outside fenced code blocks and inline code spans, where a link is a link. */
export function proseOf(markdown: string): string {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opening = /^\s*(```+|~~~+)/.exec(line);
    if (fence === null && opening) fence = opening[1][0];
    else if (fence !== null && opening && opening[1][0] === fence) fence = null;
    else if (fence === null) lines.push(line.replace(/(`+)[^`]*?\1/g, ''));
  }
  return lines.join('\n');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces as hyphens. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' (repeats numbered as GitHub does) and explicit `<a id|name>` ones. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opening = /^\s*(```+|~~~+)/.exec(line);
    if (fence === null && opening) fence = opening[1][0];
    else if (fence !== null && opening && opening[1][0] === fence) fence = null;
    if (fence !== null || opening) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = slugOf(heading[1]);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const explicit of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(explicit[1]);
  }
  return anchors;
}

/** The relative targets a page links to: Markdown links and images, reference definitions, and HTML src/href. */
export function relativeTargetsOf(markdown: string): string[] {
  const prose = proseOf(markdown);
  const targets = [
    ...[...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
    ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]),
    ...[...prose.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]),
  ];
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** What is wrong with each relative link of `file`: a missing file, or an anchor its target has no heading for. */
export function brokenLinksOf(file: string, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): string[] {
  const problems: string[] = [];
  for (const target of relativeTargetsOf(read(file))) {
    const [pathPart, anchor] = target.split('#', 2);
    const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    if (!existsSync(path)) {
      problems.push(`${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(read(path)).has(decodeURIComponent(anchor)))
      problems.push(`${target}: no heading "#${anchor}" in ${relative(ROOT, path)}`);
  }
  return problems;
}

describe('Markdown links', () => {
  describe('slugs and links as GitHub reads them', () => {
    it('makes the anchor of a heading as GitHub does', () => {
      expect(slugOf('A five-minute receiver outage (issue 22), 2026-12-05 22:26–22:42 UTC')).toBe(
        'a-five-minute-receiver-outage-issue-22-2026-12-05-22262242-utc',
      );
      expect(slugOf('The house: who may depend on whom')).toBe('the-house-who-may-depend-on-whom');
      expect(slugOf('YOURLS (`/yourls-api.php`)')).toBe('yourls-yourls-apiphp');
      expect(slugOf('Tenants, keys and plans')).toBe('tenants-keys-and-plans');
    });

    it('numbers repeated headings and ignores headings inside code blocks', () => {
      const anchors = anchorsOf('# Title\n## Setup\n```bash\n# not a heading\n```\n## Setup\n<a id="custom"></a>\n');
      expect([...anchors].sort()).toEqual(['custom', 'setup', 'setup-1', 'title']);
    });

    it('finds relative links and images in prose, not in code or absolute URLs', () => {
      const page = [
        'See [the API](docs/api.md#links) and ![shot](docs/img/a.png).',
        '<img src="docs/img/b.png" width="10">',
        '[ref]: docs/ref.md',
        '`[not](a-link.md)` and [web](https://example.com) and [mail](mailto:a@b.c)',
        '```',
        '[in code](nowhere.md)',
        '```',
      ].join('\n');
      expect(relativeTargetsOf(page)).toEqual(['docs/api.md#links', 'docs/img/a.png', 'docs/ref.md', 'docs/img/b.png']);
    });

    it('reports a missing file and a missing anchor', () => {
      const files: Record<string, string> = {
        [join(ROOT, 'README.md')]: '[ok](README.md#title) [gone](README.md#nope) [missing](no-such-page.md)\n# Title\n',
      };
      expect(brokenLinksOf(join(ROOT, 'README.md'), (p) => files[p] ?? readFileSync(p, 'utf8'))).toEqual([
        'README.md#nope: no heading "#nope" in README.md',
        'no-such-page.md: no such file',
      ]);
    });
  });

  describe.each(documents().map((file) => [relative(ROOT, file), file]))('%s', (_name, file) => {
    it('exists', () => {
      expect(existsSync(file)).toBe(true);
    });

    it('links only to files and headings that exist', () => {
      expect(brokenLinksOf(file)).toEqual([]);
    });

    it('links back to the README, and the README links to it', () => {
      if (file === join(ROOT, 'README.md')) return;
      const toReadme = relativeTargetsOf(readFileSync(file, 'utf8')).some((t) => resolve(dirname(file), t.split('#')[0]) === join(ROOT, 'README.md'));
      expect(toReadme).toBe(true);
      const fromReadme = relativeTargetsOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).some((t) => resolve(ROOT, t.split('#')[0]) === file);
      expect(fromReadme).toBe(true);
    });
  });
});
