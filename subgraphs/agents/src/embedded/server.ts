import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { getLlama, LlamaCompletion, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { grammarSchema, type GrammarSchema } from './grammar.ts';

/**
 * The embedded model served OpenAI-compatibly: llama.cpp (node-llama-cpp's prebuilt CPU build)
 * runs SmolLM2-135M-Instruct from its GGUF file, and this endpoint speaks the part of the OpenAI
 * Chat Completions protocol the agent runtime and the `openai` client use — `GET /v1/models`,
 * `POST /v1/chat/completions` with `messages`, `tools`, `tool_choice`, `max_tokens`,
 * `temperature`, `seed`, `response_format`. With tools, the answer is generated under a grammar
 * built from the tools' JSON Schemas (one object: a tool's name and its arguments, or the final
 * content), so every tool call parses; it is then answered as OpenAI `tool_calls`.
 */
export interface EmbeddedOptions {
  modelPath: string;
  /** llama.cpp threads: always explicit (the default oversubscribed this machine's 2 cores, INFRA.md). */
  threads: number;
  contextSize?: number;
  /** The name `/v1/models` lists and answers carry. */
  modelName?: string;
}

/** Largest completion one request may ask for: the model is small, its useful answers are short. */
export const MAX_COMPLETION_TOKENS = 512;

interface ChatMessage { role: string; content?: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string; name?: string }
interface ChatTool { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }
interface ChatRequest {
  model?: string; messages: ChatMessage[]; tools?: ChatTool[]; tool_choice?: unknown; max_tokens?: number; max_completion_tokens?: number;
  temperature?: number; seed?: number; response_format?: { type: string; json_schema?: { schema?: unknown } };
  /** OpenAI's key for prompt caching: requests that carry the same one may reuse each other's evaluated prompt. */
  prompt_cache_key?: unknown;
}

/** Text of a message's content (a string, or OpenAI's array of text parts). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  return content == null ? '' : JSON.stringify(content);
}

/** The tools a request lets the model call now (`tool_choice`: auto, required, none, or one function). */
function offeredTools(req: ChatRequest): { tools: ChatTool[]; mayAnswer: boolean } {
  const tools = req.tools ?? [];
  const choice = req.tool_choice;
  if (choice === 'none' || tools.length === 0) return { tools: [], mayAnswer: true };
  if (choice && typeof choice === 'object') {
    const name = (choice as { function?: { name?: string } }).function?.name;
    return { tools: tools.filter((t) => t.function.name === name), mayAnswer: false };
  }
  return { tools, mayAnswer: choice !== 'required' };
}

/**
 * The prompt in the model's chat format (SmolLM2 is ChatML, per its GGUF's chat template). A tool's
 * result is its own `tool` turn, apart from the person's and the system's words. What may be done
 * now (the tools offered to this step, or the final answer) is a closing system turn after the
 * conversation, not part of the first one: the steps of a run differ only there, so each step's
 * prompt begins with the whole of the one before and the model evaluates only what is new
 * (`prompt_cache_key`, {@link startEmbeddedServer}).
 */
export function chatPrompt(req: ChatRequest, tools: ChatTool[], mayAnswer: boolean, jsonAnswer = false): string {
  const turns: string[] = [];
  const system = req.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n\n');
  let toolText = '';
  if (tools.length > 0) {
    toolText = 'Answer with one JSON object. To call a tool: {"name": <tool>, "arguments": {…}}.'
      + (mayAnswer ? ' When the work is done: {"content": <your answer>}.' : '')
      + '\nTools:\n' + tools.map((t) => `- ${t.function.name}: ${t.function.description ?? ''}`.trim()).join('\n');
  } else if (jsonAnswer) {
    toolText = 'No tool may be called now. Answer with one JSON object: {"content": <your answer>}.';
  }
  if (system) turns.push(`<|im_start|>system\n${system}<|im_end|>`);
  for (const m of req.messages) {
    if (m.role === 'system' || m.role === 'developer') continue;
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => JSON.stringify({ name: c.function.name, arguments: safeJson(c.function.arguments) }));
      turns.push(`<|im_start|>assistant\n${calls.length ? calls.join('\n') : textOf(m.content)}<|im_end|>`);
    } else if (m.role === 'tool') {
      turns.push(`<|im_start|>tool\n${textOf(m.content)}<|im_end|>`);
    } else {
      turns.push(`<|im_start|>user\n${textOf(m.content)}<|im_end|>`);
    }
  }
  if (toolText) turns.push(`<|im_start|>system\n${toolText}<|im_end|>`);
  turns.push('<|im_start|>assistant\n');
  return turns.join('\n');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/**
 * The longest final answer (characters) that fits `maxTokens` whole, at worst: 2 tokens a character
 * plus the JSON around it (`{"content": "…"}`, under 8 tokens). An answer the grammar lets grow past
 * the budget is cut, and a cut answer fails the run (seen: the last step of a run rambling to 128 tokens).
 */
