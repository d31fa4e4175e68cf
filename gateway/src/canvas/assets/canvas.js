// Cuadra dashboard page: draws a dashboard from dashboards.render, follows selections, params and
// the workspace ledger (/v1/events), and runs action tools — all through the public REST API with
// the page's own access token. Served by the gateway; no external assets, no inline script.
// Inside an MCP host (the dashboard app, ui://cuadra/dashboard) the same drawing runs with the
// host's bridge (mcp-app.js, window.CuadraCanvasHost) in place of REST: every call is a tools/call
// the host relays, and the dashboard comes from the host's tool input and result.
'use strict';
(() => {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
  const host = window.CuadraCanvasHost;
  const token = meta('cuadra-token');
  let dashboardId = meta('cuadra-dashboard');
  const root = document.getElementById('canvas');
  const liveStatus = document.getElementById('live-status');
  const SVG = 'http://www.w3.org/2000/svg';
  // The page's language (es-CO by default) and the blocks' words in it, from the server's catalog.
  const LOCALE = meta('cuadra-locale') === 'en' ? 'en-US' : 'es-CO';
  const TEXT = (() => { try { return JSON.parse(document.getElementById('cuadra-text')?.textContent || '{}'); } catch { return {}; } })();
  const say = (key, vars) => String(TEXT[key] ?? key).replace(/\{(\w+)\}/g, (m, n) => (vars && n in vars ? String(vars[n]) : m));
  const COLUMNS = new Map(String(TEXT.columns || '').split(';').filter(Boolean).map((p) => p.split('=')));

  /** Saved block definitions by path ("0.2.1"), rendered blocks by path, DOM slots by path. */
  const defs = new Map();
  const slots = new Map();
  const values = { params: {}, selections: {} };
  let toolSchemas = null;

  const api = host ? host.api : async (tool, input, headers = {}) => {
    const res = await fetch(`/v1/tools/${encodeURIComponent(tool)}:invoke`, {
      method: 'POST', headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(input),
    });
    const body = await res.json().catch(() => ({ error: say('unexpected'), code: 'internal' }));
    if (res.status === 401) location.reload();
    return { status: res.status, body };
  };

  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };
  const svg = (tag, attrs = {}, ...children) => {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    for (const c of children.flat()) if (c) node.append(c);
    return node;
  };

  // ------------------------------------------------------------------ formatting
  const fmtNumber = (n) => (typeof n === 'number' ? new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 }).format(n) : n === undefined || n === null ? '—' : String(n));
  const fmtMoney = (cents, currency) => {
    if (typeof cents !== 'number') return '—';
    try {
      // `COP 1.200.000` (es-CO), `COP 1,200,000` (en): the code, as the pages write money.
      return new Intl.NumberFormat(LOCALE, { style: 'currency', currency: currency || 'USD', currencyDisplay: 'code', maximumFractionDigits: 0 }).format(cents / 100).replace(/\u00a0/g, ' ');
    } catch {
      return fmtNumber(cents / 100);
    }
  };
  const fmtValue = (v, unit, currency) => (unit === 'money' ? fmtMoney(v, currency) : unit === 'ratio' ? `${fmtNumber(v / 100)} %` : fmtNumber(v));
  /** `2026-11-22` → `22/11/2026` (es-CO) or `11/22/2026` (en); a timestamp keeps its time of day. */
  const fmtDate = (v) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})(T.*)?$/.exec(String(v ?? ''));
    if (!m) return v === null || v === undefined ? '' : String(v);
    if (!m[4]) return LOCALE === 'en-US' ? `${m[2]}/${m[3]}/${m[1]}` : `${m[3]}/${m[2]}/${m[1]}`;
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? String(v) : new Intl.DateTimeFormat(LOCALE, { day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'America/Bogota' }).format(d).replace(/\u00a0/g, ' ');
  };
  const fmtCell = (key, v, currency) => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) return fmtDate(v);
    if (typeof v === 'number' && /amount|total|balance|price|subtotal|revenue|outstanding|paid|value/.test(key)) return fmtMoney(v, currency);
    if (typeof v === 'object') return Array.isArray(v) ? v.join(', ') : Object.values(v).filter((x) => typeof x !== 'object').join(' · ');
    return String(v);
  };
  const label = (key) => COLUMNS.get(key) ?? key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

  /** Markdown, minimally and safely: paragraphs, **bold**, *italic*, `code`, - lists. Never HTML. */
  const markdown = (text) => {
    const frag = document.createDocumentFragment();
    const inline = (line) => {
      const out = [];
      const re = /(\*\*[^*]+\*\*|\*[^*]+\*|`[^`]+`)/g;
      let last = 0;
      for (const m of line.matchAll(re)) {
        out.push(line.slice(last, m.index));
        const t = m[0];
        out.push(t.startsWith('**') ? el('strong', { text: t.slice(2, -2) }) : t.startsWith('`') ? el('code', { text: t.slice(1, -1) }) : el('em', { text: t.slice(1, -1) }));
        last = m.index + t.length;
      }
      out.push(line.slice(last));
      return out;
    };
    for (const para of String(text ?? '').split(/\n{2,}/)) {
      const lines = para.split('\n');
      if (lines.every((l) => /^\s*[-*] /.test(l))) frag.append(el('ul', {}, lines.map((l) => el('li', {}, inline(l.replace(/^\s*[-*] /, ''))))));
      else frag.append(el('p', {}, inline(lines.join(' '))));
    }
    return frag;
  };

  // ------------------------------------------------------------------ charts (SVG)
  const PALETTE = ['#1f4fbf', '#b45309', '#0f766e', '#9d174d', '#4d7c0f', '#6d28d9'];
  /** Line, area or bar chart of `points` [{label, values: {series: n}}]; each bucket is a focusable button when `onPick`. */
  const xyChart = (kind, points, series, unit, currency, onPick, title) => {
    const W = 600, H = 220, L = 56, R = 8, T = 10, B = 28;
    const all = points.flatMap((p) => series.map((s) => p.values[s] ?? 0));
    const max = Math.max(1, ...all), min = Math.min(0, ...all);
    const x = (i) => L + (points.length <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (points.length - 1));
    const bw = (W - L - R) / Math.max(points.length, 1);
    const y = (v) => T + (H - T - B) * (1 - (v - min) / (max - min || 1));
    // A group, not an image: its period buckets are focusable buttons (an image may hold nothing interactive).
    const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'group', 'aria-label': `${title || say('chart')}: ${say('periods', { n: points.length })}` });
    for (let k = 0; k <= 4; k++) {
      const v = min + ((max - min) * k) / 4;
      g.append(svg('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'gridline' }));
      const t = svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' });
      t.textContent = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 }).format(unit === 'money' ? v / 100 : v);
      g.append(t);
    }
    const step = Math.max(1, Math.ceil(points.length / 6));
    points.forEach((p, i) => {
      if (i % step) return;
      const t = svg('text', { x: kind === 'bar' ? L + bw * i + bw / 2 : x(i), y: H - 8, 'text-anchor': 'middle', class: 'axis' });
      t.textContent = p.label;
      g.append(t);
    });
    series.forEach((s, si) => {
      const color = PALETTE[si % PALETTE.length];
      if (kind === 'bar') {
        const w = bw / series.length;
        points.forEach((p, i) => {
          const v = p.values[s] ?? 0;
          g.append(svg('rect', { x: L + bw * i + w * si + 1, y: Math.min(y(v), y(0)), width: Math.max(1, w - 2), height: Math.abs(y(0) - y(v)), fill: color }));
        });
      } else {
        const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.values[s] ?? 0).toFixed(1)}`).join(' ');
        if (kind === 'area' && points.length) g.append(svg('path', { d: `${d} L${x(points.length - 1)},${y(0)} L${x(0)},${y(0)} Z`, fill: color, 'fill-opacity': '0.18' }));
        g.append(svg('path', { d, fill: 'none', stroke: color, 'stroke-width': 2.5 }));
        points.forEach((p, i) => g.append(svg('circle', { cx: x(i), cy: y(p.values[s] ?? 0), r: 3, fill: color })));
      }
    });
    if (onPick) {
      points.forEach((p, i) => {
        const hit = svg('rect', { x: kind === 'bar' ? L + bw * i : x(i) - bw / 2, y: T, width: bw, height: H - T - B, class: 'bucket', tabindex: 0, role: 'button', 'aria-label': `${p.label}: ${series.map((s) => fmtValue(p.values[s], unit, currency)).join(', ')}` });
        const pick = () => onPick(p, hit);
        hit.addEventListener('click', pick);
        hit.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
        const tip = svg('title');
        tip.textContent = hit.getAttribute('aria-label');
        hit.append(tip);
        g.append(hit);
      });
    }
    return g;
  };
  const pieChart = (slices, unit, currency, title) => {
    const total = slices.reduce((a, s) => a + Math.max(0, s.value), 0) || 1;
    const g = svg('svg', { viewBox: '0 0 220 220', class: 'chart pie', role: 'img', 'aria-label': `${title || say('chart')}: ${slices.map((s) => `${s.label} ${fmtValue(s.value, unit, currency)}`).join('; ')}` });
    let a = -Math.PI / 2;
    slices.forEach((s, i) => {
      const frac = Math.max(0, s.value) / total;
      const b = a + frac * 2 * Math.PI;
      const large = b - a > Math.PI ? 1 : 0;
      const p = (t) => `${110 + 100 * Math.cos(t)},${110 + 100 * Math.sin(t)}`;
      g.append(frac >= 0.9999 ? svg('circle', { cx: 110, cy: 110, r: 100, fill: PALETTE[i % PALETTE.length] }) : svg('path', { d: `M110,110 L${p(a)} A100,100 0 ${large} 1 ${p(b)} Z`, fill: PALETTE[i % PALETTE.length] }));
      a = b;
    });
    const legend = el('ul', { class: 'legend' }, slices.map((s, i) => el('li', {}, el('span', { class: `swatch c${i % PALETTE.length}`, 'aria-hidden': 'true' }), `${s.label}: ${fmtValue(s.value, unit, currency)}`)));
    return el('div', { class: 'pie-wrap' }, g, legend);
  };
  const spark = (values) => {
    if (!values || values.length < 2) return null;
    const max = Math.max(...values), min = Math.min(...values);
    const d = values.map((v, i) => `${i ? 'L' : 'M'}${((i * 100) / (values.length - 1)).toFixed(1)},${(28 - (26 * (v - min)) / (max - min || 1)).toFixed(1)}`).join(' ');
    return svg('svg', { viewBox: '0 0 100 30', class: 'spark', 'aria-hidden': 'true', preserveAspectRatio: 'none' }, svg('path', { d, fill: 'none', stroke: '#1f4fbf', 'stroke-width': 2 }));
  };

  // ------------------------------------------------------------------ tables
  const COLUMN_SKIP = new Set(['id', 'workspace', 'customer_id', 'party_id']);
  const columnsOf = (rows) => {
    const keys = [];
    const shown = (v) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);
    for (const r of rows.slice(0, 20)) for (const k of Object.keys(r)) if (!keys.includes(k) && !COLUMN_SKIP.has(k) && rows.some((x) => shown(x[k]))) keys.push(k);
    return keys.slice(0, 6);
  };
  /** A table of rows; with a selector key, rows are selectable by click, Enter or Space. */
  const rowsTable = (rows, selectorKey, caption, currencyOf) => {
    if (!rows.length) return el('p', { class: 'empty', text: say('empty') });
    const cols = columnsOf(rows);
    const selected = selectorKey ? values.selections[selectorKey] : null;
    const body = rows.map((r) => {
      const isSel = selected && (selected.id !== undefined ? selected.id === r.id : JSON.stringify(selected) === JSON.stringify(r));
      const tr = el('tr', selectorKey ? { tabindex: 0, class: isSel ? 'row selectable selected' : 'row selectable', 'aria-selected': isSel ? 'true' : 'false' } : {}, cols.map((c) => el('td', { 'data-label': label(c), text: fmtCell(c, r[c], currencyOf(r)) })));
      if (selectorKey) {
        const pick = () => {
          for (const other of tr.parentElement.children) { other.classList.remove('selected'); other.setAttribute('aria-selected', 'false'); }
          tr.classList.add('selected');
          tr.setAttribute('aria-selected', 'true');
          select(selectorKey, r);
        };
        tr.addEventListener('click', pick);
        tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
      }
      return tr;
    });
    return el('div', { class: 'table-wrap' }, el('table', selectorKey ? { role: 'grid', 'aria-multiselectable': 'false' } : {},
      el('caption', { class: 'sr-only', text: selectorKey ? say('selectRow', { caption }) : caption }),
      el('thead', {}, el('tr', {}, cols.map((c) => el('th', { scope: 'col', text: label(c) })))),
      el('tbody', {}, body)));
  };

  // ------------------------------------------------------------------ blocks
  const SPAN_DEFAULT = (t) => (['chart', 'table', 'records', 'detail'].includes(t) ? 6 : 12);

  const drawLeaf = (b, path) => {
    const content = [];
    if (b.waiting) content.push(el('p', { class: 'waiting', text: b.bind || b.inputs?.some((i) => i.block) ? say('waitingRow') : say('waitingParams') }));
    else if (b.error && b.type !== 'stats') content.push(el('p', { class: 'block-error', role: 'note' }, el('strong', { text: say('unavailable') }), b.error.error, el('span', { class: 'code', text: ` (${b.error.code})` })));
    else content.push(...drawContent(b, path));
    return content;
  };

  const drawContent = (b, path) => {
    switch (b.type) {
      case 'text': return [markdown(b.markdown)];
      case 'callout': return [el('div', { class: `callout ${b.variant || 'info'}`, role: b.variant === 'danger' || b.variant === 'warning' ? 'alert' : 'note' }, markdown(b.markdown))];
      case 'heading': return [];
      case 'divider': return [el('hr')];
      case 'image': return b.url ? [el('img', { src: b.url, alt: b.title || '', loading: 'lazy' })] : [];
      case 'stats': return [el('ul', { class: 'cards' }, (b.items || []).map((card) => {
        const change = typeof card.change_bps === 'number' ? card.change_bps : null;
        const good = change === null ? '' : (change >= 0) === (card.polarity !== 'negative') ? 'up' : 'down';
        return el('li', { class: 'card' },
          el('span', { class: 'card-label', text: card.label }),
          card.error ? el('span', { class: 'block-error', text: card.error.error }) : el('span', { class: 'card-value', text: card.format === 'money' ? fmtMoney(card.value, card.currency) : fmtNumber(card.value) }),
          change !== null ? el('span', { class: `change ${good}`, text: `${change >= 0 ? '▲' : '▼'} ${fmtNumber(Math.abs(change) / 100)} %`, 'aria-label': say(change >= 0 ? 'up' : 'down', { v: fmtNumber(Math.abs(change) / 100) }) }) : null,
          spark(card.spark));
      }))];
      case 'chart': {
        const data = b.data || {};
        const series = b.series?.length ? b.series : ['value'];
        if ((b.chart || 'line') === 'pie') {
          const slices = (data.rows?.length ? data.rows : data.series || []).slice(0, 8).map((r) => ({ label: String(r.name ?? r.label ?? r.status ?? r.bucket ?? r.period ?? r.key ?? ''), value: Number(r[series[0]] ?? r.value ?? r.count ?? r.total ?? r.amount ?? Object.values(r).find((v) => typeof v === 'number') ?? 0) }));
          return [pieChart(slices, data.unit, data.currency, b.title)];
        }
        const points = (data.series || []).map((p) => ({ label: String(p.period ?? '').slice(5) || String(p.period), raw: p, values: Object.fromEntries(series.map((s) => [s, Number(p[s] ?? 0)])) }));
        const onPick = b.key ? (p) => select(b.key, { period: p.raw.period, period_end: p.raw.period_end }) : null;
        return [xyChart(b.chart || 'line', points, series, data.unit, data.currency, onPick, b.title), el('p', { class: 'note', text: data.summary ? say('total', { v: fmtValue(data.summary.value, data.unit, data.currency) }) : '' })];
      }
      case 'table': {
        const data = b.data || {};
        const rows = data.rows?.length ? data.rows : (data.series || []).map((p) => ({ period: p.period, value: p.value, ...(p.previous !== undefined ? { previous: p.previous } : {}) }));
        return [rowsTable(rows, b.key, b.title || say('table'), () => data.currency)];
      }
      case 'records': {
        const rows = b.records_data?.rows || [];
        return [rowsTable(rows, b.key, b.title || b.records?.source || say('records'), (r) => r.currency), el('p', { class: 'note', text: b.records_data ? say('nOfTotal', { n: fmtNumber(rows.length), total: fmtNumber(b.records_data.total ?? rows.length) }) : '' })];
      }
      case 'detail': {
        const row = b.records_data?.rows?.[0];
        if (!row) return [el('p', { class: 'empty', text: say('empty') })];
        return [el('dl', { class: 'detail' }, Object.entries(row).filter(([, v]) => typeof v !== 'object' || v === null).flatMap(([k, v]) => [el('dt', { text: label(k) }), el('dd', { text: fmtCell(k, v, row.currency) })]))];
      }
      case 'profile': {
        const p = b.profile && typeof b.profile === 'object' ? b.profile : {};
        return [el('dl', { class: 'detail' }, Object.entries(p).flatMap(([k, v]) => [el('dt', { text: label(k) }), el('dd', { text: fmtCell(k, v) })]))];
      }
      case 'agenda': {
        const entries = b.agenda_data?.entries || [];
        const out = [entries.length ? el('ol', { class: 'agenda' }, entries.map((e) => el('li', { class: e.status === 'overdue' ? 'overdue' : '' }, el('time', { datetime: e.date, text: fmtDate(e.date) }), ' ', el('span', { text: e.title }), e.status === 'overdue' ? el('span', { class: 'tag', text: say('overdue') }) : null))) : el('p', { class: 'empty', text: say('nothingDue') })];
        if (b.agenda_data?.unavailable_lanes?.length) out.push(el('p', { class: 'note', text: say('notShown', { lanes: b.agenda_data.unavailable_lanes.join(', ') }) }));
        return out;
      }
      case 'event': {
        const e = b.event_data?.event;
        return [e ? el('p', { class: 'event' }, el('time', { datetime: e.date, text: fmtDate(e.date) }), ' — ', e.title) : el('p', { class: 'empty', text: say('nothingNext', { n: b.event_data?.horizon ?? 90 }) })];
      }
      case 'kanban': {
        const cols = b.board_data?.columns || [];
        const currency = b.board_data?.pipeline?.currency;
        // A card moves by the canvas action deals.move, through the same pipeline (policies, approvals,
        // ledger), with an Idempotency-Key so a retried request moves it once; then this block re-renders.
        const mover = (d, c) => {
          const id = `mv-${path.replace(/\./g, '-')}-${d.id}`;
          const result = el('span', { class: 'action-result', role: 'status' });
          const select = el('select', { id, name: 'stage_id' }, cols.map((o) => el('option', { value: o.stage_id, text: o.name, selected: o.stage_id === c.stage_id })));
          const form = el('form', { class: 'kanban-move' }, el('label', { for: id, text: say('moveTo') }), select, el('button', { type: 'submit', class: 'btn outline', text: say('move') }), result);
          form.addEventListener('submit', async (e) => {
            e.preventDefault();
            if (select.value === c.stage_id) return;
            result.textContent = say('working');
            const { status, body } = await api('deals.move', { id: d.id, stage_id: select.value }, { 'idempotency-key': `canvas-${d.id}-${select.value}-${crypto.randomUUID()}` });
            outcome(result, status, body, 'deals.move');
            if (status === 200) requery((def) => def === defs.get(path));
          });
          return form;
        };
        return [el('div', { class: 'kanban' }, cols.map((c) => el('section', { class: 'lane', 'aria-label': c.name }, el('h4', { text: c.name }),
          el('p', { class: 'lane-summary', text: `${fmtNumber(c.count)} · ${fmtMoney(c.amount, currency)}` }),
          el('ul', {}, (c.deals || []).map((d) => el('li', { 'data-deal': d.id }, el('span', { class: 'kanban-title', text: d.title ?? d.name }), d.id && c.stage_id ? mover(d, c) : null))))))];
      }
      case 'result': {
        const r = b.result_data || {};
        if (Array.isArray(r.rows)) return [rowsTable(r.rows, null, b.title || b.result?.tool, (x) => x.currency)];
        return [el('dl', { class: 'detail' }, Object.entries(r).filter(([, v]) => typeof v !== 'object').flatMap(([k, v]) => [el('dt', { text: label(k) }), el('dd', { text: String(v) })]))];
      }
      case 'params': return [drawParams(b)];
      case 'actions': case 'button': return [el('div', { class: 'actions' }, (b.actions || []).map((a) => actionButton(a, b)))];
      case 'form': return b.actions?.[0] ? [actionForm(b.actions[0], b)] : [];
      case 'toggle': return b.actions?.[0] ? [actionToggle(b.actions[0], b)] : [];
      default: return [];
    }
  };

  // ------------------------------------------------------------------ params
  const drawParams = (b) => {
    const form = el('form', { class: 'params', onsubmit: (e) => e.preventDefault() });
    for (const c of b.params) {
      const id = `param-${c.key}`;
      const current = values.params[c.key] ?? c.default ?? '';
      const type = c.type || 'text';
      let input;
      if (type === 'select') {
        input = el('select', { id, name: c.key, required: c.required }, el('option', { value: '', text: '—' }), c.options.map((o) => el('option', { value: o.value, text: o.label || o.value, selected: o.value === current })));
      } else if (type === 'toggle') {
        input = el('input', { id, name: c.key, type: 'checkbox', checked: current === 'true' || current === true });
      } else {
        const t = { number: 'number', date: 'date', search: 'search' }[type] || 'text';
        input = el('input', { id, name: c.key, type: t, value: current, placeholder: c.placeholder, required: c.required, min: c.min ?? (c.not_before ? values.params[c.not_before] : undefined), max: c.max, pattern: c.pattern, 'aria-describedby': c.help ? `${id}-help` : undefined, list: type === 'record' ? `${id}-list` : undefined });
      }
      const onChange = () => {
        const v = type === 'toggle' ? String(input.checked) : input.value;
        if (input.checkValidity && !input.checkValidity()) return;
        values.params[c.key] = v === '' ? null : v;
        requery((d) => (d.inputs || []).some((i) => i.param === c.key));
      };
      input.addEventListener('change', onChange);
      form.append(el('div', { class: 'field' }, el('label', { for: id, text: c.label || label(c.key) }), input, c.help ? el('small', { id: `${id}-help`, text: c.help }) : null));
      if (type === 'record' && c.source) {
        const list = el('datalist', { id: `${id}-list` });
        form.append(list);
        api('records.list', { source: c.source, limit: 50 }).then(({ status, body }) => {
          if (status === 200) for (const r of body.output.rows) list.append(el('option', { value: r.id, text: r.name ?? r.number ?? r.id }));
        });
      }
    }
    return form;
  };

  // ------------------------------------------------------------------ actions
  const describe = async (tool) => {
    if (host) return host.describe(tool);
    if (!toolSchemas) {
      toolSchemas = fetch('/v1/tools', { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json()).then((b) => new Map((b.tools || []).map((t) => [t.name, t])));
    }
    return (await toolSchemas).get(tool);
  };
  const announce = (text) => { liveStatus.textContent = text; };
  const outcome = (node, status, body, tool) => {
    node.textContent = '';
    if (status === 200) node.append(el('span', { class: 'ok', text: say('done', { tool }) }));
    else if (status === 202) node.append(el('span', { class: 'pending', text: say('waitingApproval', { id: body.approval_id }) }));
    else node.append(el('span', { class: 'block-error', text: `${body.error}${body.field ? ` (${body.field})` : ''}` }));
    announce(node.textContent);
  };
  /** Values a block's inputs give its actions (selected rows, params), on top of the action's own values. */
  const actionValues = (a, b) => {
    const v = { ...(a.values || {}) };
    for (const i of b.inputs || []) {
      const value = i.block ? values.selections[i.block]?.[i.field || 'id'] : values.params[i.param];
      if (value !== undefined && value !== null && value !== '') v[i.target] = value;
    }
    return v;
  };
  const run = async (a, b, input, resultNode) => {
    if (a.confirm && !window.confirm(a.confirm)) return;
    resultNode.textContent = say('working');
    const { status, body } = await api(a.tool, input);
    outcome(resultNode, status, body, a.tool);
  };
  /** Action icons (specification §2.9) as glyphs the system fonts carry; decorative, the label says what it does. */
  const ICON = { plus: '+', check: '✓', x: '✕', play: '▶', send: '➤', download: '↓', upload: '↑', trash: '✕', pencil: '✎', eye: '◉', refresh: '↻', search: '⌕', filter: '▽', calendar: '▦', user: '●', users: '●●', file: '▤', mail: '✉', link: '↗', settings: '⚙', alert: '⚠', info: 'ℹ', star: '★', 'arrow-right': '→', clock: '◷', lock: '■', copy: '⧉', printer: '⎙', money: '$', package: '▣' };
  const iconOf = (a) => (a.icon && ICON[a.icon] ? el('span', { class: 'icon', 'aria-hidden': 'true', text: ICON[a.icon] }) : null);
  const actionButton = (a, b) => {
    const text = [iconOf(a), a.label || a.tool || a.href];
    if (a.href) return el('a', { class: `btn ${a.variant || 'outline'}`, href: a.href }, ...text);
    const result = el('span', { class: 'action-result', role: 'status' });
    const button = el('button', { type: 'button', class: `btn ${a.variant || 'outline'}`, title: a.description }, ...text);
    button.addEventListener('click', async () => {
      const input = actionValues(a, b);
      const tool = await describe(a.tool);
      const missing = (tool?.input_schema?.required || []).some((k) => input[k] === undefined);
      if (a.prompt === true || (a.prompt !== false && missing)) {
        const wrap = button.parentElement;
        wrap.after(actionForm(a, b));
        button.disabled = true;
        return;
      }
      run(a, b, input, result);
    });
    return el('span', { class: 'action' }, button, result);
  };
  /** The generated form of an action: one field per top-level argument of the tool's input schema. */
  const actionForm = (a, b) => {
    const form = el('form', { class: 'action-form', novalidate: false });
    const result = el('p', { class: 'action-result', role: 'status' });
    const fields = el('div', { class: 'fields' });
    const prefill = actionValues(a, b);
    describe(a.tool).then((tool) => {
      const schema = a.input_schema || tool?.input_schema || { properties: {} };
      const required = new Set(schema.required || []);
      for (const [name, prop] of Object.entries(schema.properties || {})) {
        if (prop.type === 'object' || prop.type === 'array') continue;
        const id = `f-${a.tool}-${name}`.replace(/[^A-Za-z0-9_-]/g, '-');
        const v = prefill[name];
        let input;
        if (prop.enum) input = el('select', { id, name, required: required.has(name) }, required.has(name) ? null : el('option', { value: '', text: '—' }), prop.enum.map((o) => el('option', { value: o, text: o, selected: o === v })));
        else if (prop.type === 'boolean') input = el('input', { id, name, type: 'checkbox', checked: v === true });
        // A secret argument (writeOnly / x-secret) is typed hidden, never prefilled or remembered by the browser.
        else if (prop.writeOnly === true || prop['x-secret'] === true) input = el('input', { id, name, type: 'password', autocomplete: 'new-password', value: '', required: required.has(name), minlength: prop.minLength, maxlength: prop.maxLength });
        else input = el('input', { id, name, type: prop.type === 'integer' || prop.type === 'number' ? 'number' : prop.format === 'date' ? 'date' : prop.format === 'email' ? 'email' : 'text', value: v ?? '', required: required.has(name), minlength: prop.minLength, maxlength: prop.maxLength, min: prop.minimum, max: prop.maximum });
        fields.append(el('div', { class: 'field' }, el('label', { for: id, text: `${label(name)}${required.has(name) ? ' *' : ''}` }), input));
      }
    });
    form.append(fields, el('button', { type: 'submit', class: `btn ${a.variant === 'outline' || !a.variant ? 'default' : a.variant}` }, iconOf(a), a.label || a.tool), result);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (!form.reportValidity()) return;
      const input = { ...prefill };
      for (const node of fields.querySelectorAll('input,select')) {
        const prop = node.type === 'checkbox' ? node.checked : node.value;
        if (prop === '') { delete input[node.name]; continue; }
        input[node.name] = node.type === 'number' ? Number(prop) : prop;
      }
      await run(a, b, input, result);
    });
    return form;
  };
  const actionToggle = (a, b) => {
    const id = `t-${a.tool}-${a.field}`.replace(/[^A-Za-z0-9_-]/g, '-');
    const result = el('span', { class: 'action-result', role: 'status' });
    const box = el('input', { id, type: 'checkbox', role: 'switch' });
    box.addEventListener('change', () => run(a, b, { ...actionValues(a, b), [a.field || 'enabled']: box.checked }, result));
    return el('div', { class: 'field toggle' }, box, el('label', { for: id, text: a.label || b.title || a.tool }), result);
  };

  // ------------------------------------------------------------------ tree
  const blockShell = (b, path) => {
    const span = b.span || SPAN_DEFAULT(b.type);
    const headingId = `h-${path.replace(/\./g, '-')}`;
    const node = el('section', { class: `block t-${b.type} span-${span}`, 'data-path': path, 'data-type': b.type, 'aria-labelledby': b.title && b.type !== 'image' ? headingId : undefined });
    if (b.type === 'heading') node.append(el(b.variant === 'h3' ? 'h3' : 'h2', { id: headingId, class: 'heading', text: b.title || '' }));
    else if (b.title && b.type !== 'image' && b.type !== 'divider') node.append(el('h2', { id: headingId, class: 'block-title', text: b.title }));
    return node;
  };
  const fill = (node, b, path) => {
    const body = node.querySelector(':scope > .block-body') || node.appendChild(el('div', { class: 'block-body' }));
    body.replaceChildren(...drawLeaf(b, path));
    node.classList.remove('stale');
    node.removeAttribute('aria-busy');
  };
  const drawTree = (blocks, parentPath) => blocks.map((b, i) => drawOne(b, parentPath === '' ? String(i) : `${parentPath}.${i}`));
  const drawOne = (b, path) => {
    if (!b.children) {
      const node = blockShell(b, path);
      slots.set(path, node);
      fill(node, b, path);
      return node;
    }
    if (b.type === 'section') {
      const summaryId = `s-${path.replace(/\./g, '-')}`;
      const details = el('details', { class: `block container section span-${b.span || 12}`, open: b.variant !== 'collapsed' }, el('summary', { id: summaryId, text: b.title || say('section') }), el('div', { class: 'grid' }, drawTree(b.children, path)));
      return details;
    }
    if (b.type === 'tabs') {
      const tabs = el('div', { class: 'tablist', role: 'tablist', 'aria-label': b.title || say('tabs') });
      const panels = b.children.map((c, i) => el('div', { class: 'grid tabpanel', role: 'tabpanel', id: `p-${path.replace(/\./g, '-')}-${i}`, hidden: i !== 0, 'aria-labelledby': `t-${path.replace(/\./g, '-')}-${i}` }, drawOne(c, `${path}.${i}`)));
      const buttons = b.children.map((c, i) => el('button', { type: 'button', role: 'tab', id: `t-${path.replace(/\./g, '-')}-${i}`, 'aria-controls': `p-${path.replace(/\./g, '-')}-${i}`, 'aria-selected': i === 0 ? 'true' : 'false', tabindex: i === 0 ? 0 : -1, text: c.title || say('tab', { n: i + 1 }) }));
      const show = (k) => buttons.forEach((btn, i) => { btn.setAttribute('aria-selected', String(i === k)); btn.tabIndex = i === k ? 0 : -1; panels[i].hidden = i !== k; });
      buttons.forEach((btn, i) => {
        btn.addEventListener('click', () => show(i));
        btn.addEventListener('keydown', (e) => {
          const k = e.key === 'ArrowRight' ? (i + 1) % buttons.length : e.key === 'ArrowLeft' ? (i - 1 + buttons.length) % buttons.length : -1;
          if (k >= 0) { show(k); buttons[k].focus(); }
        });
      });
      tabs.append(...buttons);
      return el('div', { class: `block container tabs span-${b.span || 12}` }, b.title ? el('h2', { class: 'block-title', text: b.title }) : null, tabs, panels);
    }
    return el('div', { class: `block container ${b.type} span-${b.span || 12}`, role: 'group', 'aria-label': b.title || undefined }, b.title ? el('h2', { class: 'block-title', text: b.title }) : null, el('div', { class: b.type === 'stack' ? 'stack' : 'grid' }, drawTree(b.children, path)));
  };
  const indexDefs = (blocks, parentPath) => blocks.forEach((b, i) => {
    const path = parentPath === '' ? String(i) : `${parentPath}.${i}`;
    defs.set(path, b);
    if (b.children) indexDefs(b.children, path);
  });

  /** Re-renders the leaf blocks `which` picks, only them, with the current values. */
  let pending = Promise.resolve();
  const requery = (which) => {
    const paths = [...defs.entries()].filter(([, d]) => !d.children && which(d)).map(([p]) => p);
    if (!paths.length) return pending;
    for (const p of paths) { slots.get(p)?.classList.add('stale'); slots.get(p)?.setAttribute('aria-busy', 'true'); }
    pending = pending.then(async () => {
      const { status, body } = await api('dashboards.render', { blocks: paths.map((p) => defs.get(p)), values: currentValues() });
      if (status !== 200) return announce(say('refreshFailed', { error: body.error }));
      body.output.blocks.forEach((b, i) => { const node = slots.get(paths[i]); if (node) fill(node, b, paths[i]); });
      document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
      announce(paths.length === 1 ? say('updated1') : say('updated', { n: paths.length }));
    });
    return pending;
  };
  /** Params with every control's default, so blocks re-rendered alone see them too. */
  const currentValues = () => {
    const params = {};
    for (const d of defs.values()) for (const c of d.params || []) if (c.default !== undefined) params[c.key] = c.default;
    for (const [k, v] of Object.entries(values.params)) if (v !== null && v !== undefined) params[k] = v;
    return { params, selections: values.selections };
  };
  const select = (key, row) => {
    values.selections[key] = row;
    announce(say('selected'));
    requery((d) => d.bind?.block === key || (d.inputs || []).some((i) => i.block === key));
  };

  // ------------------------------------------------------------------ live (/v1/events)
  const follow = async () => {
    for (let attempt = 0; attempt < 1000; attempt++) {
      try {
        const res = await fetch('/v1/events', { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
        if (res.status === 401) return location.reload();
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        document.body.dataset.live = 'connected';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = frame.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
            if (!data) continue;
            let event;
            try { event = JSON.parse(data); } catch { continue; }
            if (event.outcome !== 'ok' || !event.module) continue;
            liveQueue.add(event.module);
            clearTimeout(liveTimer);
            liveTimer = setTimeout(flushLive, 250);
          }
        }
      } catch {
        // the stream broke: retry below
      }
      document.body.dataset.live = 'reconnecting';
      await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5))));
    }
  };
  const liveQueue = new Set();
  let liveTimer;
  const flushLive = () => {
    const modules = [...liveQueue];
    liveQueue.clear();
    requery((d) => (d.live || []).some((m) => modules.includes(m)));
  };

  // ------------------------------------------------------------------ start
  const fail = (text) => root.replaceChildren(el('p', { class: 'block-error', role: 'alert', text }));
  const draw = (output, t0) => {
    root.replaceChildren(...drawTree(output.blocks, ''));
    root.removeAttribute('aria-busy');
    document.body.dataset.ready = 'true';
    document.body.dataset.renderMs = String(Math.round(performance.now() - t0));
  };
  const start = async () => {
    const got = await api('dashboards.get', { id: dashboardId });
    if (got.status !== 200) return fail(got.body.error);
    indexDefs(got.body.output.dashboard.blocks, '');
    const t0 = performance.now();
    const { status, body } = await api('dashboards.render', { id: dashboardId, values: currentValues() });
    if (status !== 200) return fail(body.error);
    draw(body.output, t0);
    follow();
  };
  /** In an MCP host: the blocks (or saved dashboard) the tool was called with, drawn from the tool's result. */
  const startInHost = async () => {
    const t0 = performance.now();
    const { input, result } = await host.rendered;
    if (result.status !== 200) return fail(result.body.error);
    if (input.id !== undefined) {
      dashboardId = input.id;
      const got = await api('dashboards.get', { id: dashboardId });
      if (got.status !== 200) return fail(got.body.error);
      indexDefs(got.body.output.dashboard.blocks, '');
    } else {
      indexDefs(input.blocks || [], '');
    }
    Object.assign(values.params, input.values?.params || {});
    Object.assign(values.selections, input.values?.selections || {});
    draw(result.body.output, t0);
  };
  if (host) startInHost(); else start();
})();
