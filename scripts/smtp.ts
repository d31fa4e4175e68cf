// A real SMTP server for the embedded default and the tests: Debian's exim4 (exim4-daemon-light),
// started on a free loopback port with a configuration of its own (spool and log under the given
// folder), delivering every recipient to one Maildir a person (`npm run cuadra -- mail`) and the tests
// can read. Recipients in the reserved `.invalid` domains are refused at RCPT (550), so a bounce can be
// tested. Recipients at `undeliverable.test` are accepted and then fail at delivery, so exim itself sends
// the envelope sender a delivery-status notification (RFC 3464), as a remote MTA would. Local mailboxes
// (`<user>[+anything]@cuadra.localhost`) go to `<mailboxes>/<user>/Maildir`, which the IMAP server
// (scripts/imap.ts) serves: the campaigns' bounce mailbox. Stopped by its pid only.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './infra.ts';
import { noteRunProcess } from './test-reaper.ts';

/** A running SMTP server. */
export interface RunningSmtp {
  /** `smtp://127.0.0.1:<port>`, for `SMTP_URL`. */
  url: string;
  port: number;
  pid: number;
  /** The Maildir every message is delivered to (`new/` holds them). */
  maildir: string;
  /** Where mail to `<user>@{@link LOCAL_MAIL_DOMAIN}` goes: `<mailboxes>/<user>/Maildir` (the IMAP server serves them). */
  mailboxes: string;
  stop(): Promise<void>;
}

const EXIM = '/usr/sbin/exim4';

/** The domain whose mail stays on this machine, one Maildir per user (the bounce mailboxes). */
export const LOCAL_MAIL_DOMAIN = 'cuadra.localhost';
/** A domain whose recipients are accepted and then bounced by the MTA with a delivery-status notification. */
export const UNDELIVERABLE_DOMAIN = 'undeliverable.test';

