// The core's numbers as text: bytes in GiB, digit groups, a term's formula filled in, the timeline's columns as JSON lists.

export const GIB = 2 ** 30;

/** Bytes as { value, unit }: GiB with two decimals (the page styles the unit apart from the number). */
export function gibParts(bytes: number): { value: string; unit: string } {
  if (!Number.isFinite(bytes)) return { value: '–', unit: 'GiB' };
  return { value: (bytes / GIB).toFixed(2), unit: 'GiB' };
}

/** "43.86 GiB": two decimals, always GiB (the CLI's and the page's one unit). */
export function formatGiB(bytes: number): string {
  const p = gibParts(bytes);
  return `${p.value} ${p.unit}`;
}

/** 1234567 -> "1,234,567" (toLocaleString is slow in hot paths). */
export function groupDigits(n: number): string {
  const s = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < s.length; i++) out += (i > 0 && (s.length - i) % 3 === 0 ? ',' : '') + s[i];
  return n < 0 ? `-${out}` : out;
}

/** Fill a core formula: {cN} a count, {bN} bytes, {xN} a plain number. */
export function fillFormula(template: string, inputs: number[]): string {
  return template.replace(/\{([cbx])(\d)\}/g, (_, kind: string, i: string) => {
    const v = inputs[Number(i)] ?? 0;
    if (kind === 'b') return formatGiB(v);
    if (kind === 'c') return groupDigits(Math.round(v));
    return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, '');
  });
}

/** JSON.stringify's replacer that writes typed arrays (the timeline's columns) as lists. */
export const plainArrays = (_key: string, v: unknown): unknown =>
  ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v;