export function contentLimit(maxTokens: number): number {
  return Math.max(1, Math.min(400, Math.floor((maxTokens - 8) / 2)));
}

/** The grammar of one answer: a call of one offered tool (its arguments by its schema), or the final content. */
export function answerSchema(tools: ChatTool[], mayAnswer: boolean, contentMax = 400): GrammarSchema {
  const options: GrammarSchema[] = tools.map((t) => ({
    type: 'object', required: ['name', 'arguments'],
    properties: { name: { const: t.function.name }, arguments: grammarSchema(t.function.parameters ?? { type: 'object' }) },
  }));
  if (mayAnswer) options.push({ type: 'object', required: ['content'], properties: { content: { type: 'string', maxLength: contentMax } } });
  return options.length === 1 ? options[0] : { oneOf: options };
}

/**
 * How many of the prompt's tokens the sequence already holds evaluated: the longest run both begin
 * with (after the beginning-of-sequence token `bos`, when the sequence holds one the prompt lacks),
 * less the prompt's last token, which is evaluated again to generate from it.
 */
export function heldPrefix(held: readonly number[], prompt: readonly number[], bos: number | null = null): number {
  const offset = bos !== null && held[0] === bos && prompt[0] !== bos ? 1 : 0;
  let n = 0;
  while (n < prompt.length - 1 && offset + n < held.length && held[offset + n] === prompt[n]) n++;
  return n;
}

/** A refusal in OpenAI's error shape. */
function fail(res: ServerResponse, status: number, message: string, type = 'invalid_request_error'): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, code: null } }));
}