/** Installs exim4 when missing (as root with apt-get; otherwise says what to run). */
export function ensureSmtpServer(): void {
  if (existsSync(EXIM)) return;
  if (process.getuid?.() !== 0) throw new Error('Debian\'s exim4 is needed for e-mail: sudo apt-get install -y exim4-daemon-light');
  console.log('[smtp] installing exim4-daemon-light');
  execFileSync('apt-get', ['install', '-y', '-q', 'exim4-daemon-light'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

/**
 * Sign-in with an OAuth 2 access token (XOAUTH2, as Google and Microsoft take it): the client's
 * `user=<u>^Aauth=Bearer <token>^A^A` is checked by asking the provider's token introspection
 * endpoint (RFC 7662, a form POST through `${readsocket}`) whether the token is active and whose
 * it is. With it, the server takes mail only from a client signed in.
 */
export interface XOAuth2Check { introspectionUrl: string }

function xoauth2Authenticator(check: XOAuth2Check): string {
  const url = new URL(check.introspectionUrl);
  if (url.protocol !== 'http:' || url.hostname !== '127.0.0.1') throw new Error('the XOAUTH2 check asks a loopback http introspection endpoint only');
  const $ = '$';
  // The first group, as ${sg} reads it in its replacement (escaped so the expansion leaves it to sg).
  const first = '\\$1';
  const user = String.raw`${$}{sg{${$}auth1}{\N^user=([^\x01]*)\x01.*${$}\N}{${first}}}`;
  const token = String.raw`${$}{sg{${$}auth1}{\N^.*\x01auth=Bearer ([^\x01]*)\x01.*${$}\N}{${first}}}`;
  // HTTP/1.0: the provider closes the connection after its answer, which is where readsocket stops reading.
  const request = String.raw`POST ${url.pathname} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${$}{strlen:token=${token}}\r\n\r\ntoken=${token}`;
  const body = String.raw`${$}{sg{${$}{readsocket{inet:127.0.0.1:${url.port}}{${request}}{5s}{}{}}}{\N^(?s).*?\r\n\r\n\N}{}}`;
  return String.raw`begin authenticators
xoauth2:
  driver = plaintext
  public_name = XOAUTH2
  server_prompts = :
  server_condition = ${$}{if and{{match{${$}auth1}{\N^user=[^\x01]+\x01auth=Bearer [^\x01]+\x01\x01${$}\N}}{eq{${$}{extract json{active}{${body}}}}{true}}{eq{${$}{extract jsons{username}{${body}}}}{${user}}}}}
  server_set_id = ${user}
`;
}

function config(dir: string, maildir: string, mailboxes: string, port: number, xoauth2?: XOAuth2Check): string {
  const user = deliveryUser();
  return `# Written by scripts/smtp.ts: accepts mail on loopback and delivers every recipient to one Maildir.
primary_hostname = ${LOCAL_MAIL_DOMAIN}
daemon_smtp_ports = ${port}
local_interfaces = 127.0.0.1
spool_directory = ${dir}/spool
log_file_path = ${dir}/log/%slog
pid_file_path = ${dir}/exim.pid
exim_user = ${process.getuid?.() === 0 ? 'root' : user}
never_users =
host_lookup =
rfc1413_hosts =
tls_advertise_hosts =
# exim's default (10) queues every message after the tenth of one connection for the next queue run (-q30s):
# a client that keeps its connections (the campaign sender's pool) would see its mail arrive up to 30 s late.
smtp_accept_queue_per_connection = 0
acl_smtp_rcpt = acl_rcpt
begin acl
acl_rcpt:
  deny domains = *.invalid
       message = no mailbox here: .invalid domains never take mail (RFC 2606)
${xoauth2 ? '  # Signing in (XOAUTH2) is required here: mail from a client that did not is refused at RCPT.\n  deny !authenticated = *\n       message = sign in first (AUTH XOAUTH2)\n' : ''}  accept hosts = 127.0.0.1
  deny
begin routers
undeliverable:
  driver = redirect
  domains = ${UNDELIVERABLE_DOMAIN}
  allow_fail
  data = :fail: no mailbox here: ${UNDELIVERABLE_DOMAIN} takes mail and bounces it
local_mailboxes:
  driver = accept
  domains = ${LOCAL_MAIL_DOMAIN}
  local_part_suffix = +*
  local_part_suffix_optional
  # A mailbox exists when its folder does (scripts/imap.ts makes one per user); the lookup also
  # gives the untainted name exim needs to build the path from.
  local_parts = dsearch;${mailboxes}
  transport = local_maildir
everyone:
  driver = accept
  transport = maildir
begin transports
local_maildir:
  driver = appendfile
  directory = ${mailboxes}/\${local_part_data}/Maildir
  maildir_format
  create_directory
  user = ${user}
  mode = 0644
  directory_mode = 0755
  envelope_to_add
  return_path_add
maildir:
  driver = appendfile
  directory = ${maildir}
  maildir_format
  create_directory
  user = ${user}
  mode = 0644
  directory_mode = 0755
  envelope_to_add
  return_path_add
begin retry
* * F,1m,1m
${xoauth2 ? xoauth2Authenticator(xoauth2) : ''}`;
}

/** Deliveries run as exim's own unprivileged user (exim never delivers as root). */
function deliveryUser(): string {
  const probe = spawnSync('id', ['-u', 'Debian-exim']);
  return probe.status === 0 ? 'Debian-exim' : (process.env.USER ?? 'nobody');
}

/** Starts exim4 as a daemon on a free loopback port, its files under `dir`; with `xoauth2`, it takes mail only from a client signed in with a live token. */
export async function startSmtp(opts: { dir: string; port?: number; xoauth2?: XOAuth2Check }): Promise<RunningSmtp> {
  ensureSmtpServer();
  const dir = path.resolve(opts.dir);
  mkdirSync(path.join(dir, 'spool'), { recursive: true });
  mkdirSync(path.join(dir, 'log'), { recursive: true });
  // exim never delivers as root: its own user writes the Maildir, and must reach it. A project folder
  // may sit below a directory only its owner can enter (a home, a mkdtemp folder), so the Maildir lives
  // in a folder of its own under the system's temporary directory (one per project folder, reused).
  const maildirRoot = path.join(os.tmpdir(), `cuadra-mail-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
  mkdirSync(maildirRoot, { recursive: true });
  chmodSync(maildirRoot, 0o777);
  const maildir = path.join(maildirRoot, 'Maildir');
  const mailboxes = path.join(maildirRoot, 'mailboxes');
  mkdirSync(mailboxes, { recursive: true });
  chmodSync(mailboxes, 0o777);
  const port = opts.port ?? (await freePort());
  const conf = path.join(dir, 'exim.conf');
  writeFileSync(conf, config(dir, maildir, mailboxes, port, opts.xoauth2));
  const pidFile = path.join(dir, 'exim.pid');
  // A pid file left by an earlier run would be read before the new daemon writes its own.
  rmSync(pidFile, { force: true });
  const started = spawnSync(EXIM, ['-C', conf, '-bd', '-q30s'], { encoding: 'utf8' });
  if (started.status !== 0) throw new Error(`exim4 did not start: ${started.stderr || started.stdout}`);
  let pid = 0;
  for (let i = 0; i < 100 && !pid; i++) {
    if (existsSync(pidFile)) pid = Number(readFileSync(pidFile, 'utf8').trim()) || 0;
    if (!pid) await new Promise((r) => setTimeout(r, 50));
  }
  if (!pid) throw new Error(`exim4 wrote no pid file; see ${dir}/log/mainlog`);
  noteRunProcess(pid);
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    pid,
    maildir,
    mailboxes,
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}

// A delivered message's file is never rewritten (Maildir: written under tmp/, then renamed in; a change
// of flags is a new name), so each file is read once per process however often a test polls the run's
// one Maildir, which holds every message of the run.
const readBefore = new Map<string, string>();

/**
 * Orders Maildir file names by delivery: exim names a message `<seconds>.M<microseconds>P<pid>.<host>`
 * with the microseconds not zero-padded, so two messages of one second sort wrongly as text
 * (`M99999` after `M605011`). Names of another shape keep their text order.
 */
function byDelivery(a: string, b: string): number {
  const time = (name: string) => /^(\d+)\.M(\d+)P/.exec(name);
  const ta = time(a);
  const tb = time(b);
  if (ta && tb) return Number(ta[1]) - Number(tb[1]) || Number(ta[2]) - Number(tb[2]) || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The messages delivered to a Maildir, oldest first, as raw RFC 5322 text. */
export function readMaildir(maildir: string): { file: string; raw: string }[] {
  const out: { file: string; raw: string }[] = [];
  for (const sub of ['new', 'cur']) {
    const folder = path.join(maildir, sub);
    if (!existsSync(folder)) continue;
    for (const file of readdirSync(folder).sort(byDelivery)) {
      const full = path.join(folder, file);
      let raw = readBefore.get(full);
      if (raw === undefined) {
        raw = readFileSync(full, 'utf8');
        readBefore.set(full, raw);
      }
      out.push({ file, raw });
    }
  }
  return out;
}
