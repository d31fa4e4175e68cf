// Cuadra approvals inbox: follows the workspace ledger (/v1/events) and, when a call that changes
// something lands (a new held call, a decision, a held call run), fetches the lists again from the
// server and merges them in place: items already shown stay untouched (focus and a half-typed
// reason are kept), new ones appear at their place, finished ones leave the pending list.
(() => {
  'use strict';
  const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') || '';
  const token = meta('cuadra-token');
  const listUrl = meta('cuadra-inbox-list');
  const say = { arrived: meta('cuadra-say-new'), updated: meta('cuadra-say-updated') };
  const status = document.getElementById('live-status');
  let risks = null;

  const loadRisks = async () => {
    try {
      const res = await fetch('/v1/tools', { headers: { authorization: `Bearer ${token}` } });
      const body = await res.json();
      risks = new Map((body.tools || []).map((t) => [t.name, t.risk]));
    } catch {
      risks = new Map();
    }
  };

  /** Keyed merge of one list: keep nodes whose id and version are unchanged. */
  const merge = (current, fresh) => {
    let added = 0;
    const keep = new Map([...current.children].map((n) => [n.id, n]));
    const wanted = [...fresh.children];
    wanted.forEach((node, i) => {
      const old = keep.get(node.id);
      let placed;
      if (old && old.dataset.version === node.dataset.version) placed = old;
      else {
        placed = document.importNode(node, true);
        if (!old) added++;
        if (old) {
          const hadFocus = old.contains(document.activeElement);
          old.replaceWith(placed);
          if (hadFocus) placed.querySelector('h3')?.focus();
        }
      }
      keep.delete(node.id);
      if (current.children[i] !== placed) current.insertBefore(placed, current.children[i] || null);
    });
    for (const gone of keep.values()) {
      if (gone.contains(document.activeElement)) document.getElementById('pending-heading')?.focus();
      gone.remove();
    }
    return added;
  };

  let timer;
  let running = false;
  const refresh = async (quiet = false) => {
    if (running) { clearTimeout(timer); timer = setTimeout(() => refresh(quiet), 300); return; }
    running = true;
    try {
      const res = await fetch(listUrl, { credentials: 'same-origin', headers: { accept: 'text/html' } });
      if (res.status === 401 || res.redirected) return location.reload();
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      let added = 0;
      for (const id of ['pending', 'done']) {
        const current = document.getElementById(`${id}-list`);
        const fresh = doc.getElementById(`${id}-list`);
        if (!current || !fresh) continue;
        const n = merge(current, fresh);
        if (id === 'pending') added += n;
        const empty = document.getElementById(`${id}-empty`);
        if (empty) empty.hidden = current.children.length > 0;
      }
      const more = document.getElementById('done-more');
      const freshMore = doc.getElementById('done-more');
      if (more && freshMore) more.replaceWith(document.importNode(freshMore, true));
      if (added > 0) status.textContent = say.arrived;
      else if (!quiet) status.textContent = say.updated;
      document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || '0') + 1);
    } finally {
      running = false;
    }
    settle();
  };

  // An approved held call runs in its owning service, which writes its ledger entry just before it
  // marks the approval executed or failed: while one is on its way, look again every second (a minute at most).
  let settling = 0;
  const settle = () => {
    if (!document.querySelector('#done-list > li.approved.mode-hold, #done-list > li.executing')) { settling = 0; return; }
    if (settling++ >= 60) return;
    clearTimeout(timer);
    timer = setTimeout(() => refresh(true), 1000);
  };

  const follow = async () => {
    await loadRisks();
    for (let attempt = 0; attempt < 1000; attempt++) {
      try {
        const res = await fetch('/v1/events', { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
        if (res.status === 401) return location.reload();
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        document.body.dataset.live = 'connected';
        // What happened between the page's render and this connection (or while disconnected) is caught up once.
        clearTimeout(timer);
        timer = setTimeout(() => refresh(true), 0);
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
            // The page's own reads land on the ledger too: only calls that change something matter here.
            if (risks.get(event.tool) === 'read') continue;
            clearTimeout(timer);
            timer = setTimeout(() => refresh(false), 200);
          }
        }
      } catch {
        // the stream broke: retry below
      }
      document.body.dataset.live = 'reconnecting';
      await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5))));
    }
  };
  if (token && listUrl) void follow();
})();
