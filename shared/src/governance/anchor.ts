import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/**
 * Signatures that anchor the ledger outside its database (CONTRACT.md §9, Ledger receipts).
 *
 * The signed statement is "entry `seq` of workspace `ws`'s chain has hash `hash`"; because
 * every hash covers the one before it, it also commits to every earlier entry. Its bytes are the
 * UTF-8 text
 *
 *     cuadra-ledger/v1\n<workspace>\n<seq in decimal>\n<hash, 64 lowercase hex>
 *
 * signed with Ed25519 (RFC 8032, no pre-hash); the signature is written base64url without
 * padding. A receipt is `<seq>;<hash>;<signature>`; a checkpoint is the same statement kept by
 * the service. The private key comes from the environment (`CUADRA_LEDGER_KEY`: a PKCS#8 PEM,
 * or that PEM in base64) and is never stored in the database; its public key verifies.
 */
export const RECEIPT_CONTEXT = 'cuadra-ledger/v1';

/**
 * The context of a signed head: the same statement, made only for the newest entry as the ledger
 * stores it in the database. A distinct context, so no receipt or checkpoint (which an attacker
 * with read access to the database sees in quantity) can be put in its place: rolling the head
 * back takes a head this key once signed.
 */
export const HEAD_CONTEXT = 'cuadra-ledger-head/v1';

/** The bytes a ledger signature covers (`context`: an entry's receipt or checkpoint by default, else a head). */
export function statementBytes(workspace: string, seq: number, hash: string, context: string = RECEIPT_CONTEXT): Buffer {
  return Buffer.from(`${context}\n${workspace}\n${seq}\n${hash}`, 'utf8');
}

/** A parsed `Ledger-Receipt` value. */
export interface Receipt { seq: number; hash: string; signature: string }

/** Parses `<seq>;<hash>;<signature>`; `null` when it is not one. */
export function parseReceipt(text: string): Receipt | null {
  const m = /^([1-9][0-9]{0,15});([0-9a-f]{64});([A-Za-z0-9_-]{86})$/.exec(text.trim());
  return m ? { seq: Number(m[1]), hash: m[2], signature: m[3] } : null;
}

export function formatReceipt(r: Receipt): string {
  return `${r.seq};${r.hash};${r.signature}`;
}

/** Signs and checks ledger statements with the anchor key. */
export class LedgerSigner {
  readonly #private: KeyObject | null;
  readonly publicKey: KeyObject;

  constructor(key: { privateKey?: string | KeyObject; publicKey?: string | KeyObject }) {
    this.#private = key.privateKey ? (typeof key.privateKey === 'string' ? createPrivateKey(key.privateKey) : key.privateKey) : null;
    const pub = key.publicKey ?? (this.#private ? createPublicKey(this.#private) : undefined);
    if (!pub) throw new Error('LedgerSigner needs a private or a public key');
    this.publicKey = typeof pub === 'string' ? createPublicKey(pub) : pub;
    if (this.publicKey.asymmetricKeyType !== 'ed25519') throw new Error('the ledger key must be Ed25519');
  }

  /**
   * The signer the environment names (`CUADRA_LEDGER_KEY`, PEM or base64 of PEM), or `null`
   * when none is set: the ledger then still chains but gives no receipts (a deployment without
   * a key is unanchored, and `ledger.verify` says so).
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): LedgerSigner | null {
    const raw = env.CUADRA_LEDGER_KEY?.trim();
    if (!raw) return null;
    const pem = raw.startsWith('-----') ? raw : Buffer.from(raw, 'base64').toString('utf8');
    return new LedgerSigner({ privateKey: pem });
  }

  get canSign(): boolean {
    return this.#private !== null;
  }

  sign(workspace: string, seq: number, hash: string, context: string = RECEIPT_CONTEXT): string {
    if (!this.#private) throw new Error('no ledger private key');
    return sign(null, statementBytes(workspace, seq, hash, context), this.#private).toString('base64url');
  }

  /**
   * The same signature, computed on libuv's thread pool (Node's callback form of `crypto.sign`):
   * about 30 µs of Ed25519 per entry that the service's one JavaScript thread does not spend.
   */
  signAsync(workspace: string, seq: number, hash: string, context: string = RECEIPT_CONTEXT): Promise<string> {
    const key = this.#private;
    if (!key) return Promise.reject(new Error('no ledger private key'));
    return new Promise((resolve, reject) => {
      sign(null, statementBytes(workspace, seq, hash, context), key, (err, signature) => (err ? reject(err) : resolve(signature.toString('base64url'))));
    });
  }

  verify(workspace: string, seq: number, hash: string, signature: string, context: string = RECEIPT_CONTEXT): boolean {
    try {
      const sig = Buffer.from(signature, 'base64url');
      if (sig.length !== 64) return false;
      return verify(null, statementBytes(workspace, seq, hash, context), this.publicKey, sig);
    } catch {
      return false;
    }
  }

  /** The public key as SPKI PEM (what a caller needs to check receipts). */
  publicKeyPem(): string {
    return this.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  }
}
