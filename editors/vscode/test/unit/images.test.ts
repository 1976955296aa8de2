import assert from "node:assert/strict";
import { test } from "node:test";

import { imageBlock, imageType, isImageData, thumbnail } from "../../src/images";
import { parseFromPanel } from "../../src/messages";
import { blockText } from "../../src/transcript";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

test("image files are known by their extension", () => {
  assert.equal(imageType("/w/Shot.PNG"), "image/png");
  assert.equal(imageType("a.jpeg"), "image/jpeg");
  assert.equal(imageType("a.webp"), "image/webp");
  assert.equal(imageType("a.svg"), undefined);
  assert.equal(imageType("png"), undefined);
});

test("an image block carries base64 bytes and shows as a thumbnail and in the message", () => {
  const block = imageBlock(Buffer.from(PNG, "base64"), "image/png", "file:///w/shot.png");
  assert.deepEqual(block, { type: "image", data: PNG, mimeType: "image/png", uri: "file:///w/shot.png" });
  assert.equal(thumbnail(block), `data:image/png;base64,${PNG}`);
  assert.equal(thumbnail({ type: "text", text: "x" }), undefined);
  assert.ok(blockText(block).includes(`![image](data:image/png;base64,${PNG})`));
});

test("a pasted image from the panel parses only as an image within the limit", () => {
  assert.deepEqual(parseFromPanel({ type: "attachImage", name: "", mimeType: "image/png", data: PNG }), {
    type: "attachImage",
    name: "pasted image",
    mimeType: "image/png",
    data: PNG,
  });
  assert.equal(parseFromPanel({ type: "attachImage", name: "x", mimeType: "image/svg+xml", data: PNG }), undefined);
  assert.equal(parseFromPanel({ type: "attachImage", name: "x", mimeType: "image/png", data: "not base64!" }), undefined);
  assert.equal(isImageData("A".repeat(30_000_000)), false);
});
