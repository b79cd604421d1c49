/** A run of text from one place in a document: a PDF page, a sheet, a slide, or the whole file. */
export interface ExtractedSegment {
  text: string;
  /** 1-based PDF page number. */
  page?: number;
  /** Where in the document the text comes from: a sheet name, or "Slide 3". */
  label?: string;
}

export interface ExtractedDocument {
  segments: ExtractedSegment[];
  /** What the format says of the document itself: pages (PDF) or slides (PPTX), title and author (PDF). */
  info?: DocumentInfo;
}

export interface DocumentInfo {
  pages?: number;
  title?: string;
  author?: string;
}

export interface ExtractOptions {
  /** Cap on the bytes an OOXML archive may inflate to; default 200 MB. */
  maxDecompressedBytes?: number;
  /**
   * A PDF of more pages is not extracted: the extraction fails at once, before reading any page,
   * with an error `isLaneLimit` recognises, so the file can move to the large-file lane.
   */
  maxPages?: number;
  /** Told how many pages are read, of how many, as a PDF is read (at most a few times a second). */
  onPages?: (done: number, total: number) => void;
}

/** Pages read are reported at most this often. */
export const PAGE_PROGRESS_EVERY_MS = 250;

/** `details.laneLimit` of the error a PDF over `maxPages` fails with. */
export interface LaneLimit {
  pages: number;
  maxPages: number;
}

export function isLaneLimit(error: unknown): error is { details: { laneLimit: LaneLimit } } {
  const details = (error as { details?: { laneLimit?: unknown } } | null)?.details;
  return typeof details?.laneLimit === 'object' && details.laneLimit !== null;
}
