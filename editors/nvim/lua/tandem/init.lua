-- Tandem for Neovim: setup(), the commands' implementations and the Lua API
-- (prompt, review, accept, reject, cancel, set_mode, set_model). A shim: the agent, the tools, the diffs
-- and the hunk ids all live in the sidecar.
local config_mod = require("tandem.config")
local client = require("tandem.client")
local chat = require("tandem.chat")
local review = require("tandem.review")
local ask = require("tandem.ask")

local M = {}

local state = {
  config = nil,
  session_id = nil,
  -- The session's mode, or the one the next session starts in.
  mode = nil,
  -- The session's model (nil before a session).
  model = nil,
  -- The model chosen last (:TandemModel): new sessions start with it.
  picked = nil,
  -- The session's model choices (tandem.models.from_result), once the sidecar listed them.
  models = nil,
  busy = false,
  -- Prompts sent while a turn ran, sent in order when it ends: { text, opts }.
  queue = {},
  -- The last `usage_update` of the session (the statusline's token meter).
  usage = nil,
  -- Context added with :TandemAdd for the next prompt: { path, from?, to?, text }.
  attached = {},
}

local function cfg()
  if not state.config then
    state.config = config_mod.resolve({})
  end
  return state.config
end

--- An error in a notice; one about the configuration says which option fixes it.
local function notify_error(err)
  require("tandem.notice").notify(require("tandem.advice").explain(err, state.config), vim.log.levels.ERROR)
end

-- The spinner of status() while a turn runs: a timer redraws the statuslines.
local SPINNER = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local spinner = { timer = nil, frame = 1 }
local progress_mod = require("tandem.progress")

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

--- The running turn's indicator under the chat: the spinner, the time and the streamed tokens.
local function show_progress()
  if state.progress then
    local waiting = review.active and "your review" or (ask.waiting and ask.waiting > 0 and "your answer") or nil
    chat.progress(SPINNER[spinner.frame] .. " " .. progress_mod.label(state.progress, now_ms(), waiting))
  end
end

local function set_busy(busy)
  state.busy = busy
  -- How long the turn has run and how many tokens streamed: in the chat and the statusline.
  state.progress = busy and progress_mod.start(now_ms()) or nil
  if busy and not spinner.timer then
    spinner.timer = vim.loop.new_timer()
    spinner.timer:start(120, 120, vim.schedule_wrap(function()
      if spinner.timer then
        spinner.frame = spinner.frame % #SPINNER + 1
        pcall(show_progress)
        pcall(vim.cmd, "redrawstatus!")
      end
    end))
  elseif not busy and spinner.timer then
    spinner.timer:stop()
    spinner.timer:close()
    spinner.timer = nil
  end
  if busy then
    pcall(show_progress)
  else
    chat.progress(nil)
  end
  pcall(vim.cmd, "redrawstatus!")
end

--- `tandem/document/save`: writes the buffer (as :write), so the disk matches it.
local function save_document(params, respond)
  local path = vim.uri_to_fname(params.uri)
  local bufnr = vim.fn.bufnr(path)
  if bufnr == -1 or not vim.api.nvim_buf_is_loaded(bufnr) then
    respond({ saved = false })
    return
  end
  -- A new file's directory may not exist yet.
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local ok = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent keepalt lockmarks write")
  end)
  respond({ saved = ok and not vim.bo[bufnr].modified })
end

--- Reloads unmodified buffers whose files changed on disk (a command the agent ran, a file the
--- sidecar wrote because it was not open here). Modified buffers are left alone.
local function reload_changed()
  client.release_done()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == "" and not vim.bo[bufnr].modified
      and vim.api.nvim_buf_get_name(bufnr) ~= "" then
      pcall(vim.cmd, "silent checktime " .. bufnr)
    end
  end
end

--- Reloads buffers whose files changed on disk (after a restore; see reload_changed).
function M.reload_changed()
  reload_changed()
end

local handlers = {
  requests = {
    ["tandem/session/requestPermission"] = function(params, respond)
      if not review.start(params, respond, cfg().keymaps) then
        ask.permission(params, respond)
      end
    end,
    ["tandem/session/askUser"] = ask.ask_user,
    ["tandem/document/save"] = save_document,
  },
  notifications = {
    ["tandem/session/update"] = function(params)
      if params.sessionId ~= state.session_id then
        return
      end
      local update = params.update or {}
      progress_mod.count(state.progress, update)
      if update.sessionUpdate == "current_mode_update" then
        state.mode = update.currentModeId
      elseif update.sessionUpdate == "usage_update" then
        state.usage = update
        vim.cmd("redrawstatus!")
      end
      chat.on_update(update)
      if update.sessionUpdate == "tool_call_update" and (update.status == "completed" or update.status == "failed") then
        reload_changed()
      end
    end,
  },
}

local function define_highlights()
  vim.cmd("highlight default link TandemAdded DiffAdd")
  vim.cmd("highlight default link TandemRemoved DiffDelete")
  vim.cmd("highlight default link TandemHunk DiffText")
  vim.cmd("highlight default link TandemCardOk String")
  vim.cmd("highlight default link TandemCardFailed DiagnosticError")
  vim.cmd("highlight default link TandemCardRunning Comment")
  vim.cmd("highlight default link TandemProgress Comment")
  vim.cmd("highlight default link TandemRejected Comment")
