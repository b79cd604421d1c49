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
}

export interface ExtractOptions {
  /** Cap on the bytes an OOXML archive may inflate to; default 200 MB. */
  maxDecompressedBytes?: number;
}
