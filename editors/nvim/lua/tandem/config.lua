-- setup() options: defaults, validation with messages a person can act on, and the
-- initializationOptions they become (the `InitializationOptions` type of server/protocol).
local M = {}

M.modes = { "default", "auto-edit", "plan", "yolo" }
M.profiles = { "minimal", "standard", "full", "custom" }
M.provider_kinds = { "openai", "anthropic" }

M.defaults = {
  cmd = { "tandem", "lsp" },
  -- nil: the sidecar's own configuration (.tandem/config.toml, TANDEM_* variables).
  provider = nil,
  mode = nil,
  profile = nil,
  -- The workspace root; default: the current directory when the sidecar starts.
  root_dir = nil,
  -- New sessions work in the agent worktree of this name (a git worktree on the branch
  -- `tandem/NAME`, outside the checkout, created or reused); nil: in the workspace.
  worktree = nil,
  -- Extra environment variables for the sidecar.
  env = nil,
  -- Review keys, buffer-local while a review is open. `g` first, so that Vim's own `a`, `r`, `A`
  -- and `R` keep working in a reviewed file (the keys before were exactly those).
  keymaps = { accept = "ga", reject = "gr", accept_all = "gA", reject_all = "gR", next = "]h", prev = "[h" },
  -- The Visual-mode key that adds the selected lines to the next prompt (as :'<,'>TandemAdd);
  -- false: none (map `<Plug>(TandemAddSelection)` yourself).
  add_selection = "<leader>ta",
  chat = {
    -- Open the chat split when a prompt is sent.
    open_on_prompt = true,
    -- Split command used to open it.
    split = "botright vsplit",
    -- The most lines of a finished tool call's output shown under it (its tail); 0: none.
    output_lines = 20,
  },
}

local function contains(list, value)
  for _, item in ipairs(list) do
    if item == value then
      return true
    end
  end
  return false
end

local function check_string(path, value)
  if value ~= nil and type(value) ~= "string" then
    error(string.format("tandem.setup: `%s` must be a string, got %s", path, type(value)), 0)
  end
end

local function one_of(path, value, list)
  check_string(path, value)
  if value ~= nil and not contains(list, value) then
    error(string.format("tandem.setup: `%s` = %q is not one of %s", path, value, table.concat(list, ", ")), 0)
  end
end

--- The defaults merged with `opts`; errors (level 0, message only) on bad input.
function M.resolve(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("tandem.setup: expected a table of options, got " .. type(opts), 0)
  end
  local known = { cmd = 1, provider = 1, mode = 1, profile = 1, root_dir = 1, env = 1, keymaps = 1, chat = 1, permissions = 1,
    add_selection = 1, worktree = 1 }
  for key in pairs(opts) do
    if not known[key] then
      error(string.format("tandem.setup: unknown option `%s`", tostring(key)), 0)
    end
  end
  local config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if opts.cmd ~= nil then
    config.cmd = opts.cmd -- a list replaces the default, never merges into it
  end
  if type(config.cmd) == "string" then
    config.cmd = { config.cmd, "lsp" }
  end
  if type(config.cmd) ~= "table" or #config.cmd == 0 then
    error("tandem.setup: `cmd` must be a list like { \"tandem\", \"lsp\" }", 0)
  end
  for i, part in ipairs(config.cmd) do
    if type(part) ~= "string" then
      error(string.format("tandem.setup: `cmd[%d]` must be a string", i), 0)
    end
  end
  one_of("mode", config.mode, M.modes)
  one_of("profile", config.profile, M.profiles)
  check_string("root_dir", config.root_dir)
  check_string("worktree", config.worktree)
  if config.provider ~= nil then
    if type(config.provider) ~= "table" then
      error("tandem.setup: `provider` must be a table { kind, base_url, model, api_key_env }", 0)
    end
    for key in pairs(config.provider) do
      if not contains({ "kind", "base_url", "model", "api_key_env" }, key) then
        error(string.format("tandem.setup: unknown option `provider.%s` (kind, base_url, model, api_key_env)", key), 0)
      end
    end
    one_of("provider.kind", config.provider.kind, M.provider_kinds)
    check_string("provider.base_url", config.provider.base_url)
    check_string("provider.model", config.provider.model)
    check_string("provider.api_key_env", config.provider.api_key_env)
  end
  local lines = config.chat.output_lines
  if type(lines) ~= "number" or lines < 0 or lines % 1 ~= 0 then
    error("tandem.setup: `chat.output_lines` must be a whole number of lines (0 or more)", 0)
  end
  if config.add_selection ~= false and (type(config.add_selection) ~= "string" or config.add_selection == "") then
    error("tandem.setup: `add_selection` must be a key sequence or false", 0)
  end
  if config.permissions ~= nil then
    if type(config.permissions) ~= "table" then
      error("tandem.setup: `permissions` must be a table { allow = {...}, ask = {...}, deny = {...} }", 0)
    end
    for name, rules in pairs(config.permissions) do
      if name ~= "allow" and name ~= "ask" and name ~= "deny" then
        error(string.format("tandem.setup: unknown `permissions.%s` (allow, ask, deny)", name), 0)
      end
      if type(rules) ~= "table" then
        error(string.format("tandem.setup: `permissions.%s` must be a list of rules like \"bash(npm test:*)\"", name), 0)
      end
    end
  end
  for name, key in pairs(config.keymaps) do
    if M.defaults.keymaps[name] == nil then
      error(string.format("tandem.setup: unknown keymap `%s` (%s)", name, "accept, reject, accept_all, reject_all, next, prev"), 0)
    end
    if key ~= false and (type(key) ~= "string" or key == "") then
      error(string.format("tandem.setup: `keymaps.%s` must be a key sequence or false", name), 0)
    end
  end
  return config
end

--- initializationOptions for `initialize` (camelCase on the wire; unset fields left out).
function M.init_options(config)
  local options = { profile = config.profile, mode = config.mode }
  local p = config.provider
  if p then
    options.provider = { kind = p.kind, baseUrl = p.base_url, model = p.model, apiKeyEnv = p.api_key_env }
    if next(options.provider) == nil then
      options.provider = nil
    end
  end
  if config.permissions and next(config.permissions) ~= nil then
    options.permissions = config.permissions
  end
  if next(options) == nil then
    return vim.empty_dict()
  end
  return options
end

return M
