import { posix } from 'node:path';
import { AppError, ErrorCode } from '../../common/app-error';
import { readZipSafely, ZipLimits } from '../zip-guard';
import { ExtractedDocument, ExtractedSegment } from './extracted-document';
import { decodeXmlEntities, xmlAttribute } from './xml-text';

const PRESENTATION = 'ppt/presentation.xml';
const PRESENTATION_RELS = 'ppt/_rels/presentation.xml.rels';
const SLIDE = /^ppt\/slides\/[^/]+\.xml$/;
const NUMBER = /(\d+)\.xml$/;
const DRAWINGML = 'http://schemas.openxmlformats.org/drawingml/2006/main';

/**
 * One segment per slide in presentation order, labelled "Slide N": the text runs of each
 * paragraph joined, paragraphs on their own lines, text boxes separated by blank lines.
 */
export async function extractPptx(bytes: Buffer, limits: Partial<ZipLimits>): Promise<ExtractedDocument> {
  const parts = await readZipSafely(bytes, {
    limits,
    keep: (name) => name === PRESENTATION || name === PRESENTATION_RELS || SLIDE.test(name),
  });
  const order = slideOrder(parts);
  if (order.length === 0) throw new AppError(ErrorCode.EXTRACTION_FAILED, 'corrupt PPTX: no slides found');
  const segments: ExtractedSegment[] = order.map((name, i) => ({
    text: slideText(parts.get(name)!.toString('utf8')),
    label: `Slide ${i + 1}`,
  }));
  return { segments, info: { pages: segments.length } };
}

/**
 * Slide part names in the order the presentation lists them (its sldIdLst, resolved through the
 * relationships); by slide file number when that list cannot be read.
 */
function slideOrder(parts: Map<string, Buffer>): string[] {
  const presentation = parts.get(PRESENTATION)?.toString('utf8');
  const rels = parts.get(PRESENTATION_RELS)?.toString('utf8');
  if (presentation && rels) {
    const targets = new Map<string, string>();
    for (const [tag] of rels.matchAll(/<(?:\w+:)?Relationship\b[^>]*>/g)) {
      const id = xmlAttribute(tag, 'Id');
      const target = xmlAttribute(tag, 'Target');
      if (id && target) targets.set(id, resolveTarget(target));
    }
    const ordered: string[] = [];
    for (const [tag] of presentation.matchAll(/<(?:\w+:)?sldId\b[^>]*>/g)) {
      const target = targets.get(xmlAttribute(tag, 'r:id') ?? '');
      if (target && parts.has(target)) ordered.push(target);
    }
    if (ordered.length) return ordered;
  }
  return [...parts.keys()].filter((name) => SLIDE.test(name)).sort((a, b) => slideNumber(a) - slideNumber(b));
}

function slideNumber(name: string): number {
  return Number(NUMBER.exec(name)?.[1] ?? 0);
}

function resolveTarget(target: string): string {
  return target.startsWith('/') ? target.slice(1) : posix.normalize(posix.join('ppt', target));
}

/**
 * Reads DrawingML text (`<a:p>`, `<a:t>`, `<a:br/>`) with a tag scanner rather than a DOM: slide
 * XML is machine-written and flat, and the scanner is linear in its size.
 */
export function slideText(xml: string): string {
  const prefix = drawingPrefix(xml);
  const tags = /<(\/?)(?:([\w.-]+):)?(p|t|br|txBody)(?=[\s/>])[^>]*?(\/?)>/g;
  const out: string[] = [];
  let paragraph: string[] = [];
  let match: RegExpExecArray | null;
  while ((match = tags.exec(xml))) {
    const [whole, closing, tagPrefix = '', local, selfClosing] = match;
    if (local === 'txBody') {
      if (closing) out.push('\n');
      continue;
    }
    if (tagPrefix !== prefix) continue;
    if (local === 'br') {
      paragraph.push('\n');
    } else if (local === 'p') {
      if (closing || selfClosing) {
        const text = paragraph.join('');
        if (text.trim()) out.push(text, '\n');
        paragraph = [];
      } else {
        paragraph = [];
      }
    } else if (local === 't' && !closing && !selfClosing) {
      const start = match.index + whole.length;
      const end = xml.indexOf(`</${prefix}:t>`, start);
      if (end === -1) break;
      paragraph.push(decodeXmlEntities(xml.slice(start, end)));
      tags.lastIndex = end;
    }
  }
  return out
    .join('')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The prefix bound to the DrawingML namespace; "a" in every file PowerPoint writes. */
function drawingPrefix(xml: string): string {
  const declared = new RegExp(`xmlns:([\\w.-]+)="${DRAWINGML.replace(/[.]/g, '\\.')}"`).exec(xml);
  return declared?.[1] ?? 'a';
}
