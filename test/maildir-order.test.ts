// The test harness reads the real SMTP server's Maildir newest-last (test/helpers/mail.ts gives it
// newest-first). exim names each message `<seconds>.M<microseconds>P<pid>.<host>` without padding the
// microseconds, so sorting names as text put a message of the same second before an earlier one
// (`M99999` after `M605011`) — a second sign-in code read as the first (marketing-site-login, flaky).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { readMaildir } from '../scripts/smtp.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'maildir-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('orders messages by the time in their names, microseconds as numbers', () => {
  mkdirSync(path.join(dir, 'new'), { recursive: true });
  // Delivered in this order: second 1795775658 at 99,999 µs, then at 605,011 µs, then the next second at 5 µs.
  const delivered = ['1795775658.M99999P7.host', '1795775658.M605011P7.host', '1795775659.M5P7.host'];
  for (const [i, name] of [delivered[2], delivered[0], delivered[1]].entries()) writeFileSync(path.join(dir, 'new', name), `Subject: ${i}\n\nbody`);
  expect(readMaildir(dir).map((m) => m.file)).toEqual(delivered);
});