async function readJson(req: IncomingMessage, limit = 4 * 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error('too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** The running embedded model server. */
export interface EmbeddedServer { url: string; server: Server; close(): Promise<void> }

/** Loads the model and serves it on `port` (0: any free port) of the loopback interface. */
export async function startEmbeddedServer(opts: EmbeddedOptions, port = 0): Promise<EmbeddedServer> {
  const llama: Llama = await getLlama({ gpu: false, build: 'never' });
  const model: LlamaModel = await llama.loadModel({ modelPath: opts.modelPath });
  const context: LlamaContext = await model.createContext({ contextSize: opts.contextSize ?? 4096, threads: opts.threads });
  const sequence = context.getSequence();
  const completion = new LlamaCompletion({ contextSequence: sequence });
  const modelName = opts.modelName ?? 'smollm2-135m-instruct';
  const grammars = new Map<string, Awaited<ReturnType<Llama['createGrammarForJsonSchema']>>>();
  // One generation at a time: one context sequence, two cores.
  let queue: Promise<unknown> = Promise.resolve();
  // The `prompt_cache_key` of the conversation whose tokens the sequence holds (null: none may reuse them).
  let heldFor: string | null = null;

  const grammarFor = async (schema: GrammarSchema) => {
    const key = JSON.stringify(schema);
    let g = grammars.get(key);
    if (!g) {
      g = await llama.createGrammarForJsonSchema(schema as never);
      if (grammars.size > 200) grammars.clear();
      grammars.set(key, g);
    }
    return g;
  };

  async function complete(body: ChatRequest) {
    const { tools, mayAnswer } = offeredTools(body);
    // Tools declared but none callable now (`tool_choice: "none"`, a run's last step): the final answer is asked in
    // the JSON form of every earlier turn, under a grammar that keeps it inside the token budget.
    const jsonAnswer = tools.length === 0 && (body.tools?.length ?? 0) > 0;
    const prompt = chatPrompt(body, tools, mayAnswer, jsonAnswer);
    const tokens = model.tokenize(prompt, true);
    const maxTokens = Math.max(1, Math.min(body.max_completion_tokens ?? body.max_tokens ?? 256, MAX_COMPLETION_TOKENS));
    if (tokens.length + maxTokens > context.contextSize) {
      return { error: `The conversation (${tokens.length} tokens) and the answer asked for do not fit the model's context of ${context.contextSize} tokens.` } as const;
    }
    let schema: GrammarSchema | null = null;
    if (tools.length > 0 || jsonAnswer) schema = answerSchema(tools, mayAnswer, contentLimit(maxTokens));
    else if (body.response_format?.type === 'json_schema' && body.response_format.json_schema?.schema) schema = grammarSchema(body.response_format.json_schema.schema);
    const grammar = schema ? await grammarFor(schema) : body.response_format?.type === 'json_object' ? await llama.getGrammarFor('json') : undefined;
    // A request of another conversation (another `prompt_cache_key`, or none) starts from an empty sequence: nothing of
    // one conversation is kept for another, not even as a quicker answer to a prompt that begins the same way (which would
    // tell one workspace what another's prompts begin with). The next step of the same conversation keeps the tokens its
    // prompt begins with, already evaluated (llama.cpp's state for them depends on those tokens only), and the
    // completion evaluates the rest.
    const key = typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '' ? body.prompt_cache_key : null;
    if (key === null || key !== heldFor) await sequence.clearHistory();
    heldFor = key;
    const cachedTokens = heldPrefix(sequence.contextTokens, tokens, model.tokens.bos);
    const { response, metadata } = await completion.generateCompletionWithMeta(tokens, {
      maxTokens, temperature: body.temperature ?? 0, seed: body.seed, grammar,
    });
    const completionTokens = model.tokenize(response, false).length;
    const usage = {
      prompt_tokens: tokens.length, completion_tokens: completionTokens, total_tokens: tokens.length + completionTokens,
      prompt_tokens_details: { cached_tokens: cachedTokens },
    };
    let message: Record<string, unknown> = { role: 'assistant', content: response };
    let finish = metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
    if ((tools.length > 0 || jsonAnswer) && finish !== 'length') {
      const parsed = safeJson(response) as { name?: string; arguments?: unknown; content?: string };
      if (typeof parsed.name === 'string') {
        message = { role: 'assistant', content: null, tool_calls: [{ id: `call_${randomBytes(8).toString('hex')}`, type: 'function', function: { name: parsed.name, arguments: JSON.stringify(parsed.arguments ?? {}) } }] };
        finish = 'tool_calls';
      } else {
        message = { role: 'assistant', content: parsed.content ?? '' };
      }
    }
    return {
      id: `chatcmpl-${randomBytes(8).toString('hex')}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: modelName,
      choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage,
    };
  }

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method === 'GET' && (url.pathname === '/healthz' || url.pathname === '/health')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ status: 'ok', model: modelName }));
      }
      if (req.method === 'GET' && url.pathname === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ object: 'list', data: [{ id: modelName, object: 'model', created: 0, owned_by: 'cuadra-embedded' }] }));
      }
      if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions') return fail(res, 404, `No route ${req.method} ${url.pathname}.`);
      let body: ChatRequest;
      try {
        body = (await readJson(req)) as ChatRequest;
      } catch {
        return fail(res, 400, 'The body must be a JSON object of at most 4 MiB.');
      }
      if (!body || !Array.isArray(body.messages) || body.messages.length === 0) return fail(res, 400, 'messages must be a non-empty array.');
      if ((body as { stream?: unknown }).stream) return fail(res, 400, 'Streaming is not offered by the embedded model.');
      const run = queue.then(() => complete(body));
      queue = run.catch(() => undefined);
      const answer = await run;
      if ('error' in answer) return fail(res, 400, answer.error as string, 'context_length_exceeded');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    } catch (err) {
      if (!res.headersSent) fail(res, 500, `The embedded model failed: ${(err as Error).message}`, 'server_error');
      else res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/v1`,
    server,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}
