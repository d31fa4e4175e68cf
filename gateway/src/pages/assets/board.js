// A kanban board by pointer or by keyboard alone (gateway/src/pages/board.ts draws it). Keyboard:
// focus a card, Space or Enter picks it up, Left/Right move it to the neighbouring column, Up/Down
// within its column, Space or Enter drops it there, Escape puts it back. Every step is announced in
// the live region. A drop calls the board's move tool through REST with the person's token and an
// Idempotency-Key (a retry moves it once), then redraws the board from the server and puts focus
// back on the card. No framework, no inline code (CSP script-src 'self').
(function () {
  'use strict';
  var token = (document.querySelector('meta[name="cuadra-token"]') || {}).content;
  var live = document.getElementById('board-live');
  var board = document.querySelector('.board');
  if (!board || !token) return;
  document.body.classList.add('board-enhanced');

  function say(template, vars) {
    var text = template.replace(/\{(\w+)\}/g, function (m, k) { return k in vars ? String(vars[k]) : m; });
    live.textContent = '';
    setTimeout(function () { live.textContent = text; }, 30);
  }
  function columns() { return Array.prototype.slice.call(board.querySelectorAll('.column')); }
  function cardsOf(col) { return Array.prototype.slice.call(col.querySelectorAll('.cards > .card')); }
  function titleOf(card) { return card.querySelector('.card-title').textContent; }
  function columnTitle(col) { return col.querySelector('h2').firstChild.textContent.trim(); }
  function where(card) {
    var col = card.closest('.column');
    var list = cardsOf(col);
    return { title: titleOf(card), column: columnTitle(col), position: list.indexOf(card) + 1, count: list.length };
  }
  function key() {
    var a = new Uint8Array(16);
    crypto.getRandomValues(a);
    return 'board-' + Array.prototype.map.call(a, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
  }

  // The move a card's place stands for: its column, and the card it now follows (or precedes, when first).
  function moveInput(card) {
    var col = card.closest('.column');
    var list = cardsOf(col);
    var i = list.indexOf(card);
    var input = { id: card.dataset.cardId };
    input[board.dataset.columnArg] = col.dataset.columnId;
    // deals.move takes place: {after|before}; a board may name its own arguments (tasks.move: after_id, before_id).
    var after = board.dataset.afterArg, before = board.dataset.beforeArg;
    if (i > 0) { if (after) input[after] = list[i - 1].dataset.cardId; else input.place = { after: list[i - 1].dataset.cardId }; }
    else if (list.length > 1) { if (before) input[before] = list[1].dataset.cardId; else input.place = { before: list[1].dataset.cardId }; }
    return input;
  }

  var busy = false;
  function commit(card, origin) {
    if (busy) return;
    busy = true;
    var id = card.dataset.cardId;
    var landed = where(card);
    fetch('/v1/tools/' + encodeURIComponent(board.dataset.moveTool) + ':invoke', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token, 'idempotency-key': key() },
      body: JSON.stringify(moveInput(card)),
    }).then(function (res) {
      return res.json().then(function (body) { return { status: res.status, body: body }; });
    }).then(function (r) {
      if (r.status === 200) say(board.dataset.sayDropped, landed);
      else if (r.status === 202) say(board.dataset.sayHeld, landed);
      else say(board.dataset.sayFailed + (r.body && r.body.error ? ' ' + r.body.error : ''), landed);
      return refresh(id);
    }).catch(function () {
      if (origin) origin.list.insertBefore(card, origin.next);
      say(board.dataset.sayFailed, landed);
    }).then(function () { busy = false; });
  }

  // Redraw from the server (counts, sums and order as stored), focus back on the moved card.
  function refresh(focusId) {
    return fetch(board.dataset.refresh, { headers: { accept: 'text/html' }, credentials: 'same-origin' }).then(function (res) {
      if (!res.ok) throw new Error('refresh');
      return res.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, 'text/html');
      var fresh = doc.querySelector('.board');
      if (!fresh) return;
      board.replaceChildren.apply(board, Array.prototype.slice.call(fresh.childNodes).map(function (n) { return document.importNode(n, true); }));
      var again = board.querySelector('[data-card-id="' + focusId + '"]');
      if (again) again.focus();
    });
  }

  // Keyboard.
  var held = null; // { card, origin: { list, next } }
  board.addEventListener('keydown', function (e) {
    var card = e.target.closest && e.target.closest('.card');
    if (!card || e.target !== card) return;
    var k = e.key;
    if (!held && (k === ' ' || k === 'Enter')) {
      e.preventDefault();
      held = { card: card, origin: { list: card.parentNode, next: card.nextSibling } };
      card.classList.add('lifted');
      say(board.dataset.sayPicked, where(card));
      return;
    }
    if (!held || held.card !== card) return;
    if (k === 'Escape') {
      e.preventDefault();
      held.origin.list.insertBefore(card, held.origin.next);
      card.classList.remove('lifted');
      card.focus();
      say(board.dataset.sayCancelled, where(card));
      held = null;
      return;
    }
    if (k === ' ' || k === 'Enter') {
      e.preventDefault();
      card.classList.remove('lifted');
      var origin = held.origin;
      var moved = card.parentNode !== origin.list || card.nextSibling !== origin.next;
      held = null;
      if (moved) commit(card, origin);
      else say(board.dataset.sayCancelled, where(card));
      return;
    }
    var cols = columns();
    var col = card.closest('.column');
    var ci = cols.indexOf(col);
    var list = cardsOf(col);
    var i = list.indexOf(card);
    if (k === 'ArrowUp' && i > 0) { col.querySelector('.cards').insertBefore(card, list[i - 1]); }
    else if (k === 'ArrowDown' && i < list.length - 1) { col.querySelector('.cards').insertBefore(card, list[i + 1].nextSibling); }
    else if ((k === 'ArrowLeft' && ci > 0) || (k === 'ArrowRight' && ci < cols.length - 1)) {
      var target = cols[ci + (k === 'ArrowLeft' ? -1 : 1)];
      var targetCards = cardsOf(target);
      var at = Math.min(i, targetCards.length);
      target.querySelector('.cards').insertBefore(card, targetCards[at] || null);
    } else return;
    e.preventDefault();
    card.focus();
    say(board.dataset.sayOver, where(card));
  });

  // Pointer: HTML drag and drop.
  var dragging = null;
  board.addEventListener('dragstart', function (e) {
    var card = e.target.closest && e.target.closest('.card');
    if (!card) return;
    dragging = { card: card, origin: { list: card.parentNode, next: card.nextSibling } };
    card.classList.add('lifted');
    e.dataTransfer.effectAllowed = 'move';
    e.dataTransfer.setData('text/plain', card.dataset.cardId);
  });
  board.addEventListener('dragover', function (e) {
    if (!dragging) return;
    var col = e.target.closest && e.target.closest('.column');
    if (!col) return;
    e.preventDefault();
    var list = col.querySelector('.cards');
    var after = cardsOf(col).filter(function (c) { return c !== dragging.card; }).find(function (c) {
      var r = c.getBoundingClientRect();
      return e.clientY < r.top + r.height / 2;
    });
    list.insertBefore(dragging.card, after || null);
  });
  board.addEventListener('drop', function (e) {
    if (!dragging) return;
    e.preventDefault();
    var d = dragging;
    dragging = null;
    d.card.classList.remove('lifted');
    if (d.card.parentNode !== d.origin.list || d.card.nextSibling !== d.origin.next) commit(d.card, d.origin);
  });
  board.addEventListener('dragend', function () {
    if (!dragging) return;
    // Dropped outside a column: back where it was.
    dragging.origin.list.insertBefore(dragging.card, dragging.origin.next);
    dragging.card.classList.remove('lifted');
    dragging = null;
  });
})();
