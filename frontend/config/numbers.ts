// The core's numbers as text: digit groups, a term's formula filled in, the timeline's columns as JSON lists.

const GIB = 2 ** 30;

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
    if (kind === 'b') return `${(v / GIB).toFixed(2)} GiB`;
    if (kind === 'c') return groupDigits(Math.round(v));
    return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, '');
  });
}

/** JSON.stringify's replacer that writes typed arrays (the timeline's columns) as lists. */
export const plainArrays = (_key: string, v: unknown): unknown =>
  ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v;
