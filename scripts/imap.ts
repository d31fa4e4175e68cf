// A real IMAP server for the bounce and reply mailboxes of e-mail campaigns: Debian's dovecot
// (dovecot-imapd), started on a free loopback port with a configuration of its own (state, logs and
// users under the given folder). It serves the per-user Maildirs the SMTP server (scripts/smtp.ts)
// delivers local mail into: `<mailboxes>/<user>/Maildir`. Stopped by its pid only.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './infra.ts';
import { noteRunProcess } from './test-reaper.ts';

/** A running IMAP server. */
export interface RunningImap {
  host: string;
  port: number;
  pid: number;
  /** The folder holding one `<user>/Maildir` per mailbox (the SMTP server delivers local mail there). */
  mailboxes: string;
  /** The users it serves, with their passwords. */
  users: Record<string, string>;
  /** `imap://<user>:<password>@127.0.0.1:<port>` of one user. */
  urlFor(user: string): string;
  stop(): Promise<void>;
}

const DOVECOT = '/usr/sbin/dovecot';

/** Installs dovecot-imapd when missing (as root with apt-get; otherwise says what to run). */
export function ensureImapServer(): void {
  if (existsSync(DOVECOT) && existsSync('/usr/lib/dovecot/imap')) return;
  if (process.getuid?.() !== 0) throw new Error('Debian\'s dovecot is needed for the campaigns\' bounce mailbox: sudo apt-get install -y dovecot-imapd');
  console.log('[imap] installing dovecot-imapd');
  execFileSync('apt-get', ['install', '-y', '-q', 'dovecot-imapd'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

/** The user the SMTP server delivers as (scripts/smtp.ts): dovecot opens the mailboxes as the same one. */
function mailOwner(): { name: string; uid: number; gid: number } {
  const probe = spawnSync('id', ['-u', 'Debian-exim'], { encoding: 'utf8' });
  if (probe.status === 0) return { name: 'Debian-exim', uid: Number(probe.stdout.trim()), gid: Number(spawnSync('id', ['-g', 'Debian-exim'], { encoding: 'utf8' }).stdout.trim()) };
  return { name: process.env.USER ?? 'nobody', uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/**
 * Sign-in with an OAuth 2 access token (SASL XOAUTH2): dovecot's `oauth2` passdb asks the
 * provider's token introspection endpoint (RFC 7662, `introspection_mode = post`) whether the token
 * is active and whose it is (`username`). Password sign-in stays for the other users.
 */
export interface ImapOAuth2 { introspectionUrl: string }

function config(dir: string, mailboxes: string, port: number, usersFile: string, oauth2File: string | null): string {
  const owner = mailOwner();
  const root = process.getuid?.() === 0;
  return `# Written by scripts/imap.ts: IMAP on loopback over the Maildirs the SMTP server delivers into.
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/log/dovecot.log
info_log_path = ${dir}/log/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
# Loopback only, no TLS here: plain passwords are what the test mailboxes use.
disable_plaintext_auth = no
auth_mechanisms = plain login${oauth2File ? ' xoauth2' : ''}
first_valid_uid = ${owner.uid}
last_valid_uid = ${owner.uid}
first_valid_gid = 0
${root ? '' : `default_login_user = ${owner.name}\ndefault_internal_user = ${owner.name}\n`}mail_location = maildir:${mailboxes}/%n/Maildir
mail_uid = ${owner.uid}
mail_gid = ${owner.gid}
${oauth2File ? `passdb {\n  driver = oauth2\n  mechanisms = xoauth2\n  args = ${oauth2File}\n}\n` : ''}passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%n ${usersFile}
}
userdb {
  driver = static
  args = uid=${owner.uid} gid=${owner.gid} home=${mailboxes}/%n
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
`;
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.setTimeout(1_000, () => { socket.destroy(); resolve(false); });
    socket.once('data', (chunk) => { socket.destroy(); resolve(chunk.toString().startsWith('* OK')); });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts dovecot on a free loopback port, its files under `dir`, serving `users` (name → password;
 * a random password for a name given without one). `mailboxes` is where the SMTP server delivers.
 */
export async function startImap(opts: { dir: string; mailboxes: string; users: string[] | Record<string, string>; port?: number; oauth2?: ImapOAuth2 }): Promise<RunningImap> {
  ensureImapServer();
  const dir = path.resolve(opts.dir);
  for (const sub of ['run', 'state', 'log']) mkdirSync(path.join(dir, sub), { recursive: true });
  mkdirSync(opts.mailboxes, { recursive: true });
  chmodSync(opts.mailboxes, 0o777);
  const users: Record<string, string> = Array.isArray(opts.users) ? Object.fromEntries(opts.users.map((u) => [u, randomBytes(12).toString('base64url')])) : { ...opts.users };
  // dovecot's auth process reads the users file as its own unprivileged user, so the file and its folder are its
  // group's, not the world's — and the folder is not below `dir`: a checkout may sit below a directory only its
  // owner can enter (a home, a mkdtemp folder: CI's fresh clone answered "Temporary authentication failure"), as
  // the SMTP server's Maildirs are kept apart for the same reason (scripts/smtp.ts).
  const authDir = path.join(os.tmpdir(), `cuadra-imap-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
  mkdirSync(authDir, { recursive: true, mode: 0o750 });
  chmodSync(authDir, 0o750);
  const usersFile = path.join(authDir, 'users');
  writeFileSync(usersFile, Object.entries(users).map(([u, p]) => `${u}:{PLAIN}${p}\n`).join(''), { mode: 0o640 });
  const authGroup = spawnSync('id', ['-g', 'dovecot'], { encoding: 'utf8' });
  if (process.getuid?.() === 0 && authGroup.status === 0) {
    chownSync(authDir, 0, Number(authGroup.stdout.trim()));
    chownSync(usersFile, 0, Number(authGroup.stdout.trim()));
  }
  // The SMTP server delivers to a user's folder only once it exists (its router looks the name up there).
  for (const user of Object.keys(users)) {
    mkdirSync(path.join(opts.mailboxes, user), { recursive: true });
    chmodSync(path.join(opts.mailboxes, user), 0o777);
  }
  let oauth2File: string | null = null;
  if (opts.oauth2) {
    oauth2File = path.join(authDir, 'oauth2.conf.ext');
    // The introspection answer must say active: true (RFC 7662 §2.2), and its username is who signs in.
    writeFileSync(oauth2File, `introspection_mode = post\nintrospection_url = ${opts.oauth2.introspectionUrl}\nforce_introspection = yes\nusername_attribute = username\nactive_attribute = active\nactive_value = true\n`, { mode: 0o640 });
    if (process.getuid?.() === 0 && authGroup.status === 0) chownSync(oauth2File, 0, Number(authGroup.stdout.trim()));
  }
  const port = opts.port ?? (await freePort());
  const conf = path.join(dir, 'dovecot.conf');
  writeFileSync(conf, config(dir, path.resolve(opts.mailboxes), port, usersFile, oauth2File));
  const pidFile = path.join(dir, 'run', 'master.pid');
  rmSync(pidFile, { force: true });
  // The daemon keeps the descriptors it was given: pipes here would hold this call until it stops.
  const started = spawnSync(DOVECOT, ['-c', conf], { stdio: 'ignore' });
  if (started.status !== 0) throw new Error(`dovecot did not start (exit ${started.status}); see ${dir}/log/dovecot.log`);
  let pid = 0;
  for (let i = 0; i < 200; i++) {
    if (!pid && existsSync(pidFile)) pid = Number(readFileSync(pidFile, 'utf8').trim()) || 0;
    if (pid && (await answers(port))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!pid) throw new Error(`dovecot wrote no pid file; see ${dir}/log/dovecot.log`);
  noteRunProcess(pid);
  return {
    host: '127.0.0.1',
    port,
    pid,
    mailboxes: path.resolve(opts.mailboxes),
    users,
    urlFor: (user) => `imap://${encodeURIComponent(user)}:${encodeURIComponent(users[user])}@127.0.0.1:${port}`,
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return; // already gone
      }
      // Until the master is gone: it removes its sockets under run/ as it exits, and a start in the same
      // folder meanwhile (npm start's Ctrl-C, then npm start again) finds them and refuses to run
      // ("Dovecot is already running? Socket already exists").
      for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone at the last moment
      }
    },
  };
}
