/**
 * Client-side SQL literals. ClickHouse 18.16 has no query parameters, so every value that comes
 * from outside (tenant ids, domains, codes, time bounds) goes into SQL text through these
 * functions and nothing else. The output is valid on 18.16 and on chdb alike.
 */

const STRING_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
};

/**
 * A single-quoted ClickHouse string literal. Backslash and quote are escaped (the two characters
 * that could end the literal or change its meaning); control characters are escaped too so the
 * statement stays on one line and readable in logs. Everything else, UTF-8 included, is literal.
 */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`sqlString expects a string, got ${typeof value}`);
  return "'" + value.replace(/[\\'\n\r\t\0\b\f]/g, (c) => STRING_ESCAPES[c]) + "'";
}

/** A finite number as a literal (integers must be safe; NaN/Infinity are refused). */
export function sqlNumber(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`sqlNumber expects a finite number, got ${String(value)}`);
  }
  if (Number.isInteger(value)) {
    if (!Number.isSafeInteger(value)) throw new RangeError(`sqlNumber: ${value} is not a safe integer`);
    return value.toString(10);
  }
  return String(value); // shortest round-trip form; ClickHouse reads exponents (1e-7) as Float64
}

/** A non-negative integer (number, bigint or decimal string) as a literal, for UInt columns. */
export function sqlUInt(value: number | bigint | string): string {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`sqlUInt expects a safe integer, got ${value}`);
    n = BigInt(value);
  } else if (typeof value === 'string' && /^[0-9]+$/.test(value)) n = BigInt(value);
  else throw new TypeError(`sqlUInt expects a non-negative integer, got ${JSON.stringify(value)}`);
  if (n < 0n || n > 0xffff_ffff_ffff_ffffn) throw new RangeError(`sqlUInt: ${n} is outside UInt64`);
  return n.toString(10);
}

/**
 * A UTC DateTime from epoch seconds: `toDateTime(1700000000, 'UTC')`. Sub-second parts are cut
 * (DateTime has second precision); the range is DateTime's, 1970 to 2106.
 */
export function sqlDateTime(epochSeconds: number): string {
  if (typeof epochSeconds !== 'number' || !Number.isFinite(epochSeconds)) {
    throw new TypeError(`sqlDateTime expects epoch seconds, got ${String(epochSeconds)}`);
  }
  const s = Math.floor(epochSeconds);
  if (s < 0 || s > 0xffff_ffff) throw new RangeError(`sqlDateTime: ${s} is outside the DateTime range`);
  return `toDateTime(${s}, 'UTC')`;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A database/table/column name. Only plain identifiers are accepted (no quoting), so a name can
 * be spliced into DDL unchanged on both engines; anything else is a configuration error.
 */
export function sqlIdentifier(name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name) || name.length > 200) {
    throw new TypeError(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  }
  return name;
}
