// Number formatting for the page: bytes in GiB with two decimals (the CLI's
// formatter, frontend/config/numbers.ts), parameter counts in B/M/K, fractions
// as percent. Pure functions.

export { formatGiB, GIB, gibParts } from './config/numbers.js';
export const MIB = 2 ** 20;

/** A parameter count: "8.03 B", "567.0 M", "12.3 K", "42". */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '–';
  const a = Math.abs(n);
  if (a >= 1e12) return `${(n / 1e12).toFixed(2)} T`;
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(1)} K`;
  return String(Math.round(n));
}

/** 0.608 -> "60.8 %". */
export function formatPercent(fraction: number, digits = 1): string {
  if (!Number.isFinite(fraction)) return '–';
  return `${(fraction * 100).toFixed(digits)} %`;
}

/** A config value as a person reads it: null -> "auto", lists joined, numbers grouped. */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return 'auto';
  if (Array.isArray(v)) return v.length ? v.join(', ') : 'none';
  if (typeof v === 'number') return formatNumber(v);
  return String(v);
}

/** 131072 -> "131,072"; 0.1 -> "0.1"; 5e8 -> "500,000,000". */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (!Number.isInteger(n) || Math.abs(n) >= 1e21) return String(n);
  // grouping by hand: toLocaleString costs about a millisecond per call in Chromium
  const digits = String(Math.abs(n));
  let out = '';
  for (let i = digits.length; i > 0; i -= 3) out = digits.slice(Math.max(0, i - 3), i) + (out ? `,${out}` : '');
  return n < 0 ? `-${out}` : out;
}

/** Text typed into a number field -> number, or a message. Accepts "1,024", "1_024", "5e8". */
export function parseNumber(text: string, integer: boolean): number | string {
  const t = text.trim().replace(/[,_\s]/g, '');
  if (t === '') return 'enter a value';
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return `"${text.trim()}" is not a number`;
  const n = Number(t);
  if (!Number.isFinite(n)) return `"${text.trim()}" is not a finite number`;
  if (integer && !Number.isInteger(n)) return 'must be a whole number';
  return n;
}

/** Step time: "1.23 s", "48.2 ms". */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '–';
  return s >= 0.1 ? `${s.toFixed(2)} s` : `${(s * 1000).toFixed(1)} ms`;
}

/** A relative error: "+4.2 %", "−12.0 %". */
export function formatSignedPercent(fraction: number, digits = 1): string {
  if (!Number.isFinite(fraction)) return '–';
  const v = (Math.abs(fraction) * 100).toFixed(digits);
  return `${fraction > 0 && Number(v) !== 0 ? '+' : fraction < 0 && Number(v) !== 0 ? '−' : ''}${v} %`;
}

/** An axis tick: 131072 -> "128K", 1536 -> "1.5K", 4 -> "4". */
export function formatTick(v: number): string {
  if (!Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a >= 1048576 && v % 1048576 === 0) return `${v / 1048576}M`;
  if (a >= 1024 && v % 512 === 0) return `${v / 1024}K`;
  if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
  return formatNumber(Math.round(v * 100) / 100);
}
