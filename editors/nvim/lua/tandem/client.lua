-- The sidecar as a Neovim LSP client: started on first use, attached to every normal file
-- buffer (so the sidecar reads unsaved text), and the channel for Tandem's own requests.
local config_mod = require("tandem.config")
local rpc_mod = require("tandem.rpc")

local M = {
  client_id = nil,
  rpc = nil,
  initialized = false,
  -- The initialize result's serverInfo and capabilities.experimental.tandem.
  server_info = nil,
  tandem_caps = nil,
  root = nil,
  -- Waiting for `initialize` to finish: functions(err).
  queue = {},
  -- The sidecar's last stderr lines (for :TandemInfo and crash messages).
  stderr = {},
  stopping = false,
  -- Buffers a review loaded that the sidecar did not have open: kept out of text sync until the
  -- change is committed (bufnr -> "reviewing" | "done"); see hold().
  held = {},
}

local STDERR_LINES = 200

local function push_stderr(line)
  M.stderr[#M.stderr + 1] = line:gsub("\27%[[%d;]*m", "")
  if #M.stderr > STDERR_LINES then
    table.remove(M.stderr, 1)
  end
end

local function flush(err)
  local queue = M.queue
  M.queue = {}
  for _, fn in ipairs(queue) do
    fn(err)
  end
end

function M.running()
  return M.rpc ~= nil and not M.rpc.is_closing()
end

--- Attaches the client to `bufnr` if it is a normal file buffer.
function M.attach(bufnr)
  if not M.client_id or not vim.api.nvim_buf_is_valid(bufnr) or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" or M.held[bufnr] then
    return
  end
  vim.lsp.buf_attach_client(bufnr, M.client_id)
end

--- Keeps `bufnr` out of text sync while a review shows it, unless the sidecar already has it
--- open. The sidecar staged the change against the disk; opening the buffer now would make it
--- commit behind the buffer's back (or against a document it did not stage for). release()
--- reloads the buffer from the disk the sidecar wrote and attaches it.
function M.hold(bufnr)
  if M.client_id and vim.lsp.buf_is_attached(bufnr, M.client_id) then
    return false
  end
  M.held[bufnr] = "reviewing"
  vim.fn.bufload(bufnr)
  -- The person edits it during the review: from then on the sidecar follows the buffer (it
  -- carries the change over to the buffer's text, or refuses it), or the accepted change would
  -- go to the disk behind the buffer's back.
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function()
      if M.held[bufnr] ~= "reviewing" then
        return true
      end
      M.held[bufnr] = nil
      vim.schedule(function()
        M.attach(bufnr)
      end)
      return true
    end,
  })
  return true
end

--- The review of a held buffer ended: it can be released once the change is committed.
function M.review_done(bufnr)
  if M.held[bufnr] then
    M.held[bufnr] = "done"
  end
end

--- Reloads each held buffer whose review ended (if unmodified) and attaches it.
function M.release_done()
  for bufnr, held in pairs(M.held) do
    if held == "done" then
      M.held[bufnr] = nil
      if vim.api.nvim_buf_is_loaded(bufnr) then
        if not vim.bo[bufnr].modified then
          pcall(vim.api.nvim_buf_call, bufnr, function()
            vim.cmd("silent edit!")
          end)
        end
        M.attach(bufnr)
      end
    end
  end
end

