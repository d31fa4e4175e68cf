import type { Principal } from '@cuadra/shared';
import type { Router } from 'express';
import { boardPage, type BoardPageDeps, type BoardRead } from './board-page.ts';
import type { Translator } from './i18n.ts';

const KEY = /^[a-z0-9-]{1,64}$/;

interface Board {
  pipeline: { id: string; key: string; name: string; currency: string };
  columns: { stage_id: string; name: string; kind: string; count: number; amount: number; weighted_amount: number; more: boolean; deals: { id: string; title: string; party_name: string | null; amount: number; expected_close: string | null; rotting: boolean; days_in_stage: number }[] }[];
}

/** The pipeline's board, read through `dashboards.render`'s kanban block as the signed-in person. */
async function readPipelineBoard(deps: BoardPageDeps, principal: Principal, pipeline: string, t: Translator): Promise<BoardRead> {
  const out = await deps.pipeline.invokeReadAs(principal, 'dashboards.render', { blocks: [{ type: 'kanban', board: { pipeline, limit: 50 } }] }) as { blocks: { board_data?: Board; error?: { code: string; error: string } }[] };
  const block = out.blocks[0];
  if (block.error) throw Object.assign(new Error(block.error.error), { code: block.error.code });
  const b = block.board_data!;
  const money = (n: number) => t.money(n, b.pipeline.currency);
  return {
    heading: t.t('crm.heading', { pipeline: b.pipeline.name }),
    which: b.pipeline.key,
    view: {
      label: t.t('crm.board', { pipeline: b.pipeline.name }),
      columns: b.columns.map((c) => ({
        id: c.stage_id, title: c.name, kind: c.kind === 'open' ? undefined : t.t(c.kind === 'won' ? 'crm.kind.won' : 'crm.kind.lost'),
        summary: t.t(c.count === 1 ? 'crm.summary.one' : 'crm.summary', { count: c.count, amount: money(c.amount), weighted: money(c.weighted_amount) }), more: c.count - c.deals.length,
        cards: c.deals.map((d) => ({
          id: d.id, title: d.title, flag: d.rotting ? t.t('crm.rotting', { days: d.days_in_stage }) : undefined,
          // A calendar date (YYYY-MM-DD) is that day wherever it is read: noon in Bogotá keeps it from moving.
          details: [d.party_name ?? '', money(d.amount), d.expected_close ? t.t('crm.closes', { date: t.date(`${d.expected_close}T12:00:00-05:00`) }) : ''].filter(Boolean),
        })),
      })),
    },
  };
}

/**
 * `/app/crm`: the sales pipeline's board (the default pipeline, or `?pipeline=<key>`); cards move
 * through `deals.move` (`stage_id`) as on every board page (board-page.ts).
 */
export function crmPages(deps: BoardPageDeps): Router {
  return boardPage({
    key: 'crm', title: 'crm.title', param: { name: 'pipeline', pattern: KEY },
    move: { moveTool: 'deals.move', columnArg: 'stage_id' },
    column: /^[A-Za-z0-9_-]{1,64}$/,
    read: readPipelineBoard,
    moveInput: (id, column) => ({ id, stage_id: column }),
    moved: 'crm.moved', refused: 'crm.refused',
    cannotRead: (t, code) => t.t(code === 'not_found' ? 'crm.none' : 'crm.cannotRead', { code }),
  }, deps);
}
