import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of the model: tool calls, or the final text; optionally held back until released. */
export interface ScriptedReply {
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
  content?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** The first request of this step is answered only once `release(tag, step)` is called (to kill a process while it waits); a repeat is answered at once. */
  hold?: boolean;
  /** The first request of this step is answered with this HTTP error status (as a provider does when overloaded: 429, 503), a repeat as scripted. */
  fail?: number;
  /** The finish reason to report (default: tool_calls for calls, stop for text); `length`: the answer was cut. */
  finish?: string;
}

/** A request the scripted model received, as sent. */
export interface ReceivedRequest { tag: string; step: number; body: Record<string, any>; authorization: string | undefined }

/**
 * An OpenAI-compatible Chat Completions server written for the tests: it *is* the outside model
 * (the runtime's `openai` client talks to it over real HTTP). Replies are scripted per
 * conversation — the tag in `[brackets]` at the start of the user's message — and chosen by the
 * step: the number of assistant turns already in the request, so a resumed run that asks step k
 * again gets the same answer k. Every request is kept for the test to read.
 */
export async function startScriptedModel() {
  const scripts = new Map<string, ScriptedReply[]>();
  const requests: ReceivedRequest[] = [];
  const held = new Map<string, () => void>();
  const failed = new Set<string>();
  const arrived = new Map<string, () => void>();
  const arrivals = new Map<string, Promise<void>>();
  const key = (tag: string, step: number) => `${tag}#${step}`;
  const arrival = (tag: string, step: number) => {
    const k = key(tag, step);
    if (!arrivals.has(k)) arrivals.set(k, new Promise<void>((resolve) => arrived.set(k, resolve)));
    return arrivals.get(k)!;
  };

  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
  };

  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = await read(req);
    const user = (body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user');
    const tag = /^\[([^\]]+)\]/.exec(String(user?.content ?? ''))?.[1] ?? '';
    const step = (body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
    requests.push({ tag, step, body, authorization: req.headers.authorization });
    arrival(tag, step);
    arrived.get(key(tag, step))?.();
    const reply = scripts.get(tag)?.[step];
    if (!reply) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no scripted reply for ${tag} step ${step}` } }));
      return;
    }
    if (reply.fail && !failed.has(key(tag, step))) {
      failed.add(key(tag, step));
      res.writeHead(reply.fail, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ error: { message: `scripted failure ${reply.fail}`, type: 'server_error' } }));
      return;
    }
    if (reply.hold && !held.has(key(tag, step))) await new Promise<void>((resolve) => held.set(key(tag, step), resolve));
    const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 20 };
    const message = reply.tool_calls
      ? { role: 'assistant', content: null, tool_calls: reply.tool_calls.map((c, i) => ({ id: `call_${tag}_${step}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }
      : { role: 'assistant', content: reply.content ?? '' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: `chatcmpl-${tag}-${step}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: body.model,
      choices: [{ index: 0, message, finish_reason: reply.finish ?? (reply.tool_calls ? 'tool_calls' : 'stop'), logprobs: null }],
      usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.prompt_tokens + usage.completion_tokens, ...(usage.cached_tokens ? { prompt_tokens_details: { cached_tokens: usage.cached_tokens } } : {}) },
    }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    /** Sets the replies of conversation `tag`, step by step. */
    script(tag: string, replies: ScriptedReply[]) {
      scripts.set(tag, replies);
    },
    /** Resolves when the request of `tag`'s step arrives. */
    arrived: arrival,
    /** Answers a held request. */
    release(tag: string, step: number) {
      held.get(key(tag, step))?.();
    },
    close: () => new Promise<void>((resolve) => {
      for (const r of held.values()) r();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