--- `workspace/applyEdit`: each `documentChanges` edit applies only to the buffer version it was
--- computed for; otherwise nothing is applied and the answer says why (the sidecar then carries
--- the change over to the new text, or refuses it). Edits without versions go to Neovim's handler.
function M.apply_edit(err, params, ctx)
  local edit = params and params.edit or {}
  if type(edit.documentChanges) ~= "table" then
    return vim.lsp.handlers["workspace/applyEdit"](err, params, ctx)
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or "utf-16"
  local versions = vim.lsp.util.buf_versions
  local planned = {}
  for _, change in ipairs(edit.documentChanges) do
    if change.kind then
      return { applied = false, failureReason = "tandem: file operations are not applied by edits" }
    end
    local doc = change.textDocument or {}
    local bufnr = vim.uri_to_bufnr(doc.uri)
    vim.fn.bufload(bufnr)
    local version = doc.version
    local now = versions[bufnr] or vim.api.nvim_buf_get_changedtick(bufnr)
    if version ~= nil and version ~= vim.NIL and version ~= now then
      return {
        applied = false,
        failureReason = string.format("the buffer is at version %s, the edit is for version %s", tostring(now), tostring(version)),
      }
    end
    planned[#planned + 1] = { bufnr = bufnr, edits = change.edits or {} }
  end
  for _, p in ipairs(planned) do
    local ok, failure = pcall(vim.lsp.util.apply_text_edits, p.edits, p.bufnr, encoding)
    if not ok then
      return { applied = false, failureReason = tostring(failure) }
    end
  end
  return { applied = true }
end

local function root_of(config)
  if config.root_dir then
    local root = vim.fn.fnamemodify(config.root_dir, ":p")
    root = root:gsub("/$", "")
    return root
  end
  return vim.fn.getcwd()
end

--- Starts the sidecar (once). `handlers` = { requests = {...}, notifications = {...} } for
--- rpc.start. Errors (level 0) when the command cannot run.
function M.start(config, handlers)
  if M.running() then
    return M.client_id
  end
  local cmd = config.cmd
  if vim.fn.executable(cmd[1]) == 0 then
    error(string.format("tandem: `%s` is not executable (is it on PATH?); set `cmd` in require(\"tandem\").setup()", cmd[1]), 0)
  end
  local root = root_of(config)
  if vim.fn.isdirectory(root) == 0 then
    error(string.format("tandem: the workspace root %s is not a directory", root), 0)
  end
  M.root = root
  M.initialized = false
  M.stopping = false
  M.stderr = {}

  local function make_rpc(dispatchers)
    M.rpc = rpc_mod.start(cmd, dispatchers, {
      cwd = root,
      env = config.env,
      requests = handlers.requests,
      notifications = handlers.notifications,
      on_stderr = push_stderr,
    })
    return M.rpc
  end

  local lsp_config = {
    name = "tandem",
    cmd = make_rpc,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = config_mod.init_options(config),
    -- Every change reaches the sidecar at once: an answer to a review (sent right after a
    -- keystroke) must never overtake the text it was given for.
    flags = { debounce_text_changes = 0 },
    -- Edits come pinned to the buffer's version, and one for an older version is refused
    -- (Neovim's own handler would apply it at stale positions, or skip it and say it applied).
    capabilities = vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
      workspace = { workspaceEdit = { documentChanges = true } },
    }),
    handlers = { ["workspace/applyEdit"] = M.apply_edit },
    on_init = function(_, result)
      M.initialized = true
      M.server_info = result and result.serverInfo
      M.tandem_caps = result and result.capabilities and result.capabilities.experimental
        and result.capabilities.experimental.tandem
      flush(nil)
    end,
    on_exit = function(code, signal)
      local expected = M.stopping
      M.client_id, M.rpc, M.initialized = nil, nil, false
      local tail = table.concat(vim.list_slice(M.stderr, math.max(#M.stderr - 5, 1)), "\n")
      local message = string.format("the sidecar exited (code %s, signal %s)%s", code, signal, tail ~= "" and (":\n" .. tail) or "")
      flush(message)
      if not expected then
        vim.schedule(function()
          -- A configuration the sidecar refused says what to set.
          require("tandem.notice").notify(require("tandem.advice").explain("tandem: " .. message), vim.log.levels.ERROR)
        end)
      end
      require("tandem").on_sidecar_exit()
    end,
  }

  local id
  if vim.fn.has("nvim-0.11") == 1 then
    id = vim.lsp.start(lsp_config, { attach = false })
  elseif vim.fn.has("nvim-0.8") == 1 then
    id = vim.lsp.start_client(lsp_config)
  else
    -- 0.7: `cmd` must be a list; the transport is swapped in for this one call.
    local lsp_rpc = require("vim.lsp.rpc")
    local original = lsp_rpc.start
    lsp_rpc.start = function(_, _, dispatchers)
      return make_rpc(dispatchers)
    end
    lsp_config.cmd = cmd
    local ok, result = pcall(vim.lsp.start_client, lsp_config)
    lsp_rpc.start = original
    if not ok then
      error(result, 0)
    end
    id = result
  end
  if not id then
    error("tandem: the LSP client did not start (see :messages and :TandemInfo)", 0)
  end
  M.client_id = id
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
  return id
end

--- Runs fn(err) once the sidecar has answered `initialize` (at once if it has).
function M.when_ready(config, handlers, fn)
  local ok, err = pcall(M.start, config, handlers)
  if not ok then
    fn(err)
    return
  end
  if M.initialized then
    fn(nil)
  else
    M.queue[#M.queue + 1] = fn
  end
end

--- Sends `method` once the sidecar is ready; callback(err_message, result).
function M.request(config, handlers, method, params, callback)
  M.when_ready(config, handlers, function(err)
    if err then
      callback(err)
      return
    end
    local sent = M.rpc.request(method, params, function(rpc_err, result)
      if rpc_err then
        callback(rpc_err.message or vim.inspect(rpc_err))
      else
        callback(nil, result)
      end
    end)
    if not sent then
      callback("the sidecar is not running")
    end
  end)
end

function M.notify(method, params)
  if M.running() and M.initialized then
    return M.rpc.notify(method, params)
  end
  return false
end

function M.stop()
  if M.client_id then
    M.stopping = true
    vim.lsp.stop_client(M.client_id)
  end
end

return M
