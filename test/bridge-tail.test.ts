import { describe, expect, it } from 'vitest';
import { TailBuffer } from '../src/bridge/tail-buffer.js';

describe('TailBuffer', () => {
  it('keeps only the end of 50 MB pushed in pipe-sized chunks', () => {
    const cap = 64 * 1024;
    const chunkSize = 64 * 1024;
    const tail = new TailBuffer(cap);
    const chunk = Buffer.alloc(chunkSize, 'x');
    const total = 50 * 1024 * 1024;
    for (let sent = 0; sent < total; sent += chunkSize) tail.push(chunk);
    tail.push(Buffer.from('\nthe last line\n'));
    expect(tail.total).toBe(total + 15);
    expect(tail.peakRetained).toBeLessThanOrEqual(cap + chunkSize);
    expect(Buffer.byteLength(tail.text())).toBeLessThanOrEqual(cap);
    expect(tail.lastLines(1)).toEqual(['the last line']);
  });

  it('keeps everything while under the cap, and a chunk larger than the cap by its end', () => {
    const tail = new TailBuffer(8);
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('def'));
    expect(tail.text()).toBe('abcdef');
    tail.push(Buffer.from('0123456789'));
    expect(tail.text()).toBe('23456789');
    expect(tail.total).toBe(16);
  });

  it('drops a character cut in half at the front', () => {
    const tail = new TailBuffer(4);
    tail.push(Buffer.from('a\u00e9\u00e9')); // 61 c3 a9 c3 a9: the cut leaves a9 c3 a9 ...
    tail.push(Buffer.from('b'));
    expect(tail.text()).toBe('\u00e9b');
  });

  it('refuses a nonsense cap', () => {
    expect(() => new TailBuffer(0)).toThrow(RangeError);
  });
});
