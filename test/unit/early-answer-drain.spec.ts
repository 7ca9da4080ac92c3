import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { bodyPending } from '../../src/core/http/early-answer-drain.js';

function request(headers: Record<string, string>, complete = false): IncomingMessage {
  const raw = new IncomingMessage(new Socket());
  raw.headers = headers;
  raw.complete = complete;
  return raw;
}

describe('bodyPending: what an early error answer must drain', () => {
  it('a request that declares a body and has not sent it all', () => {
    expect(bodyPending(request({ 'content-length': '12' }))).toBe(true);
    expect(bodyPending(request({ 'transfer-encoding': 'chunked' }))).toBe(true);
  });

  it('nothing for a request without a body (a GET answered from its handler), an empty one or a complete one', () => {
    expect(bodyPending(request({}))).toBe(false);
    expect(bodyPending(request({ 'content-length': '0' }))).toBe(false);
    expect(bodyPending(request({ 'content-length': '12' }, true))).toBe(false);
  });
});
