// Cuadra's dashboard as an MCP App (io.modelcontextprotocol/ui, SEP-1865, 2026-01-26): the View's
// side of the host bridge. It talks to nothing but its host, with JSON-RPC 2.0 over postMessage
// ("Communication Protocol"): `ui/initialize` then `ui/notifications/initialized`; the dashboard
// arrives as `ui/notifications/tool-input` (the dashboards.render arguments) and
// `ui/notifications/tool-result` (its result); every further call is a `tools/call` the host
// relays to the server, where the one pipeline (policies, approvals, ledger) answers it. The
// drawing is canvas.js's, given `window.CuadraCanvasHost` in place of its REST calls.
'use strict';
(() => {
  const PROTOCOL_VERSION = '2026-01-26';
  const parent = window.parent;
  let nextId = 1;
  const pending = new Map();
  const send = (message) => parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
  const notify = (method, params) => send({ method, params });

  let toolInput;
  let toolResult;
  let settle;
  const rendered = new Promise((resolve) => { settle = resolve; });
  const settleWhenBoth = () => { if (toolInput && toolResult) settle({ input: toolInput, result: toolResult }); };

  /** A tools/call result as canvas.js reads a REST answer: 200 `{output}`, 202 `{approval_id}`, or the refusal body. */
  const asAnswer = (result) => {
    const body = result.structuredContent || {};
    if (result.isError) return { status: 400, body };
    if (body.status === 'pending_approval' && typeof body.approval_id === 'string') return { status: 202, body };
    return { status: 200, body: { output: body } };
  };
  const api = async (tool, input) => {
    try {
      return asAnswer(await request('tools/call', { name: tool, arguments: input }));
    } catch (err) {
      return { status: 502, body: { code: 'unavailable', error: String(err && err.message ? err.message : err) } };
    }
  };
  const schemas = new Map();
  const describe = (tool) => {
    if (!schemas.has(tool)) schemas.set(tool, api('tools.describe', { name: tool }).then((a) => (a.status === 200 ? a.body.output.tool : undefined)));
    return schemas.get(tool);
  };

  /** The host's theme and style variables (SEP-1865 "Theming"); the view keeps its own values for what the host leaves out. */
  const applyContext = (context) => {
    if (!context) return;
    if (context.theme === 'dark' || context.theme === 'light') document.documentElement.style.colorScheme = context.theme;
    for (const [k, v] of Object.entries(context.styles?.variables || {})) if (typeof v === 'string' && k.startsWith('--')) document.documentElement.style.setProperty(k, v);
  };

  window.addEventListener('message', (event) => {
    // Only the host speaks to the view: anything from another window is ignored.
    if (event.source !== parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.id !== undefined && m.method === undefined) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error.message || 'The host refused the request.')); else p.resolve(m.result);
      return;
    }
    switch (m.method) {
      case 'ui/notifications/tool-input': toolInput = m.params?.arguments || {}; settleWhenBoth(); break;
      case 'ui/notifications/tool-result': toolResult = asAnswer(m.params || {}); settleWhenBoth(); break;
      case 'ui/notifications/tool-cancelled': toolResult = { status: 499, body: { code: 'cancelled', error: m.params?.reason || 'The call was cancelled.' } }; toolInput = toolInput || {}; settleWhenBoth(); break;
      case 'ui/notifications/host-context-changed': applyContext(m.params); break;
      case 'ui/resource-teardown': case 'ping': if (m.id !== undefined) send({ id: m.id, result: {} }); break;
      default: if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'Method not found' } });
    }
  });

  window.CuadraCanvasHost = { api, describe, rendered };

  (async () => {
    const init = await request('ui/initialize', {
      appInfo: { name: 'cuadra-dashboard', version: '1.0.0' },
      appCapabilities: { availableDisplayModes: ['inline'] },
      protocolVersion: PROTOCOL_VERSION,
    });
    applyContext(init && init.hostContext);
    notify('ui/notifications/initialized', {});
    // The view's size, for hosts that size the frame to it ("Container Dimensions").
    let last = '';
    new ResizeObserver(() => {
      const size = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) };
      const key = `${size.width}x${size.height}`;
      if (key !== last) { last = key; notify('ui/notifications/size-changed', size); }
    }).observe(document.documentElement);
  })().catch(() => {
    document.getElementById('canvas')?.replaceChildren(Object.assign(document.createElement('p'), { className: 'block-error', role: 'alert', textContent: 'The host did not answer.' }));
  });
})();
