// Lint of the extension: typescript-eslint's recommended rules over the extension, the webview
// and the tests (`npm run lint`; scripts/test and .ci/run run it). Generated protocol types are
// checked by their drift test, not linted.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "out-test/**", "node_modules/**", "src/protocol.generated.ts", "**/*.js", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: {
      // `const { field: _, ...rest } = x` drops a field: the rest is what is used.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true, argsIgnorePattern: "^_" }],
    },
  },
);
