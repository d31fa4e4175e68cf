import { describe, expect, it } from 'vitest';
import { compactForModel, pickFields } from '../src/lib/model-view.ts';

// What a model reads of a tool's output (issue 33): less what says nothing, and only the fields an
// agent names for the tool. The caller's own answer is another copy, never cut.

const listed = {
  rows: [
    { id: 'inv_1', number: 'SETP1', customer: { name: 'Tienda Andina SAS', tax_id: null, email: null }, balance: 128500000, paid: 0, lines: [{ description: 'Consultoría', withholdings: [] }], notes: null, credit_notes: [], authority: {}, posted: false, concept: '' },
    { id: 'inv_2', number: 'SETP2', customer: { name: 'Café Quindío', tax_id: '900373115-3', email: null }, balance: 0, paid: 5, lines: [], notes: 'x', credit_notes: ['cn_1'], authority: null, posted: true, concept: 'y' },
  ],
  next_cursor: null,
  total: 2,
};

describe('compactForModel', () => {
  it('drops null, empty text, empty lists and objects at every depth; keeps false, 0, list positions and the output\'s own empty lists', () => {
    expect(compactForModel(listed)).toEqual({
      rows: [
        { id: 'inv_1', number: 'SETP1', customer: { name: 'Tienda Andina SAS' }, balance: 128500000, paid: 0, lines: [{ description: 'Consultoría' }], posted: false },
        { id: 'inv_2', number: 'SETP2', customer: { name: 'Café Quindío', tax_id: '900373115-3' }, balance: 0, paid: 5, notes: 'x', credit_notes: ['cn_1'], posted: true, concept: 'y' },
      ],
      total: 2,
    });
    // An object left empty by the cut goes too; a list item left empty keeps its place.
    expect(compactForModel({ a: { b: null }, c: [null, { d: [] }, 1] })).toEqual({ c: [null, {}, 1] });
    // A listing that found nothing says so.
    expect(compactForModel({ rows: [], next_cursor: null })).toEqual({ rows: [] });
    expect(compactForModel('text')).toBe('text');
    expect(compactForModel(null)).toBeNull();
  });
});

describe('pickFields', () => {
  it('keeps only the named paths, crossing lists, in the output\'s shape', () => {
    expect(pickFields(listed, ['rows.number', 'rows.customer.name', 'rows.balance', 'total'])).toEqual({
      rows: [{ number: 'SETP1', customer: { name: 'Tienda Andina SAS' }, balance: 128500000 }, { number: 'SETP2', customer: { name: 'Café Quindío' }, balance: 0 }],
      total: 2,
    });
  });

  it('keeps a whole field named whole, whichever order its paths come in; a path that names nothing adds nothing', () => {
    const whole = { rows: listed.rows.map((r) => ({ customer: r.customer })) };
    expect(pickFields(listed, ['rows.customer', 'rows.customer.name'])).toEqual(whole);
    expect(pickFields(listed, ['rows.customer.name', 'rows.customer'])).toEqual(whole);
    expect(pickFields(listed, ['rows.number.digits', 'missing'])).toEqual({ rows: [{}, {}] });
    expect(pickFields(listed, [])).toBe(listed);
  });
});
