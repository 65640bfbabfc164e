// Number formatting: GiB with two decimals everywhere, counts, percent, number parsing.
import { describe, expect, it } from 'vitest';
import {
  formatCount,
  formatGiB,
  formatNumber,
  formatPercent,
  formatValue,
  gibParts,
  parseNumber,
} from '../../frontend/format.js';

describe('format', () => {
  it('bytes are GiB with two decimals, like the CLI', () => {
    expect(formatGiB(2 ** 30)).toBe('1.00 GiB');
    expect(formatGiB(47093649408)).toBe('43.86 GiB');
    expect(formatGiB(0)).toBe('0.00 GiB');
    expect(formatGiB(5 * 2 ** 20)).toBe('0.00 GiB');
    expect(gibParts(1.5 * 2 ** 30)).toEqual({ value: '1.50', unit: 'GiB' });
    expect(formatGiB(NaN)).toBe('– GiB');
  });
  it('counts', () => {
    expect(formatCount(8030261248)).toBe('8.03 B');
    expect(formatCount(405e9)).toBe('405.00 B');
    expect(formatCount(1.2e12)).toBe('1.20 T');
    expect(formatCount(567_000_000)).toBe('567.0 M');
    expect(formatCount(12_345)).toBe('12.3 K');
    expect(formatCount(42)).toBe('42');
  });
  it('percent and values', () => {
    expect(formatPercent(0.6081)).toBe('60.8 %');
    expect(formatPercent(1.015)).toBe('101.5 %');
    expect(formatValue(null)).toBe('auto');
    expect(formatValue(['q', 'v'])).toBe('q, v');
    expect(formatValue([])).toBe('none');
    expect(formatValue(131072)).toBe('131,072');
    expect(formatValue(true)).toBe('true');
    expect(formatNumber(0.1)).toBe('0.1');
  });
  it('parses typed numbers', () => {
    expect(parseNumber('4096', true)).toBe(4096);
    expect(parseNumber(' 1,024 ', true)).toBe(1024);
    expect(parseNumber('5e8', false)).toBe(5e8);
    expect(parseNumber('0.5', false)).toBe(0.5);
    expect(parseNumber('.5', false)).toBe(0.5);
    expect(parseNumber('', true)).toBe('enter a value');
    expect(parseNumber('1.5', true)).toBe('must be a whole number');
    expect(parseNumber('abc', true)).toMatch(/not a number/);
    expect(parseNumber('1e999', false)).toMatch(/not a finite number/);
  });
});