end

-- The Visual-mode key of `add_selection`, as mapped now (so that setup() can move it).
local mapped_add_key = nil

local function map_add_selection(key)
  if mapped_add_key and mapped_add_key ~= key then
    pcall(vim.keymap.del, "x", mapped_add_key)
    mapped_add_key = nil
  end
  if key and not mapped_add_key then
    -- A mapping of the person's own on that key wins.
    if vim.fn.maparg(key, "x") == "" then
      vim.keymap.set("x", key, "<Plug>(TandemAddSelection)", { remap = true, desc = "Tandem: add the selection to the next prompt" })
      mapped_add_key = key
    end
  end
end

--- Called once by plugin/tandem.lua: highlights and buffer attachment.
function M._init()
  if M._initialized then
    return
  end
  M._initialized = true
  define_highlights()
  vim.keymap.set("x", "<Plug>(TandemAddSelection)", ":TandemAdd<CR>", { silent = true, desc = "Tandem: add the selection to the next prompt" })
  map_add_selection(cfg().add_selection or nil)
  local group = vim.api.nvim_create_augroup("tandem", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = define_highlights })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost", "BufEnter" }, {
    group = group,
    callback = function(args)
      if client.running() then
        client.attach(args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      client.stop()
    end,
  })
end

--- require("tandem").setup({ cmd, provider, mode, profile, root_dir, env, keymaps, chat, add_selection }).
function M.setup(opts)
  state.config = config_mod.resolve(opts)
  map_add_selection(state.config.add_selection or nil)
  chat.output_lines = state.config.chat.output_lines
  if state.config.mode then
    state.mode = state.config.mode
  end
  M._init()
  return M
end

function M.on_sidecar_exit()
  state.session_id = nil
  state.usage = nil
  state.model = nil
  -- It may come back with other settings (:TandemSetup stops it): their models, not these.
  state.models = nil
  state.picked = nil
  set_busy(false)
  state.queue = {}
  if review.active then
    review.finish("cancelled")
  end
end

