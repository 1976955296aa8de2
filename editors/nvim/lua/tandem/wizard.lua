-- :TandemSetup: the model provider chosen through vim.ui.select / vim.ui.input (kind, base URL,
-- model, the name of the API key's environment variable), written to the workspace's
-- `.tandem/config.toml` under [provider] (the file's other keys and sections kept), then
-- `tandem doctor`'s findings in a `tandem://doctor` split.
local M = {}

M.kinds = {
  { kind = "openai", text = "openai: OpenAI-compatible (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter)",
    base_url = "http://127.0.0.1:11434/v1", model = "qwen2.5-coder", api_key_env = "" },
  { kind = "anthropic", text = "anthropic: Anthropic's Messages API",
    base_url = "https://api.anthropic.com/v1", model = "claude-sonnet-4-5", api_key_env = "ANTHROPIC_API_KEY" },
}

--- A TOML basic string.
local function quote(text)
  return '"' .. text:gsub("\\", "\\\\"):gsub('"', '\\"') .. '"'
end

--- The [provider] keys of a config.toml's lines: { key = value } for the string keys.
function M.read_provider(lines)
  local values, inside = {}, false
  for _, line in ipairs(lines) do
    local section = line:match("^%s*%[([^%]]+)%]%s*$")
    if section then
      inside = vim.trim(section) == "provider"
    elseif inside then
      local key, value = line:match('^%s*([%w_]+)%s*=%s*"(.-)"%s*$')
      if key then
        values[key] = value:gsub('\\"', '"'):gsub("\\\\", "\\")
      end
    end
  end
  return values
end

--- `lines` of a config.toml with the [provider] keys of `values` set (a value of "" removes its
--- key); every other line is kept. A missing [provider] section is added at the end.
function M.set_provider(lines, values)
  local out, inside, found = {}, false, false
  local pending = {}
  local order = { "kind", "base_url", "model", "api_key_env" }
  for _, key in ipairs(order) do
    if values[key] ~= nil then
      pending[key] = true
    end
  end
  local function flush()
    for _, key in ipairs(order) do
      if pending[key] and values[key] ~= "" then
        out[#out + 1] = key .. " = " .. quote(values[key])
      end
      pending[key] = nil
    end
  end
  for _, line in ipairs(lines) do
    local section = line:match("^%s*%[([^%]]+)%]%s*$")
    if section then
      if inside then
        -- The new keys go right after the section's last key, before blank lines.
        local blanks = {}
        while #out > 0 and vim.trim(out[#out]) == "" do
          table.insert(blanks, 1, table.remove(out))
        end
        flush()
        vim.list_extend(out, blanks)
      end
      inside = vim.trim(section) == "provider"
      found = found or inside
      out[#out + 1] = line
    else
      local key = inside and line:match("^%s*([%w_]+)%s*=")
      if key and values[key] ~= nil then
        if values[key] ~= "" then
          out[#out + 1] = key .. " = " .. quote(values[key])
        end
        pending[key] = nil
      else
        out[#out + 1] = line
      end
    end
  end
  if inside then
    flush()
  elseif not found then
    if #out > 0 and vim.trim(out[#out]) ~= "" then
      out[#out + 1] = ""
    end
    out[#out + 1] = "[provider]"
    flush()
  end
  return out
end

--- The workspace root the sidecar uses (setup's root_dir, else the current directory).
local function root()
  local tandem = require("tandem")
  local client = require("tandem.client")
  local dir = client.root or tandem.config().root_dir or vim.fn.getcwd()
  return (vim.fn.fnamemodify(dir, ":p"):gsub("/$", ""))
end

--- Whether the sidecar takes the workspace's own provider settings: TANDEM_TRUST_WORKSPACE=1, or
--- the folder (or one above it) in the person's trusted-folders list (`tandem trust`).
function M.trusted(dir)
  if vim.env.TANDEM_TRUST_WORKSPACE == "1" then
    return true
  end
  local config_home = vim.env.XDG_CONFIG_HOME
  if not config_home or config_home == "" then
    config_home = (vim.env.HOME or "") .. "/.config"
  end
  local list = config_home .. "/tandem/trusted-folders"
  if vim.fn.filereadable(list) == 0 then
    return false
  end
  local real = vim.loop.fs_realpath(dir) or dir
  for _, line in ipairs(vim.fn.readfile(list)) do
    line = vim.trim(line)
    if line:sub(1, 1) == "/" and (real == line or real:sub(1, #line + 1) == line:gsub("/$", "") .. "/") then
      return true
    end
  end
  return false
end

--- Writes `values` ({ kind, base_url, model, api_key_env }) to <root>/.tandem/config.toml.
--- Returns the file's path.
function M.write(values, dir)
  dir = dir or root()
  vim.fn.mkdir(dir .. "/.tandem", "p")
  local path = dir .. "/.tandem/config.toml"
  local lines = vim.fn.filereadable(path) == 1 and vim.fn.readfile(path) or {}
  vim.fn.writefile(M.set_provider(lines, values), path)
  return path
end

--- The `tandem://doctor` split with `lines`; returns its buffer.
function M.show(lines)
  local name = "tandem://doctor"
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].buftype = "nofile"
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  local shown = false
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      shown = true
    end
  end
  if not shown then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  M.bufnr = bufnr
  return bufnr
end

--- Runs `tandem doctor` in `dir`; on_done(lines) with its output (stdout, then stderr).
function M.doctor(dir, on_done)
  local config = require("tandem").config()
  local out, err = {}, {}
  local function collect(into)
    return function(_, data)
      for _, line in ipairs(data or {}) do
        into[#into + 1] = line
      end
    end
  end
  local ok, job = pcall(vim.fn.jobstart, { config.cmd[1], "doctor" }, {
    cwd = dir,
    env = config.env,
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = collect(out),
    on_stderr = collect(err),
    on_exit = function(_, code)
      local lines = {}
      for _, line in ipairs(vim.list_extend(out, err)) do
        lines[#lines + 1] = (line:gsub("\r$", ""))
      end
      while #lines > 0 and lines[#lines] == "" do
        lines[#lines] = nil
      end
      if code ~= 0 then
        lines[#lines + 1] = string.format("(tandem doctor exited with %d)", code)
      end
      on_done(lines)
    end,
  })
  if not ok or job <= 0 then
    on_done({ string.format("could not run `%s doctor`: %s", config.cmd[1], ok and "not executable" or tostring(job)) })
  end
end

--- What the person chose, the file written, whether it applies, and the doctor's findings.
local function report(values, path, dir, doctor_lines)
  local lines = {
    "Tandem setup",
    "",
    "Wrote [provider] to " .. vim.fn.fnamemodify(path, ":~:."),
    "  kind        " .. values.kind,
    "  base_url    " .. values.base_url,
    "  model       " .. values.model,
  }
  if values.api_key_env ~= "" then
    local set = (vim.env[values.api_key_env] or "") ~= ""
    lines[#lines + 1] = string.format("  api_key_env %s (%s in this Neovim's environment)", values.api_key_env,
      set and "set" or "NOT set")
  else
    lines[#lines + 1] = "  api_key_env (none: no key is sent)"
  end
  if not M.trusted(dir) then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "This folder is not trusted, so the sidecar ignores [provider] kind, base_url and"
    lines[#lines + 1] = "api_key_env here: run `tandem trust` in it (or set them in setup({ provider = ... }))."
  end
  if require("tandem").config().provider then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Note: setup({ provider = ... }) in your Neovim configuration overrides these."
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "The sidecar reads the file when it starts: it restarts on the next command."
  lines[#lines + 1] = "To pick another of the provider's models for a session: :TandemModel (it lists them)."
  lines[#lines + 1] = ""
  lines[#lines + 1] = "$ tandem doctor"
  vim.list_extend(lines, doctor_lines)
  return lines
end

--- The questions, in order; on_done(values) or nothing when the person dismisses one.
local function ask(current, on_done)
  vim.ui.select(M.kinds, {
    prompt = "Tandem: model provider",
    kind = "tandem.setup",
    format_item = function(item)
      return item.text
    end,
  }, function(choice)
    if not choice then
      return
    end
    local same = current.kind == nil or current.kind == choice.kind
    local function default(key)
      return same and current[key] or choice[key]
    end
    vim.ui.input({ prompt = "Base URL: ", default = default("base_url") or choice.base_url }, function(base_url)
      if not base_url or vim.trim(base_url) == "" then
        return
      end
      vim.ui.input({ prompt = "Model: ", default = default("model") or choice.model }, function(model)
        if not model or vim.trim(model) == "" then
          return
        end
        local key_default = default("api_key_env") or choice.api_key_env
        vim.ui.input({ prompt = "Environment variable with the API key (empty: none): ", default = key_default },
          function(api_key_env)
            if api_key_env == nil then
              return
            end
            api_key_env = vim.trim(api_key_env)
            if api_key_env ~= "" and not api_key_env:match("^[%a_][%w_]*$") then
              require("tandem.notice").notify(string.format("tandem: `%s` is not an environment variable's name "
                .. "(the variable's name goes here, never the key)", api_key_env), vim.log.levels.ERROR)
              return
            end
            on_done({ kind = choice.kind, base_url = vim.trim(base_url), model = vim.trim(model), api_key_env = api_key_env })
          end)
      end)
    end)
  end)
end

--- :TandemSetup. opts.on_done(lines) once the report is shown.
function M.run(opts)
  opts = opts or {}
  local dir = root()
  local path = dir .. "/.tandem/config.toml"
  local current = vim.fn.filereadable(path) == 1 and M.read_provider(vim.fn.readfile(path)) or {}
  ask(current, function(values)
    local tandem = require("tandem")
    local written = M.write(values, dir)
    -- The sidecar reads its configuration when it starts: stop it (when no turn runs), so that
    -- the next command starts it with this one.
    local client = require("tandem.client")
    if client.running() and not tandem.state().busy then
      client.stop()
      -- Until its exit is handled: a new one must not start before that.
      vim.wait(5000, function()
        return client.client_id == nil
      end, 20)
    end
    M.doctor(dir, function(doctor_lines)
      local lines = report(values, written, dir, doctor_lines)
      M.show(lines)
      if opts.on_done then
        opts.on_done(lines)
      end
    end)
  end)
end

return M
