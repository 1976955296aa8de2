import { strict as assert } from "node:assert";
import { test } from "node:test";

import { unsetKeyWarning } from "../../src/configErrors";

test("an apiKeyEnv that names an unset variable is warned about, naming it", () => {
  const said = unsetKeyWarning("OPENAI_API_KEY", {});
  assert.ok(said?.includes("$OPENAI_API_KEY") && said.includes("tandem.provider.apiKeyEnv"), said);
  assert.equal(unsetKeyWarning("OPENAI_API_KEY", { OPENAI_API_KEY: "" }) !== undefined, true);
  assert.equal(unsetKeyWarning("OPENAI_API_KEY", { OPENAI_API_KEY: "sk-1" }), undefined);
  assert.equal(unsetKeyWarning("  ", {}), undefined);
});
