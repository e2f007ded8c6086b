import { sqlDateTime, sqlIdentifier, sqlNumber, sqlString, sqlUInt } from './sql-literals';

describe('sql literals', () => {
  describe('sqlString', () => {
    it('quotes plain text', () => {
      expect(sqlString('abc')).toBe("'abc'");
      expect(sqlString('')).toBe("''");
    });

    it('escapes quotes and backslashes so the literal cannot be closed early', () => {
      expect(sqlString("a'b")).toBe("'a\\'b'");
      expect(sqlString('a\\b')).toBe("'a\\\\b'");
      // a trailing backslash must not escape the closing quote
      expect(sqlString('x\\')).toBe("'x\\\\'");
      expect(sqlString("\\'")).toBe("'\\\\\\''");
      expect(sqlString("'; DROP TABLE x; --")).toBe("'\\'; DROP TABLE x; --'");
    });

    it('escapes newlines, tabs and NUL, keeping the statement on one line', () => {
      expect(sqlString('a\nb\r\nc\td\0e')).toBe("'a\\nb\\r\\nc\\td\\0e'");
      expect(sqlString('a\nb')).not.toContain('\n');
    });

    it('keeps non-ASCII text as is', () => {
      expect(sqlString('ünïcode 😀')).toBe("'ünïcode 😀'");
    });

    it('refuses non-strings', () => {
      expect(() => sqlString(42 as unknown as string)).toThrow(TypeError);
    });
  });

  describe('sqlNumber', () => {
    it('writes integers and decimals', () => {
      expect(sqlNumber(0)).toBe('0');
      expect(sqlNumber(-12)).toBe('-12');
      expect(sqlNumber(1.5)).toBe('1.5');
      expect(sqlNumber(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    });

    it('refuses NaN, Infinity, unsafe integers and non-numbers', () => {
      expect(() => sqlNumber(NaN)).toThrow(TypeError);
      expect(() => sqlNumber(Infinity)).toThrow(TypeError);
      expect(() => sqlNumber(2 ** 60)).toThrow(RangeError);
      expect(() => sqlNumber('1 OR 1=1' as unknown as number)).toThrow(TypeError);
    });
  });

  describe('sqlUInt', () => {
    it('accepts numbers, bigints and decimal strings up to UInt64 max', () => {
      expect(sqlUInt(7)).toBe('7');
      expect(sqlUInt(9007199254740993n)).toBe('9007199254740993');
      expect(sqlUInt('18446744073709551615')).toBe('18446744073709551615');
    });

    it('refuses negatives, overflow and anything that is not digits', () => {
      expect(() => sqlUInt(-1)).toThrow(RangeError);
      expect(() => sqlUInt(-1n)).toThrow(RangeError);
      expect(() => sqlUInt('18446744073709551616')).toThrow(RangeError);
      expect(() => sqlUInt('1; DROP TABLE x')).toThrow(TypeError);
      expect(() => sqlUInt('')).toThrow(TypeError);
      expect(() => sqlUInt(1.5)).toThrow(RangeError);
    });
  });

  describe('sqlDateTime', () => {
    it('builds a UTC DateTime from epoch seconds, cutting fractions', () => {
      expect(sqlDateTime(1700000000)).toBe("toDateTime(1700000000, 'UTC')");
      expect(sqlDateTime(1700000000.9)).toBe("toDateTime(1700000000, 'UTC')");
      expect(sqlDateTime(0)).toBe("toDateTime(0, 'UTC')");
    });

    it('refuses values outside DateTime and non-numbers', () => {
      expect(() => sqlDateTime(-1)).toThrow(RangeError);
      expect(() => sqlDateTime(2 ** 32)).toThrow(RangeError);
      expect(() => sqlDateTime(NaN)).toThrow(TypeError);
      expect(() => sqlDateTime('0) OR (1' as unknown as number)).toThrow(TypeError);
    });
  });

  describe('sqlIdentifier', () => {
    it('accepts plain identifiers only', () => {
      expect(sqlIdentifier('shortlink_test_1a2b')).toBe('shortlink_test_1a2b');
      for (const bad of ['', '1abc', 'a-b', 'a.b', 'a b', 'a`b', "a'b", 'x;DROP']) {
        expect(() => sqlIdentifier(bad)).toThrow(TypeError);
      }
    });
  });
});
