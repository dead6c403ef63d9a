// scripts/system-deps.sh derives the backports source from the machine's own Debian apt sources (same
// mirror, suite <codename>-backports), in the one-line and the deb822 format, and says so when there is
// nothing to derive it from. Run in --backports-source mode against apt folders made here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/system-deps.sh');

function derive(files: Record<string, string>, codename = 'bookworm') {
  const dir = mkdtempSync(path.join(tmpdir(), 'apt-'));
  mkdirSync(path.join(dir, 'sources.list.d'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, 'os-release'), `ID=debian\nVERSION_CODENAME=${codename}\n`);
  const r = spawnSync('bash', [SCRIPT, '--backports-source'], { env: { ...process.env, APT_DIR: dir, OS_RELEASE: path.join(dir, 'os-release') }, encoding: 'utf8' });
  return { status: r.status, out: r.stdout.replaceAll(dir, 'APT'), err: r.stderr };
}

const DEB822 = `Types: deb
# a snapshot comment
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
`;

test('deb822 sources: a .sources stanza on the same mirror, suite bookworm-backports, same keyring', () => {
  const r = derive({ 'sources.list.d/debian.sources': DEB822 });
  expect(r.status).toBe(0);
  expect(r.out).toBe('APT/sources.list.d/pooled-backports.sources\tTypes: deb\nURIs: http://mirror.example/debian\nSuites: bookworm-backports\n' +
    'Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n');
});

test('one-line sources: a .list line on the same mirror with the same options; comments and deb-src skipped', () => {
  const list = '# deb http://old.example/debian bookworm main\ndeb-src http://src.example/debian bookworm main\n' +
    'deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib\n';
  const r = derive({ 'sources.list': list });
  expect(r.status).toBe(0);
  expect(r.out).toBe('APT/sources.list.d/pooled-backports.list\tdeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm-backports main\n');
});

test('the release comes from os-release; a disabled stanza is not used', () => {
  const sources = 'Types: deb\nURIs: http://off.example/debian\nSuites: trixie\nEnabled: no\n\nTypes: deb\nURIs: http://on.example/debian\nSuites: trixie\n';
  const r = derive({ 'sources.list.d/debian.sources': sources }, 'trixie');
  expect(r.out).toContain('URIs: http://on.example/debian\nSuites: trixie-backports\n');
});

test('nothing is added when backports is configured already', () => {
  const r = derive({ 'sources.list.d/debian.sources': DEB822, 'sources.list.d/backports.list': 'deb http://mirror.example/debian bookworm-backports main\n' });
  expect(r).toMatchObject({ status: 0, out: '' });
});

test('no Debian source for the release (only security, or none): says so and exits 3', () => {
  const cases: Record<string, string>[] = [{}, { 'sources.list': 'deb http://mirror.example/debian-security bookworm-security main\n' }];
  for (const files of cases) {
    const r = derive(files);
    expect(r.status).toBe(3);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/no apt source for Debian bookworm is configured .*, so bookworm-backports cannot be derived from it/);
  }
});
