// How a view reads its parts' JSON answers: once per answer's bytes, the compact text and digest the
// view's answer and ETag are built from, nothing for an answer that is not JSON.
import { hash } from 'node:crypto';
import { PartForms } from '../../src/views/part-forms.js';

describe('PartForms', () => {
  it("gives a JSON answer's value, compact text and that text's digest", () => {
    const form = new PartForms().of(Buffer.from('{ "a": [1, 2], "b": "\\/x" }'));
    expect(form?.value).toEqual({ a: [1, 2], b: '/x' });
    expect(form?.text).toBe('{"a":[1,2],"b":"/x"}');
    expect(form?.digest).toBe(hash('sha256', '{"a":[1,2],"b":"/x"}', 'base64url'));
  });

  it('reads the same bytes once: the same answer buffer gives the form it gave before', () => {
    const forms = new PartForms();
    const body = Buffer.from('{"n":1}');
    expect(forms.of(body)).toBe(forms.of(body));
  });

  it('reads new bytes anew, even when they are equal to bytes read before', () => {
    const forms = new PartForms();
    const first = forms.of(Buffer.from('{"n":1}'));
    const second = forms.of(Buffer.from('{"n":1}'));
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  it('has no form for an answer that is not JSON, asked once or twice', () => {
    const forms = new PartForms();
    const body = Buffer.from('<xml/>');
    expect(forms.of(body)).toBeUndefined();
    expect(forms.of(body)).toBeUndefined();
  });
});
