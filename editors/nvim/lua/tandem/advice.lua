-- What to set when an error is about the configuration: the sidecar's errors say what failed
-- ("refused the API key", "no model provider answered at …", "unknown key … in
-- /w/.tandem/config.toml"); the notice adds the setup() option that fixes it, with an example,
-- and offers :TandemSetup (which writes [provider] for you) or the config file to edit.
local M = {}

-- Each: the texts that identify the error (any case), what to set, and the setup() option.
M.rules = {
  { find = { "no model provider answered", "connection to the provider at" }, what = "the provider's base URL",
    option = 'provider = { base_url = "http://127.0.0.1:11434/v1" }', setup = true },
  { find = { "api key", "api_key_env", "tandem_api_key_env", "http 401", "http 403" },
    key = true },
  { find = { "provider kind" }, what = "the provider kind", option = 'provider = { kind = "openai" }', setup = true },
  { find = { "rejected the request for model", "unknown model", "model not found", "http 404" }, what = "the model",
    option = 'provider = { model = "qwen2.5-coder" }', setup = true },
  { find = { "is not executable" }, what = "where the tandem binary is", option = 'cmd = { "/path/to/tandem", "lsp" }' },
}

-- The usual environment variable of each provider kind's key.
local KEY_ENV = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }

--- The API key advice for the configuration in use (`config.provider`): the variable it names.
local function key_advice(config)
  local provider = type(config) == "table" and type(config.provider) == "table" and config.provider or {}
  local env = provider.api_key_env
  if type(env) == "string" and env ~= "" then
    local set = vim.env[env] ~= nil and vim.env[env] ~= ""
    return string.format(
      "The key comes from $%s (provider.api_key_env)%s: %s, then restart Neovim; or name another variable: require(\"tandem\").setup({ provider = { api_key_env = \"...\" } }).",
      env,
      set and ", which the provider refused" or ", which is not set",
      set and "put a valid key in it" or "export " .. env .. "=<your key> in the shell that starts Neovim"
    )
  end
  local example = KEY_ENV[provider.kind] or "ANTHROPIC_API_KEY"
  return string.format(
    'To fix it, set the environment variable that holds the API key: require("tandem").setup({ provider = { api_key_env = "%s" } }), or run :TandemSetup.',
    example
  )
end

--- The advice for `message` (a line or two), or nil when it is not about the configuration.
--- `config` (the resolved setup()) names the settings in use.
function M.for_error(message, config)
  local text = tostring(message)
  local lower = text:lower()
  local lines = {}
  for _, rule in ipairs(M.rules) do
    local hit = false
    for _, part in ipairs(rule.find) do
      hit = hit or lower:find(part, 1, true) ~= nil
    end
    if hit and rule.key then
      lines[#lines + 1] = key_advice(config)
      break
    elseif hit then
      lines[#lines + 1] = string.format('To fix it, set %s: require("tandem").setup({ %s })%s.', rule.what, rule.option,
        rule.setup and ", or run :TandemSetup" or "")
      break
    end
  end
  local file = text:match("([~%w%._/%-]*config%.toml)")
  if file and not file:find("^%[") then
    if vim.fn.filereadable(vim.fn.expand(file)) == 1 then
      lines[#lines + 1] = string.format("The file: :edit %s", file)
    else
      lines[#lines + 1] = string.format("The file %s does not exist yet: :TandemSetup writes it.", file)
    end
  end
  return #lines > 0 and table.concat(lines, "\n") or nil
end

--- `message` with its advice under it (as it is when it has none).
function M.explain(message, config)
  local advice = M.for_error(message, config)
  return advice and (tostring(message) .. "\n" .. advice) or tostring(message)
end

return M
