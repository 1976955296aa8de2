// Which setting a configuration error is about, read from the error's text (the sidecar's errors
// name what to fix: "set TANDEM_API_KEY_ENV (or api_key_env under [provider] in
// .tandem/config.toml)", "unknown key `profil` in [tools] of /w/.tandem/config.toml"), so that the
// error can offer to open exactly that setting or file. Pure, so it is unit-tested.

export interface ConfigAdvice {
  /** The VS Code setting to open (`tandem.provider.apiKeyEnv`). */
  setting?: string;
  /** The config file the error names: an absolute path, or `.tandem/config.toml` (the workspace's). */
  configFile?: string;
}

/** The settings, each with the errors that are about it (first match wins). */
const SETTINGS: [string, RegExp][] = [
  ["tandem.path", /tandem\.path|no tandem binary|sidecar did not start: .*(?:ENOENT|EACCES|spawn)/i],
  ["tandem.provider.baseUrl", /no model provider answered|connection to the provider at/i],
  ["tandem.provider.apiKeyEnv", /API key|api_key_env|TANDEM_API_KEY_ENV|\bHTTP 40[13]\b/i],
  ["tandem.provider.kind", /provider kind/i],
  [
    "tandem.provider.model",
    /rejected the request for model|unknown model|model\b.{0,60}\b(?:not found|does not exist|not exist|is not available)|\bHTTP 404\b/i,
  ],
  // A hand-written settings.json can hold a value the settings' lists do not offer.
  ["tandem.profile", /initializationOptions: .*(?:\bprofile\b|`minimal`)/i],
  ["tandem.mode", /initializationOptions: .*(?:\bmode\b|`auto-edit`)/i],
];

/** A config.toml named in the text: an absolute path, or the workspace's `.tandem/config.toml`. */
const CONFIG_FILE = /(?:^|[\s`'"(])((?:[A-Za-z]:)?[\\/][^\s`'"():]*config\.toml|(?:\.\/)?\.tandem[\\/]config\.toml|~\/\.config\/tandem\/config\.toml)/;

/** What a configuration error is about; `{}` when it is not one. */
export function configAdvice(message: string): ConfigAdvice {
  const advice: ConfigAdvice = {};
  const setting = SETTINGS.find(([, pattern]) => pattern.test(message));
  if (setting) advice.setting = setting[0];
  const file = CONFIG_FILE.exec(message)?.[1];
  if (file) advice.configFile = file.replace(/^\.\//, "");
  return advice;
}

/**
 * The warning for a `tandem.provider.apiKeyEnv` that names a variable the editor's environment
 * (which the sidecar inherits) does not set; `undefined` when it is set or the setting is empty.
 */
export function unsetKeyWarning(apiKeyEnv: string, env: Record<string, string | undefined>): string | undefined {
  const name = apiKeyEnv.trim();
  if (name === "" || (env[name] ?? "") !== "") return undefined;
  return `tandem.provider.apiKeyEnv names $${name}, which is not set in VS Code's environment: requests would go out without a key. Set it in the shell that starts VS Code (export ${name}=…) and restart, or change the setting.`;
}
