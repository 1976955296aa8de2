// Images for a prompt: an image file added from the explorer ("Add to Tandem"), or a screenshot
// pasted or dropped into the panel. Each becomes an `image` content block (base64 bytes and media
// type); the sidecar sends it to a model that takes images, or refuses the prompt naming the model.
// Pure, so it is unit-tested.

import type { ContentBlock } from "./protocol";

/** Media types by file extension: what providers take. */
const TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

/** The media types an image may have. */
export const IMAGE_TYPES: readonly string[] = [...new Set(Object.values(TYPES))];

/** The largest image taken (the sidecar scales it down before it is sent). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** The media type of a file named `path`, when it is an image a model can take. */
export function imageType(path: string): string | undefined {
  const dot = path.lastIndexOf(".");
  return dot < 0 ? undefined : TYPES[path.slice(dot + 1).toLowerCase()];
}

/** The prompt's block for an image's bytes. */
export function imageBlock(bytes: Uint8Array, mimeType: string, uri?: string): ContentBlock {
  return { type: "image", data: Buffer.from(bytes).toString("base64"), mimeType, ...(uri ? { uri } : {}) };
}

/** The thumbnail (a data URL) of an image block, for the chip above the prompt. */
export function thumbnail(block: ContentBlock): string | undefined {
  return block.type === "image" && block.data ? `data:${block.mimeType};base64,${block.data}` : undefined;
}

/** Whether `data` is base64 of at most MAX_IMAGE_BYTES bytes. */
export function isImageData(data: unknown): data is string {
  return typeof data === "string" && data.length > 0 && data.length <= (MAX_IMAGE_BYTES / 3) * 4 + 4 && /^[A-Za-z0-9+/]+={0,2}$/.test(data);
}
