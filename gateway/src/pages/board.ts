import { html, type SafeHtml } from './html.ts';
import type { Translator } from './i18n.ts';

/**
 * A kanban board people work with by pointer or by keyboard alone: columns of cards, each column
 * a labelled list, each card a focusable item. Drawn on the server (it works without script: each
 * card carries a small form that moves it to another column), and `board.js` adds drag and drop
 * plus keyboard moves (focus a card, Space or Enter picks it up, arrows move it, Space or Enter
 * drops it, Escape puts it back), each move announced in a live region. What a move calls is data
 * on the board (`data-move-tool`, `data-column-arg`), so the same component serves the sales
 * pipeline (`deals.move`, `stage_id`) and any other board (project tasks).
 */
export interface BoardView {
  /** The board's accessible name. */
  label: string;
  /** The tool a move calls through the REST pipeline, and the argument naming the target column. */
  moveTool: string;
  columnArg: string;
  /**
   * The arguments placing a moved card after or before a neighbour (`after_id`/`before_id` for
   * tasks.move); absent: one `place: {after|before}` argument (deals.move).
   */
  placeArgs?: { after: string; before: string };
  /** Where the script reloads the board from after a move (the same rendering, no page chrome). */
  refreshUrl: string;
  /** The no-script fallback: where each card's move form posts, with its hidden fields. */
  fallback: { action: string; fields: Record<string, string> };
  columns: BoardColumn[];
}

export interface BoardColumn {
  id: string;
  title: string;
  /** e.g. "7 · COP 18.900.000 · ponderado COP 1.890.000". */
  summary: string;
  /** open columns take moves like any other; the kind is shown (won, lost) as a word, not only a colour. */
  kind?: string;
  /** Cards not shown (the column holds more than the board's limit). */
  more: number;
  cards: BoardCard[];
}

export interface BoardCard {
  id: string;
  title: string;
  /** Lines under the title (party, amount, dates). */
  details: string[];
  /** A warning shown as text (rotting). */
  flag?: string;
}

/** The board's HTML (the region `board.js` enhances). */
export function renderBoard(t: Translator, view: BoardView): SafeHtml {
  const hidden = Object.entries(view.fallback.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  const options = (current: string) => view.columns.map((c) => html`<option value="${c.id}" ${c.id === current ? 'selected' : ''}>${c.title}</option>`);
  const card = (column: BoardColumn, c: BoardCard, index: number) => html`<li class="card" data-card-id="${c.id}" tabindex="0" draggable="true" aria-roledescription="${t.t('board.card')}"
 aria-describedby="board-help" aria-label="${t.t('board.cardLabel', { title: c.title, column: column.title, position: index + 1, count: column.cards.length })}">
<p class="card-title">${c.title}</p>${c.details.map((d) => html`<p class="card-detail">${d}</p>`)}${c.flag ? html`<p class="card-flag">${c.flag}</p>` : ''}
<form method="post" action="${view.fallback.action}" class="card-move">${hidden}<input type="hidden" name="id" value="${c.id}">
<label>${t.t('board.moveTo')} <select name="column">${options(column.id)}</select></label> <button type="submit" class="secondary">${t.t('board.move')}</button></form></li>`;
  return html`<p id="board-help" class="note">${t.t('board.help')}</p>
<p id="board-live" class="sr-only" role="status" aria-live="assertive"></p>
<div class="board" role="region" aria-label="${view.label}" data-move-tool="${view.moveTool}" data-column-arg="${view.columnArg}"${view.placeArgs ? html` data-after-arg="${view.placeArgs.after}" data-before-arg="${view.placeArgs.before}"` : ''} data-refresh="${view.refreshUrl}"
 data-say-picked="${t.t('board.say.picked')}" data-say-over="${t.t('board.say.over')}" data-say-dropped="${t.t('board.say.dropped')}" data-say-cancelled="${t.t('board.say.cancelled')}"
 data-say-held="${t.t('board.say.held')}" data-say-failed="${t.t('board.say.failed')}">
${view.columns.map((c, n) => html`<section class="column${c.kind ? ` kind-${c.kind}` : ''}" data-column-id="${c.id}" aria-labelledby="col-${n}">
<h2 id="col-${n}">${c.title}${c.kind ? html` <span class="kind">(${c.kind})</span>` : ''}</h2><p class="column-summary">${c.summary}</p>
<ol class="cards">${c.cards.map((x, i) => card(c, x, i))}</ol>${c.more > 0 ? html`<p class="note">${t.t('board.more', { n: c.more })}</p>` : ''}</section>`)}
</div>`;
}
