/**
 * The few SVG pieces the charts are drawn with: escaped text, lines, rectangles, a document.
 *
 * @module
 */

/** Escapes text for SVG content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Attributes of an element; `undefined` ones are left out. Numbers are rounded to 0.1. */
type Attributes = Readonly<Record<string, string | number | undefined>>;

function attributes(attrs: Attributes): string {
  return Object.entries(attrs)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}="${typeof value === 'number' ? round(value) : escapeXml(value!)}"`)
    .join('');
}

function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** An empty element, e.g. `element('line', { x1: 0, … })`. */
export function element(name: string, attrs: Attributes): string {
  return `<${name}${attributes(attrs)}/>`;
}

/** A text element. */
export function text(x: number, y: number, content: string, attrs: Attributes = {}): string {
  return `<text${attributes({ x, y, ...attrs })}>${escapeXml(content)}</text>`;
}

/** A whole SVG document of `width` × `height` with a white background and the default font. */
export function svgDocument(width: number, height: number, title: string, body: readonly string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    element('rect', { x: 0, y: 0, width, height, fill: '#ffffff' }),
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
