import { guardCell, unguardCell } from './csv-cells';

describe('CSV formula guard', () => {
  it('prefixes what a spreadsheet would run (= + - @ tab CR first) with an apostrophe, and nothing else', () => {
    expect(['=HYPERLINK("https://evil.example","x")', '+1 555', '-2+3', '@SUM(A1)', '\tx', '\rx'].map(guardCell)).toEqual([
      '\'=HYPERLINK("https://evil.example","x")',
      "'+1 555",
      "'-2+3",
      "'@SUM(A1)",
      "'\tx",
      "'\rx",
    ]);
    expect(['Spring sale', "'quoted", 'a=b', ' =x', ''].map(guardCell)).toEqual(['Spring sale', "'quoted", 'a=b', ' =x', '']);
  });

  it('gives back exactly what it guarded, also text that began with apostrophes', () => {
    for (const text of ['=1+1', "'=1+1", "''@x", "'plain", 'plain', '-', "'", '']) expect(unguardCell(guardCell(text))).toBe(text);
  });
});