--- The resolved configuration (setup()'s options over the defaults).
function M.config()
  return cfg()
end

--- Requests `method` once the sidecar is up; callback(err, result).
function M.request(method, params, callback)
  client.request(cfg(), handlers, method, params, callback)
end

local fetch_models

--- Asks the sidecar for the slash commands (`:Tandem /<Tab>`), quietly: without them the
--- completion offers nothing, and the prompt still works.
local function fetch_commands()
  if state.commands_asked then
    return
  end
  state.commands_asked = true
  M.request("tandem/commands/list", vim.empty_dict(), function(err, result)
    if err then
      state.commands_asked = false
      return
    end
    state.commands = require("tandem.slash").from_result(result)
  end)
end

--- `:Tandem`'s completion: `/name` of the commands the sidecar listed (asked on first use).
function M.complete_prompt(lead, cmdline)
  fetch_commands()
  return require("tandem.slash").complete(lead or "", cmdline or "", state.commands)
end

local function ensure_session(callback)
  if state.session_id then
    callback(nil, state.session_id)
    return
  end
  local params = vim.empty_dict()
  if state.mode or state.picked or cfg().worktree then
    params = { mode = state.mode, model = state.picked, worktree = cfg().worktree }
  end
  M.request("tandem/session/new", params, function(err, result)
    if err then
      callback(err)
      return
    end
    state.session_id = result.sessionId
    -- A session in a worktree says where it works.
    state.worktree = result.worktree ~= vim.NIL and result.worktree or nil
    if state.worktree then
      vim.api.nvim_echo({ { string.format("Tandem: working in worktree %s at %s (branch %s%s)", state.worktree.name,
        state.worktree.path, state.worktree.branch, state.worktree.created and ", new" or "") } }, true, {})
    end
    state.usage = nil
    state.mode = result.modes and result.modes.current or state.mode
    state.model = result.model ~= vim.NIL and result.model or nil
    -- The provider's models, for :TandemModel's completion (quietly: a list that cannot be read
    -- says why when :TandemModel asks).
    fetch_models(state.session_id, function() end)
    fetch_commands()
    callback(nil, state.session_id)
  end)
end

--- A context as an embedded resource: lines `from`-`to` of `path` (its URI with `#L<from>-<to>`),
--- or the whole file.
local function resource_block(context)
  if context.image then
    -- The sidecar reads the image file (and refuses it, naming the model, for one without vision).
    return { type = "image", data = "", mimeType = context.mime_type, uri = vim.uri_from_fname(context.path) }
  end
  if context.link then
    return { type = "resource_link", uri = context.uri, name = context.label or context.uri }
  end
  if context.uri then
    return { type = "resource", resource = { uri = context.uri, text = context.text, mimeType = context.mime_type } }
  end
  local uri = vim.uri_from_fname(context.path)
  if context.from then
    uri = string.format("%s#L%d-%d", uri, context.from, context.to)
  end
  return { type = "resource", resource = { uri = uri, text = context.text } }
end

--- The prompt's content blocks: the text, the contexts added with :TandemAdd (`attached`), and the
--- selection, each as an embedded resource. selection = { path, from, to (1-based lines), text };
--- an attached context may leave out `from` and `to` (the whole file).
function M.prompt_blocks(text, selection, attached)
  local blocks = { { type = "text", text = text } }
  for _, context in ipairs(attached or {}) do
    blocks[#blocks + 1] = resource_block(context)
  end
  if selection then
    blocks[#blocks + 1] = resource_block(selection)
  end
  return blocks
end

--- How a context is named in the chat: "calc.py lines 2-3", or "calc.py".
function M.describe_context(context)
  if context.label then
    return context.label
  end
  local path = vim.fn.fnamemodify(context.path, ":~:.")
  if context.from then
    return string.format("%s lines %d-%d", path, context.from, context.to)
  end
  return path
end

-- Context variables of a prompt ------------------------------------------------------------

--- The buffer `#buffer` and `#diagnostics` mean: the current one when it is a file's, else the
--- one of the previous window (a prompt typed in the chat is about the file beside it).
local function context_buffer()
  local current = vim.api.nvim_get_current_buf()
  if vim.bo[current].buftype == "" then
    return current
  end
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  if previous ~= 0 then
    local bufnr = vim.api.nvim_win_get_buf(previous)
    if vim.bo[bufnr].buftype == "" then
      return bufnr
    end
  end
  error("tandem: #buffer and #diagnostics need a file's buffer (this one is not)", 0)
end

local function buffer_path(bufnr)
  local path = vim.api.nvim_buf_get_name(bufnr)
  return path ~= "" and path or "untitled"
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

local SEVERITY = { "error", "warning", "info", "hint" }

--- The diagnostics of `bufnr` (vim.diagnostic) as a resource: one line each,
--- "calc.py:2:5: error: message [source]".
local function diagnostics_context(bufnr)
  local path = buffer_path(bufnr)
  local shown = vim.fn.fnamemodify(path, ":~:.")
  local items = vim.diagnostic.get(bufnr)
  table.sort(items, function(x, y)
    return x.lnum < y.lnum or (x.lnum == y.lnum and x.col < y.col)
  end)
  local lines = { string.format("Diagnostics of %s (%d):", shown, #items) }
  for _, d in ipairs(items) do
    lines[#lines + 1] = string.format("%s:%d:%d: %s: %s%s", shown, d.lnum + 1, d.col + 1, SEVERITY[d.severity] or "?",
      (d.message or ""):gsub("\n", " "), d.source and (" [" .. d.source .. "]") or "")
  end
  return { path = path, uri = vim.uri_from_fname(path) .. "#diagnostics", text = table.concat(lines, "\n"),
    mime_type = "text/plain", label = "diagnostics of " .. shown }
end

--- `#file:path`: the buffer's text when the file is loaded (unsaved changes included), else the file.
local function file_context(name)
  local path = vim.fn.fnamemodify(vim.fn.expand(name), ":p")
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    return { path = path, text = buffer_text(bufnr) }
  end
  if vim.fn.filereadable(path) == 0 then
    error(string.format("tandem: #file:%s: no such file", name), 0)
  end
  return { path = path, text = table.concat(vim.fn.readfile(path), "\n") }
end

local IMAGE_TYPES = { png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", gif = "image/gif", webp = "image/webp" }

--- An image file (PNG, JPEG, GIF or WebP) as a context: `#image:path` and :TandemAttach.
function M.image_context(name)
  local path = vim.fn.fnamemodify(vim.fn.expand(name), ":p")
  local mime_type = IMAGE_TYPES[(vim.fn.fnamemodify(path, ":e") or ""):lower()]
  if not mime_type then
    error(string.format("tandem: %s is not an image (PNG, JPEG, GIF or WebP)", name), 0)
  end
  if vim.fn.filereadable(path) == 0 then
    error(string.format("tandem: %s: no such file", name), 0)
  end
  return { image = true, path = path, mime_type = mime_type, label = "image " .. vim.fn.fnamemodify(path, ":~:.") }
end

--- `#url:<address>`: a link the agent may fetch (http and https only).
local function url_context(url)
  if not url:match("^[hH][tT][tT][pP][sS]?://[^/%s]+") then
    error(string.format("tandem: #url:%s: not an http or https address", url), 0)
  end
  return { uri = url, link = true, label = url }
end

--- The context variables in `text` as contexts to attach (in the order written, each once):
--- `#buffer` (the current buffer's text), `#file:<path>` (a file's), `#image:<path>` (an image
--- file, sent as an image to a model that takes images), `#diagnostics` (the
--- current buffer's vim.diagnostic), `#url:<address>` (a link the agent may fetch), and
--- `#symbol:<name>` as `{ symbol = name }`, which M.resolve_symbols turns into the definition.
--- A `#` inside a word (`issue#3`) is not one. Errors on a file that does not exist.
function M.context_variables(text)
  local contexts, seen = {}, {}
  local function add(key, make)
    if not seen[key] then
      seen[key] = true
      contexts[#contexts + 1] = make()
    end
  end
  for word in (" " .. text):gmatch("%s(#%S+)") do
    word = word:gsub("[%.,;:!?%)]+$", "")
    if word == "#buffer" then
      local bufnr = context_buffer()
      add("buffer", function()
        return { path = buffer_path(bufnr), text = buffer_text(bufnr) }
      end)
    elseif word == "#diagnostics" then
      local bufnr = context_buffer()
      add("diagnostics", function()
        return diagnostics_context(bufnr)
      end)
    elseif word:match("^#file:.") then
      local name = word:sub(7)
      add("file:" .. name, function()
        return file_context(name)
      end)
    elseif word:match("^#image:.") then
      local name = word:sub(8)
      add("image:" .. name, function()
        return M.image_context(name)
      end)
    elseif word:match("^#url:.") then
      local url = word:sub(6)
      add("url:" .. url, function()
        return url_context(url)
      end)
    elseif word:match("^#symbol:.") then
      local name = word:sub(9)
      add("symbol:" .. name, function()
        return { symbol = name }
      end)
    end
  end
  return contexts
end

--- Replaces each `{ symbol = name }` of `contexts` (M.context_variables') with the symbol's
--- definition from the language servers (the current file's picks the server), then
--- callback(nil, contexts); callback(message) when a symbol is not found.
function M.resolve_symbols(contexts, callback)
  local pending = {}
  for i, context in ipairs(contexts) do
    if context.symbol then
      pending[#pending + 1] = i
    end
  end
  if #pending == 0 then
    callback(nil, contexts)
    return
  end
  local ok, bufnr = pcall(context_buffer)
  local hint = ok and vim.api.nvim_buf_get_name(bufnr) or ""
  hint = hint ~= "" and vim.fn.filereadable(hint) == 1 and hint or nil
  local root = function()
    return client.root or vim.fn.getcwd()
  end
  local function next_one(k)
    if k > #pending then
      callback(nil, contexts)
      return
    end
    local i = pending[k]
    require("tandem.symbols").resolve(M.request, contexts[i].symbol, hint, root, function(err, context)
      if err then
        callback(err)
        return
      end
      contexts[i] = context
      next_one(k + 1)
    end)
  end
  next_one(1)
end

--- Adds context { path, from?, to?, text } to the next prompt (:TandemAdd).
function M.add_context(context)
  if type(context) ~= "table" or type(context.path) ~= "string" or (type(context.text) ~= "string" and not context.image) then
    error("tandem.add_context: expected { path, from?, to?, text }", 0)
  end
  state.attached[#state.attached + 1] = context
  local names = vim.tbl_map(M.describe_context, state.attached)
  chat.note("with the next prompt: " .. table.concat(names, ", "))
  vim.api.nvim_echo({ { "Tandem: with the next prompt: " .. table.concat(names, ", ") } }, false, {})
end

--- The context waiting for the next prompt.
function M.attached()
  return vim.deepcopy(state.attached)
end

--- Drops the context waiting for the next prompt (:TandemAdd!).
function M.clear_context()
  state.attached = {}
  vim.api.nvim_echo({ { "Tandem: nothing added to the next prompt" } }, false, {})
end

local send_prompt

--- Sends the first queued prompt (a turn just ended).
local function send_queued()
  local next = table.remove(state.queue, 1)
  if not next then
    return
  end
  vim.schedule(function()
    local ok, err = pcall(M.prompt, next.text, next.opts)
    if not ok then
      notify_error(tostring(err))
      if next.opts.on_done then
        next.opts.on_done(tostring(err))
      end
    end
  end)
end

--- Drops the prompts waiting for the running turn's end (:TandemCancel!); their on_done gets
--- an error. Returns how many there were.
function M.drop_queued()
  local dropped = state.queue
  state.queue = {}
  for _, queued in ipairs(dropped) do
    chat.note("dropped the queued prompt: " .. queued.text)
    if queued.opts.on_done then
      queued.opts.on_done("the queued prompt was dropped")
    end
  end
  if #dropped == 0 then
    vim.notify("tandem: no prompt is queued", vim.log.levels.WARN)
  end
  pcall(vim.cmd, "redrawstatus!")
  return #dropped
end

--- Sends a prompt. opts.selection (see prompt_blocks), opts.on_done(err, result).
function M.prompt(text, opts)
  opts = opts or {}
  if type(text) ~= "string" or vim.trim(text) == "" then
    error("tandem.prompt: the prompt is empty", 0)
  end
  if state.busy then
    -- Sent when the turn ends, as typed then (its context variables are read then too).
    state.queue[#state.queue + 1] = { text = text, opts = opts }
    chat.note(string.format("queued: %s (sent when this turn ends; :TandemCancel! drops it)", text))
    vim.api.nvim_echo({ { "Tandem: queued; sent when this turn ends (:TandemCancel! drops it)" } }, false, {})
    pcall(vim.cmd, "redrawstatus!")
    return
  end
  -- Before the chat opens: `#buffer` is about the window the person is in.
  local variables = {}
  if opts.variables ~= false then
    variables = M.context_variables(text)
  end
  set_busy(true)
  -- `#symbol:` asks the language servers first (at once when there is none).
  M.resolve_symbols(variables, function(err, resolved)
    if err then
      set_busy(false)
      notify_error(err)
      if opts.on_done then
        opts.on_done(err)
      end
      return
    end
    send_prompt(text, opts, resolved)
  end)
end

--- M.prompt once its context variables are resolved: the chat, the session, the request.
send_prompt = function(text, opts, variables)
  local config = cfg()
  if config.chat.open_on_prompt then
    chat.open(config.chat.split, false)
  end
  local attached = vim.list_extend(vim.deepcopy(state.attached), variables)
  state.attached = {}
  local shown = text
  if #attached > 0 then
    shown = string.format("%s\n\n(attached: %s)", shown, table.concat(vim.tbl_map(M.describe_context, attached), ", "))
  end
  if opts.selection then
    local path = vim.fn.fnamemodify(opts.selection.path, ":~:.")
    shown = string.format("%s\n\n(selection: %s lines %d-%d)", shown, path, opts.selection.from, opts.selection.to)
  end
  chat.user(shown)
  local function done(err, result)
    set_busy(false)
    reload_changed()
    review.clear_echo()
    local failure = err or (result and result.error)
    if err then
      chat.note("error: " .. tostring(err))
    elseif failure then
      chat.note(string.format("turn ended (%s): %s", tostring(result.stopReason), failure))
    else
      chat.note("turn ended: " .. tostring(result and result.stopReason))
    end
    if failure then
      notify_error("tandem: " .. tostring(failure))
      -- What to set stays in the chat (the notice goes after a while).
      local advice = require("tandem.advice").for_error(failure, state.config)
      for _, line in ipairs(advice and vim.split(advice, "\n", { plain = true }) or {}) do
        chat.note(line)
      end
    end
    if opts.on_done then
      opts.on_done(err, result)
    end
    send_queued()
  end
  ensure_session(function(err, session_id)
    if err then
      done(err)
      return
    end
    M.request(
      "tandem/session/prompt",
      { sessionId = session_id, prompt = M.prompt_blocks(text, opts.selection, attached) },
      done
    )
  end)
end

--- Stops the running turn (an open review is closed as cancelled).
function M.cancel()
  if not state.busy or not state.session_id then
    vim.notify("tandem: no turn is running", vim.log.levels.WARN)
    return false
  end
  -- ACP's order: the cancel, then `cancelled` for the request still waiting for the person.
  client.notify("tandem/session/cancel", { sessionId = state.session_id })
  if review.active then
    review.finish("cancelled")
  end
  chat.note("cancel requested")
  return true
end

--- Switches the permission mode (of the session, or of the next one).
function M.set_mode(mode, on_done)
  if not vim.tbl_contains(config_mod.modes, mode) then
    error(string.format("tandem: unknown mode %q (%s)", tostring(mode), table.concat(config_mod.modes, ", ")), 0)
  end
  if not state.session_id then
    state.mode = mode
    vim.api.nvim_echo({ { "Tandem: mode " .. mode .. " (for the next session)" } }, false, {})
    if on_done then
      on_done(nil)
    end
    return
  end
  M.request("tandem/session/setMode", { sessionId = state.session_id, modeId = mode }, function(err)
    if err then
      notify_error("tandem: " .. err)
    else
      state.mode = mode
      vim.api.nvim_echo({ { "Tandem: mode " .. mode } }, false, {})
    end
    if on_done then
      on_done(err)
    end
  end)
end

-- The model ----------------------------------------------------------------------------------

local models_mod = require("tandem.models")

--- Asks the sidecar for session `session_id`'s model choices (the provider's list may take a
--- moment); callback(err, models) with models as tandem.models.from_result gives them.
fetch_models = function(session_id, callback)
  M.request("tandem/session/configOptions", { sessionId = session_id }, function(err, result)
    if err then
      callback(err)
      return
    end
    local models = models_mod.from_result(result)
    if not models then
      callback("the sidecar offers no model option")
      return
    end
    if session_id == state.session_id then
      state.models = models
      state.model = models.current
    end
    callback(nil, models)
  end)
end

--- The session's model choices (the session starts if there is none): callback(err, { current,
--- choices = { { value, name, description? } }, error? }); `error` says why the provider's list
--- could not be read (the choices are then the configured model and the session's).
function M.models(callback)
  ensure_session(function(err, session_id)
    if err then
      callback(err)
      return
    end
    fetch_models(session_id, callback)
  end)
end

--- Switches the session to `model` from its next request to the provider (before a session: the
--- next session starts with it). on_done(err).
function M.set_model(model, on_done)
  if type(model) ~= "string" or vim.trim(model) == "" then
    error("tandem: the model name is empty (:TandemModel without one lists the choices)", 0)
  end
  model = vim.trim(model)
  local function finish(err)
    if on_done then
      on_done(err)
    end
  end
  local session_id = state.session_id
  if not session_id then
    state.picked = model
    vim.api.nvim_echo({ { "Tandem: model " .. model .. " (for the next session)" } }, false, {})
    finish(nil)
    return
  end
  M.request("tandem/session/setConfigOption", { sessionId = session_id, configId = "model", value = model },
    function(err, result)
      if err then
        notify_error(string.format("tandem: could not switch to the model %s: %s", model, err))
        finish(err)
        return
      end
      state.picked = model
      local models = models_mod.from_result(result)
      if models and session_id == state.session_id then
        -- No network behind this answer: the reason the provider's list is missing stays the last one read.
        models.error = state.models and state.models.error
        state.models = models
        state.model = models.current
      end
      vim.api.nvim_echo({ { "Tandem: model " .. model } }, false, {})
      finish(nil)
    end)
end

--- :TandemModel without a name: vim.ui.select over the session's model choices, then set_model.
--- opts.on_done(err) once the model is set (or nothing was chosen).
function M.choose_model(opts)
  opts = opts or {}
  local function finish(err)
    if opts.on_done then
      opts.on_done(err)
    end
  end
  M.models(function(err, models)
    if err then
      notify_error("tandem: could not list the models: " .. tostring(err))
      finish(err)
      return
    end
    if models.error then
      require("tandem.notice").notify("tandem: only the configured model is offered: the provider's models could not "
        .. "be listed: " .. models.error, vim.log.levels.WARN)
    end
    vim.ui.select(models.choices, {
      prompt = "Tandem model (now: " .. models.current .. ")",
      kind = "tandem.model",
      format_item = function(choice)
        return models_mod.label(choice, models.current)
      end,
    }, function(choice)
      if choice and choice.value ~= models.current then
        M.set_model(choice.value, opts.on_done)
      else
        finish(nil)
      end
    end)
  end)
end

--- The model names :TandemModel completes `lead` with (the choices last listed; no request).
function M.complete_model(lead)
  local known = {}
  for _, name in ipairs({ state.model or false, state.picked or false, (cfg().provider or {}).model or false }) do
    if name then
      known[#known + 1] = name
    end
  end
  return models_mod.complete(lead or "", state.models, known)
end

--- The open review: { title, file, files, hunks = { { id, state, file, ... } } }, or nil.
function M.review()
  return review.snapshot()
end

--- Accepts hunk `id` (default: the one under the cursor).
function M.accept(id)
  review.decide("accepted", id)
end

--- Rejects hunk `id` (default: the one under the cursor).
function M.reject(id)
  review.decide("rejected", id)
end

function M.accept_all()
  review.decide_all("accepted")
end

function M.reject_all()
  review.decide_all("rejected")
end

--- Whether stored session `info` matches `filter` (words, each in its title, id or date; any case).
function M.session_matches(info, filter)
  local haystack = table.concat({ info.title or "", info.sessionId or "", info.updatedAt or "" }, " "):lower()
  for word in (filter or ""):lower():gmatch("%S+") do
    if not haystack:find(word, 1, true) then
      return false
    end
  end
  return true
end

local function session_label(item)
  if item.new then
    return "+ new session"
  end
  return string.format("%s  %s  %s", item.updatedAt or "", item.title or "(untitled)", item.sessionId)
end

--- Deletes stored session `id` (the sidecar keeps sessions in its state directory, outside the
--- workspace). Refused for the session in use. `done(ok, err)` is called with true, or false and
--- why.
function M.delete_session(id, done)
  done = done or function() end
  if type(id) ~= "string" or not id:match("^[%w_-]+$") then
    return done(false, string.format("`%s` is not a session id", tostring(id)))
  end
  if id == state.session_id then
    return done(false, "that is the current session (choose \"+ new session\" in :TandemSessions first)")
  end
  if not client.root then
    return done(false, "the sidecar is not running")
  end
  M.request("tandem/session/delete", { sessionId = id }, function(err)
    if err then
      return done(false, err)
    end
    done(true)
  end)
end

local function resume(choice)
  if state.busy then
    notify_error("tandem: a turn is running (:TandemCancel first)")
    return
  end
  if choice.new then
    state.session_id = nil
    state.usage = nil
    state.model = nil
    chat.note("new session")
    return
  end
  state.session_id = choice.sessionId
  state.usage = nil
  state.model = nil
  chat.open(cfg().chat.split, false)
  -- The load replays the whole history: start from an empty chat, or it shows twice.
  chat.clear()
  chat.note("session " .. choice.sessionId)
  M.request("tandem/session/load", { sessionId = choice.sessionId }, function(load_err, loaded)
    if load_err then
      notify_error("tandem: " .. load_err)
      state.session_id = nil
      return
    end
    state.mode = loaded.modes and loaded.modes.current or state.mode
    -- The resumed session's model (and the choices, for :TandemModel's completion).
    fetch_models(choice.sessionId, function() end)
  end)
end

local function delete(choice)
  vim.ui.select({ "Delete", "Keep" }, {
    prompt = string.format("Delete the session %q (%s)?", choice.title or "(untitled)", choice.sessionId),
    kind = "tandem.confirm",
  }, function(answer)
    if answer ~= "Delete" then
      return
    end
    M.delete_session(choice.sessionId, function(ok, why)
      if ok then
        vim.api.nvim_echo({ { "Tandem: deleted session " .. choice.sessionId } }, true, {})
      else
        notify_error("tandem: " .. why)
      end
    end)
  end)
end

--- Lists stored sessions (newest first) and resumes the chosen one (or starts a new one).
--- opts.filter: only sessions matching these words (M.session_matches); opts.delete: the chosen
--- session is deleted (after a question) instead.
function M.sessions(opts)
  opts = opts or {}
  M.request("tandem/session/list", vim.empty_dict(), function(err, result)
    if err then
      notify_error("tandem: " .. err)
      return
    end
    local items = {}
    if not opts.delete then
      items[1] = { new = true }
    end
    local matched = 0
    for _, s in ipairs(result.sessions or {}) do
      if M.session_matches(s, opts.filter) then
        items[#items + 1] = s
        matched = matched + 1
      end
    end
    if matched == 0 and (opts.delete or (opts.filter or "") ~= "") then
      notify_error(string.format("tandem: no stored session%s", (opts.filter or "") ~= "" and (" matches \"" .. opts.filter .. "\"") or ""))
      return
    end
    vim.ui.select(items, {
      prompt = opts.delete and "Delete a Tandem session" or "Tandem sessions",
      kind = "tandem.sessions",
      format_item = session_label,
    }, function(choice)
      if not choice then
        return
      end
      if opts.delete then
        delete(choice)
      else
        resume(choice)
      end
    end)
  end)
end

--- What :TandemInfo prints.
function M.info()
  local config = cfg()
  local v = vim.version()
  local lines = {
    string.format("Neovim %d.%d.%d; client started with %s", v.major, v.minor, v.patch,
      vim.fn.has("nvim-0.11") == 1 and "vim.lsp.start" or "vim.lsp.start_client"),
    string.format("cmd: %s (%s)", table.concat(config.cmd, " "),
      vim.fn.executable(config.cmd[1]) == 1 and vim.fn.exepath(config.cmd[1]) or "NOT FOUND"),
  }
  if client.running() then
    local server = client.server_info or {}
    lines[#lines + 1] = string.format("sidecar: running, pid %s, %s %s, root %s", tostring(client.rpc.pid),
      server.name or "?", server.version or "?", client.root or "?")
    if client.tandem_caps then
      lines[#lines + 1] = string.format("protocol %s, %d tools", tostring(client.tandem_caps.version),
        #(client.tandem_caps.tools or {}))
    end
  else
    lines[#lines + 1] = "sidecar: not running (starts on the first command)"
  end
  lines[#lines + 1] = string.format("session: %s, mode: %s, model: %s, turn running: %s", state.session_id or "none",
    state.mode or "default", M.model() or "(the sidecar's configured one)", tostring(state.busy))
  if state.worktree then
    lines[#lines + 1] = string.format("worktree: %s at %s (branch %s)", state.worktree.name, state.worktree.path,
      state.worktree.branch)
  end
  if state.models and state.models.error then
    lines[#lines + 1] = "models: only the configured model is offered: " .. state.models.error
  end
  if state.usage then
    lines[#lines + 1] = "tokens: " .. require("tandem.usage").format(state.usage)
  end
  local p = config.provider or {}
  lines[#lines + 1] = string.format("provider: %s %s %s (key in $%s)", p.kind or "(sidecar config)", p.base_url or "",
    p.model or "", p.api_key_env or "-")
  if review.active then
    lines[#lines + 1] = review.summary()
    if review.active.headline then
      lines[#lines + 1] = review.active.headline
    end
  end
  for _, line in ipairs(vim.list_slice(client.stderr, math.max(#client.stderr - 2, 1))) do
    lines[#lines + 1] = "stderr: " .. line
  end
  return lines
end

--- The token meter for a statusline: "Tandem 12.3k/128k (10%) Σ 40.5k" (the context's fill at
--- the last request, the session's total), or "" before the first answer. For example
--- `vim.o.statusline = "%f %= %{v:lua.require'tandem'.statusline()}"`.
function M.statusline()
  local text = require("tandem.usage").format(state.usage)
  return text ~= "" and ("Tandem " .. text) or ""
end

--- One short string for a statusline (lualine, 'statusline', 'winbar'): while a turn runs a
--- spinner, "Tandem", what it waits for (a review, a question) and the mode unless "default";
--- idle with a session, "Tandem" and the token meter; "" before the first prompt. E.g. with lualine:
--- `lualine_x = { function() return require("tandem").status() end }`.
function M.status()
  local parts = {}
  if state.busy then
    parts[#parts + 1] = SPINNER[spinner.frame] .. " Tandem"
    if review.active then
      parts[#parts + 1] = "review"
    elseif ask.waiting and ask.waiting > 0 then
      parts[#parts + 1] = "question"
    end
    -- How long it has run and the tokens streamed so far.
    local running = progress_mod.short(state.progress, now_ms())
    if running then
      parts[#parts + 1] = running
    end
    if #state.queue > 0 then
      parts[#parts + 1] = string.format("(%d queued)", #state.queue)
    end
  elseif state.session_id then
    parts[#parts + 1] = "Tandem"
  else
    return ""
  end
  if state.mode and state.mode ~= "default" then
    parts[#parts + 1] = state.mode
  end
  if not state.busy then
    local usage = require("tandem.usage").format(state.usage)
    if usage ~= "" then
      parts[#parts + 1] = usage
    end
  end
  return table.concat(parts, " ")
end

--- The session's model; before a session, the one the next session starts with (nil when the
--- sidecar's configuration decides).
function M.model()
  if state.session_id then
    return state.model
  end
  return state.picked or (cfg().provider or {}).model
end

--- State for scripts and tests: { session_id, mode, model, busy, queued, running, client_id, usage }
--- (`queued`: the texts of the prompts waiting for the turn's end).
function M.state()
  return {
    session_id = state.session_id,
    mode = state.mode,
    model = M.model(),
    busy = state.busy,
    queued = vim.tbl_map(function(q)
      return q.text
    end, state.queue),
    running = client.running(),
    client_id = client.client_id,
    usage = state.usage,
  }
end

M.chat = chat

-- Commands (plugin/tandem.lua) --------------------------------------------------------------

--- Errors (level 0) when a turn is running: a restore waits for the turn's end, in the person's words.
local function idle(command)
  if state.busy then
    local open_review = require("tandem.review").active
    error(string.format("tandem: a turn is running%s; %s, then %s again", open_review and " and waits for your review" or "",
      open_review and "accept or reject its changes (or :TandemCancel)" or "wait for it or :TandemCancel", command), 0)
  end
end
M.idle = idle

local function guarded(fn)
  return function(...)
    local ok, err = pcall(fn, ...)
    if not ok then
      notify_error(err)
    end
  end
end

M.commands = {
  Tandem = guarded(function(args)
    local selection = nil
    if args.range and args.range > 0 then
      local bufnr = vim.api.nvim_get_current_buf()
      local lines = vim.api.nvim_buf_get_lines(bufnr, args.line1 - 1, args.line2, false)
      selection = {
        path = vim.api.nvim_buf_get_name(bufnr),
        from = args.line1,
        to = args.line2,
        text = table.concat(lines, "\n"),
      }
      if selection.path == "" then
        selection.path = "untitled"
      end
    end
    if args.args ~= "" then
      M.prompt(args.args, { selection = selection })
      return
    end
    vim.ui.input({ prompt = "Tandem> " }, guarded(function(text)
      if text and vim.trim(text) ~= "" then
        M.prompt(text, { selection = selection })
      end
    end))
  end),
  TandemAdd = guarded(function(args)
    if args.bang then
      M.clear_context()
      return
    end
    local bufnr = vim.api.nvim_get_current_buf()
    local path = vim.api.nvim_buf_get_name(bufnr)
    if args.range and args.range > 0 then
      local lines = vim.api.nvim_buf_get_lines(bufnr, args.line1 - 1, args.line2, false)
      M.add_context({ path = path ~= "" and path or "untitled", from = args.line1, to = args.line2,
        text = table.concat(lines, "\n") })
      return
    end
    if path == "" or vim.bo[bufnr].buftype ~= "" then
      error("tandem: :TandemAdd adds a file's buffer (or, with a range, its lines); this buffer is not a file", 0)
    end
    M.add_context({ path = path, text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") })
  end),
  TandemAttach = guarded(function(args)
    -- An image for the next prompt: the file named, else the current buffer's (an image opened
    -- in Neovim shows its bytes; its name is what counts).
    local name = args.args
    if name == "" then
      name = vim.api.nvim_buf_get_name(0)
      if name == "" then
        error("tandem: :TandemAttach takes an image file (PNG, JPEG, GIF or WebP): open one, or name it", 0)
      end
    end
    M.add_context(M.image_context(name))
  end),
  TandemChat = guarded(function()
    chat.open(cfg().chat.split, true)
  end),
  TandemCancel = guarded(function(args)
    if args.bang then
      M.drop_queued()
      return
    end
    M.cancel()
  end),
  TandemMode = guarded(function(args)
    if args.args == "" then
      vim.ui.select(config_mod.modes, { prompt = "Tandem mode (now: " .. (state.mode or "default") .. ")" }, guarded(function(mode)
        if mode then
          M.set_mode(mode)
        end
      end))
      return
    end
    M.set_mode(args.args)
  end),
  TandemModel = guarded(function(args)
    if vim.trim(args.args) == "" then
      M.choose_model()
      return
    end
    M.set_model(args.args)
  end),
  TandemSessions = guarded(function(args)
    M.sessions({ filter = args.args, delete = args.bang })
  end),
  TandemCheckpoints = guarded(function()
    idle(":TandemCheckpoints")
    require("tandem.checkpoints").pick()
  end),
  TandemUndo = guarded(function()
    idle(":TandemUndo")
    require("tandem.checkpoints").undo()
  end),
  TandemRedo = guarded(function()
    idle(":TandemRedo")
    require("tandem.checkpoints").redo()
  end),
  TandemCompact = guarded(function()
    require("tandem.checkpoints").compact()
  end),
  TandemWorktree = guarded(function(args)
    require("tandem.worktrees").command(args.args)
  end),
  TandemSetup = guarded(function()
    require("tandem.wizard").run()
  end),
  TandemInfo = guarded(function()
    local chunks = {}
    for _, line in ipairs(M.info()) do
      chunks[#chunks + 1] = { line .. "\n" }
    end
    vim.api.nvim_echo(chunks, true, {})
  end),
}

return M
