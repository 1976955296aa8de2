-- The chat buffer (filetype `tandem-chat`): the session's transcript as Markdown, streamed as
-- `tandem/session/update` notifications arrive; tool calls as cards (a header updated in place:
-- `✓ calc.py +2 −2`, `✗ $ pytest  · exit 1`; once finished, the body under it: an edit's diff
-- folded, a command's output tail in view, an answer, long output folded); the plan as a checklist.
local M = {
  bufnr = nil,
  -- What the last lines are: "user", "agent", "thought", "tool", "note", or nil.
  last = nil,
  -- toolCallId -> { mark (extmark of the header), title, kind, status, shown, files, command, exit }.
  tools = {},
  -- The most lines of a finished call's output in view; a test run's failures are at its end, so
  -- longer output keeps its tail, the rest folded. 0: all folded. Set from `chat.output_lines`.
  output_lines = 20,
}

local NAME = "tandem://chat"

function M.buffer()
  if M.bufnr and vim.api.nvim_buf_is_valid(M.bufnr) then
    return M.bufnr
  end
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(bufnr, NAME)
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].filetype = "tandem-chat"
  vim.bo[bufnr].modifiable = false
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("silent! setlocal syntax=markdown")
  end)
  M.bufnr, M.last, M.tools = bufnr, nil, {}
  -- Folding is window-local: whichever window shows the chat folds the cards' bodies.
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = bufnr,
    callback = function()
      M.set_folds(vim.api.nvim_get_current_win())
    end,
  })
  local function ask()
    vim.ui.input({ prompt = "Tandem> " }, function(text)
      if text and text ~= "" then
        require("tandem").prompt(text)
      end
    end)
  end
  for _, key in ipairs({ "i", "<CR>" }) do
    vim.api.nvim_buf_set_keymap(bufnr, "n", key, "", { noremap = true, nowait = true, callback = ask, desc = "Tandem: prompt" })
  end
  local function code_action(fn)
    return function()
      local ok, err = pcall(fn, vim.api.nvim_win_get_cursor(0)[1])
      if not ok then
        vim.notify(tostring(err), vim.log.levels.ERROR)
      end
    end
  end
  vim.api.nvim_buf_set_keymap(bufnr, "n", "gy", "", { noremap = true, nowait = true, callback = code_action(M.yank_code),
    desc = "Tandem: copy the code block under (or above) the cursor" })
  vim.api.nvim_buf_set_keymap(bufnr, "n", "gp", "", { noremap = true, nowait = true, callback = code_action(M.insert_code),
    desc = "Tandem: insert the code block under (or above) the cursor into the last window" })
  return bufnr
end

function M.window()
  local bufnr = M.bufnr
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return nil
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return win
    end
  end
  return nil
end

--- Shows the chat in a split (unless shown); focuses it when `focus`.
function M.open(split, focus)
  local bufnr = M.buffer()
  local win = M.window()
  if not win then
    local previous = vim.api.nvim_get_current_win()
    vim.cmd(split)
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].number = false
    M.set_folds(win)
    if not focus then
      vim.api.nvim_set_current_win(previous)
    end
  elseif focus then
    vim.api.nvim_set_current_win(win)
  end
  return win
end

local function scroll()
  local win = M.window()
  if win then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(M.bufnr), 0 })
  end
end

-- The running turn's indicator ("⠋ Working… 12s · ~340 tokens"): a virtual line under the last
-- line of the chat (not its text), kept there as the chat grows; gone when the turn ends.
M.progress_ns = vim.api.nvim_create_namespace("tandem-chat-progress")

local function place_progress(bufnr)
  vim.api.nvim_buf_clear_namespace(bufnr, M.progress_ns, 0, -1)
  if M.progress_text then
    M.progress_mark = vim.api.nvim_buf_set_extmark(bufnr, M.progress_ns, vim.api.nvim_buf_line_count(bufnr) - 1, 0, {
      virt_lines = { { { M.progress_text, "TandemProgress" } } },
    })
  end
end

--- Shows `text` as the running turn's indicator under the chat's last line (nil: removes it).
function M.progress(text)
  M.progress_text = text
  if M.bufnr and vim.api.nvim_buf_is_valid(M.bufnr) then
    place_progress(M.bufnr)
  end
end

--- The indicator's text as shown (for tests), or nil.
function M.progress_shown()
  if not M.bufnr or not vim.api.nvim_buf_is_valid(M.bufnr) then
    return nil
  end
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(M.bufnr, M.progress_ns, 0, -1, { details = true })) do
    local lines = mark[4].virt_lines
    if lines and lines[1] and lines[1][1] then
      return lines[1][1][1], mark[2]
    end
  end
  return nil
end

local function edit(fn)
  local bufnr = M.buffer()
  vim.bo[bufnr].modifiable = true
  local ok, err = pcall(fn, bufnr)
  vim.bo[bufnr].modifiable = false
  if not ok then
    error(err)
  end
  if M.progress_text then
    place_progress(bufnr)
  end
  scroll()
end

--- Empties the chat (a resumed session replays its history into it).
function M.clear()
  edit(function(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, {})
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end)
  M.last, M.tools, M.message_id = nil, {}, nil
  M.progress(nil)
end

local function is_empty(bufnr)
  return vim.api.nvim_buf_line_count(bufnr) == 1 and vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == ""
end

--- Appends whole lines.
function M.append_lines(lines, kind)
  edit(function(bufnr)
    if is_empty(bufnr) then
      vim.api.nvim_buf_set_lines(bufnr, 0, 1, false, lines)
    else
      vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, lines)
    end
  end)
  M.last = kind
end

--- Appends streamed text to the block of `kind`, starting a new block (with `header`) when the
--- last lines are of another kind.
function M.stream(kind, header, text)
  if M.last ~= kind then
    local lines = { "" }
    if header then
      lines[#lines + 1] = header
    end
    lines[#lines + 1] = ""
    M.append_lines(lines, kind)
  end
  edit(function(bufnr)
    local last = vim.api.nvim_buf_line_count(bufnr)
    local current = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1]
    local parts = vim.split(text, "\n", { plain = true })
    parts[1] = current .. parts[1]
    vim.api.nvim_buf_set_lines(bufnr, last - 1, last, false, parts)
  end)
  M.last = kind
end

function M.note(text)
  M.append_lines({ "", "> " .. text }, "note")
end

--- A prompt as sent: a "## You" block of its own, drawn as a replayed prompt is.
function M.user(text)
  M.last = nil
  M.stream("user", "## You", text)
  M.message_id = nil
end

-- A tool call is a card: a header line (a mark and what the call did), then its body. Lines of
-- the body that start with FOLDED are folded away (the window's 'foldexpr' keys on that prefix):
-- an edit's diff, the earlier part of long output; lines with SHOWN stay in view (a command's
-- last lines, an answer, an error).
local FOLDED = "  ┆ "
local SHOWN = "  │ "
M.FOLDED, M.SHOWN = FOLDED, SHOWN
M.ns = vim.api.nvim_create_namespace("tandem-chat")

local MARK = { pending = "·", in_progress = "…", completed = "✓", failed = "✗" }

--- A JSON value that may be null (vim.NIL) as a Lua value or nil.
local function value(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

--- `path` relative to the current directory when below it.
local function relative(path)
  if type(path) ~= "string" or path == "" then
    return nil
  end
  return vim.fn.fnamemodify(path, ":~:.")
end

--- The files an edit changed, from its result's metadata: { { path, additions, deletions, diff } }.
--- Single-file tools put `diff`, `additions`, `deletions` in the metadata; several-file tools a
--- `diffs` map from path to those.
function M.edited_files(meta, raw_input)
  local files = {}
  if type(meta) ~= "table" then
    return files
  end
  local function add(path, d)
    if type(d) == "table" and (value(d.additions) or value(d.diff)) then
      files[#files + 1] = { path = path, additions = value(d.additions) or 0, deletions = value(d.deletions) or 0,
        diff = value(d.diff) }
    end
  end
  if type(meta.diffs) == "table" then
    local order = {}
    for _, f in ipairs(type(meta.files) == "table" and meta.files or {}) do
      local name = type(f) == "table" and (value(f.to) or f.path) or f
      if type(name) == "string" and meta.diffs[name] then
        order[#order + 1] = name
      end
    end
    if #order ~= vim.tbl_count(meta.diffs) then
      order = vim.tbl_keys(meta.diffs)
      table.sort(order)
    end
    for _, name in ipairs(order) do
      add(relative(name), meta.diffs[name])
    end
  elseif value(meta.additions) or value(meta.diff) then
    local path = type(meta.diff) == "string" and meta.diff:match("\n%+%+%+ b/([^\n]+)")
      or type(meta.diff) == "string" and meta.diff:match("^%+%+%+ b/([^\n]+)")
    path = path or relative(type(raw_input) == "table" and (raw_input.file_path or raw_input.path) or nil)
    add(path or "?", meta)
  end
  return files
end

--- The header line of a card.
local function card_header(entry)
  local mark = MARK[entry.status or "pending"] or "·"
  if entry.failed then
    mark = "✗"
  end
  local text
  if entry.files and #entry.files > 0 then
    text = table.concat(vim.tbl_map(function(f)
      return string.format("%s +%d −%d", f.path, f.additions, f.deletions)
    end, entry.files), ", ")
  elseif entry.command and not (entry.finished and not entry.is_command) then
    text = "$ " .. entry.command
    if entry.timed_out then
      text = text .. "  · timed out"
    elseif entry.exit then
      text = text .. "  · exit " .. tostring(entry.exit)
    elseif entry.finished and entry.is_command then
      text = text .. "  · killed"
    end
  else
    text = entry.title or "?"
  end
  return mark .. " " .. text
end
M.card_header = card_header

--- The text of a finished call (its text content; else the result's output).
local function output_text(update)
  local parts = {}
  for _, item in ipairs(update.content or {}) do
    if item.type == "content" and item.content and item.content.type == "text" then
      parts[#parts + 1] = item.content.text
    end
  end
  local raw = type(update.rawOutput) == "table" and update.rawOutput or {}
  if #parts == 0 then
    parts[1] = value(raw.error) or value(raw.output)
  end
  local text = table.concat(parts, "\n"):gsub("\n+$", "")
  if vim.trim(text) == "(no output)" then
    return ""
  end
  return text
end

--- Body lines of `text`: its last `shown` lines in view, the earlier ones folded.
local function tail_lines(text, shown)
  if text == "" then
    return {}
  end
  local all = vim.split(text, "\n", { plain = true })
  local lines = {}
  local cut = math.max(#all - shown, 0)
  for i, line in ipairs(all) do
    lines[#lines + 1] = (i <= cut and FOLDED or SHOWN) .. line
  end
  return lines
end

--- Fills in `entry` from a finished call's update and returns its body lines.
function M.card_body(entry, update)
  local raw = type(update.rawOutput) == "table" and update.rawOutput or {}
  local meta = type(raw.metadata) == "table" and raw.metadata or {}
  entry.finished = true
  local files = M.edited_files(meta, entry.raw_input)
  if #files > 0 then
    entry.files = files
    local lines = {}
    for _, f in ipairs(files) do
      for _, line in ipairs(vim.split((f.diff or ""):gsub("\n$", ""), "\n", { plain = true })) do
        if line ~= "" then
          lines[#lines + 1] = FOLDED .. line
        end
      end
    end
    if update.status == "failed" then
      vim.list_extend(lines, tail_lines(output_text(update), math.huge))
    end
    return lines
  end
  local text = output_text(update)
  if meta.exitCode ~= nil then
    entry.is_command = true
    entry.command = entry.command or (type(entry.raw_input) == "table" and entry.raw_input.command) or entry.title
    entry.exit = value(meta.exitCode)
    entry.timed_out = value(meta.timedOut) == true
    entry.failed = entry.timed_out or entry.exit == nil or entry.exit ~= 0
    return tail_lines(text, M.output_lines)
  end
  if entry.kind == "execute" then
    -- A command without its result's metadata (a resumed session replays the final content and
    -- title only, "Exit 1: pytest -q"): its tail in view all the same.
    return tail_lines(text, M.output_lines)
  end
  if update.status == "failed" or value(meta.answers) or value(meta.answer) then
    -- An error says what went wrong; an answer is what the person chose: both in view.
    return tail_lines(text, update.status == "failed" and math.max(M.output_lines, 1) or math.huge)
  end
  -- Anything else (a read, a search): all of it folded.
  return tail_lines(text, 0)
end

--- Window-local folding of the card bodies (and nothing else).
function M.set_folds(win)
  vim.api.nvim_win_call(win, function()
    vim.opt_local.foldmethod = "expr"
    vim.opt_local.foldexpr = "getline(v:lnum)=~#'^" .. FOLDED .. "'?1:0"
    vim.opt_local.foldtext = "printf('" .. FOLDED .. "▸ %d lines (zo opens, zc closes)', v:foldend - v:foldstart + 1)"
    vim.opt_local.foldlevel = 0
    vim.opt_local.foldenable = true
    vim.cmd("setlocal fillchars+=fold:\\ ")
  end)
end

local function card_row(entry)
  local pos = vim.api.nvim_buf_get_extmark_by_id(M.buffer(), M.ns, entry.mark, {})
  return pos[1]
end

local function highlight_card(bufnr, entry, row, body_count)
  local group = (entry.failed or entry.status == "failed") and "TandemCardFailed"
    or entry.status == "completed" and "TandemCardOk" or "TandemCardRunning"
  local mark_len = #vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1]:match("^[^ ]*")
  entry.hl = vim.api.nvim_buf_set_extmark(bufnr, M.ns, row, 0, { id = entry.hl, end_col = mark_len, hl_group = group })
  for i = 1, body_count or 0 do
    local line = vim.api.nvim_buf_get_lines(bufnr, row + i, row + i + 1, false)[1] or ""
    local rest = line:sub(#FOLDED + 1)
    local hl = nil
    if line:sub(1, #FOLDED) == FOLDED and not rest:match("^%+%+%+") and not rest:match("^%-%-%-") then
      hl = rest:match("^%+") and "TandemAdded" or rest:match("^%-") and "TandemRemoved" or nil
    end
    if hl then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, row + i, #FOLDED, { end_row = row + i, end_col = #line, hl_group = hl })
    end
  end
end

local function new_card(entry)
  M.append_lines({ "", card_header(entry) }, "tool")
  local bufnr = M.buffer()
  -- Left gravity: rewriting the header (or inserting the body under it) leaves the mark on it.
  entry.mark = vim.api.nvim_buf_set_extmark(bufnr, M.ns, vim.api.nvim_buf_line_count(bufnr) - 1, 0, { right_gravity = false })
end

--- Redraws the header of `entry` and, the first time it has finished, puts its body under it.
local function update_card(entry, body)
  edit(function(bufnr)
    local row = card_row(entry)
    vim.api.nvim_buf_set_lines(bufnr, row, row + 1, false, { card_header(entry) })
    if body and #body > 0 then
      vim.api.nvim_buf_set_lines(bufnr, row + 1, row + 1, false, body)
    end
    highlight_card(bufnr, entry, row, body and #body or 0)
  end)
end

local PLAN_MARK = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

--- A replayed prompt's attachment, shown as the live prompt shows them: `(attached: a, b)`
--- after its text.
local function attach(name, joins)
  if M.last == "user" and joins then
    edit(function(bufnr)
      local last = vim.api.nvim_buf_line_count(bufnr)
      local line = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1]
      vim.api.nvim_buf_set_lines(bufnr, last - 1, last, false, { line:sub(1, -2) .. ", " .. name .. ")" })
    end)
  else
    M.stream("user", "## You", "\n\n(attached: " .. name .. ")")
  end
  M.attaching = true
end

--- Renders one SessionUpdate (ACP shape).
---@param update tandem.SessionUpdate
function M.on_update(update)
  local kind = update.sessionUpdate
  -- Whether the last update was a replayed attachment (the next one joins its list).
  local attaching = M.attaching
  M.attaching = false
  if kind == "agent_message_chunk" then
    M.stream("agent", "## Tandem", update.content and update.content.text or "")
  elseif kind == "agent_thought_chunk" then
    M.stream("thought", "### Thinking", update.content and update.content.text or "")
  elseif kind == "user_message_chunk" then
    local content = update.content or {}
    -- A new message id is the next prompt: one that got no answer (a cancelled one) stays its
    -- own "## You" block, as it was live.
    local id = value(update.messageId)
    if M.last == "user" and id ~= nil and id ~= M.message_id then
      M.last = nil
      attaching = false
    end
    M.message_id = id
    local name = content.type == "resource_link" and content.name
    if content.type == "resource" and type(content.resource) == "table" and type(content.resource.uri) == "string" then
      name = content.resource.uri:match("([^/]+)/*$") or content.resource.uri
    end
    if type(name) == "string" then
      attach(name, attaching)
      return
    end
    -- An image the person attached (a resumed session's) shows as a line naming it.
    local text = content.type == "image" and string.format("\n(image, %s)\n", content.mimeType or "?") or content.text
    M.stream("user", "## You", text or "")
  elseif kind == "tool_call" or kind == "tool_call_update" then
    local entry = M.tools[update.toolCallId]
    if not entry then
      entry = { title = update.title or update.toolCallId, status = update.status or "pending" }
      M.tools[update.toolCallId] = entry
      entry.kind = update.kind
      entry.raw_input = update.rawInput
      if update.kind == "execute" and type(update.rawInput) == "table" then
        entry.command = update.rawInput.command
      end
      new_card(entry)
    end
    entry.title = update.title or entry.title
    entry.status = update.status or entry.status
    entry.kind = update.kind or entry.kind
    if type(update.rawInput) == "table" then
      entry.raw_input = update.rawInput
      if entry.kind == "execute" then
        entry.command = update.rawInput.command or entry.command
      end
    end
    local body = nil
    -- A finished call's body, once (a resumed session or a late notification repeats it).
    if (entry.status == "failed" or entry.status == "completed") and not entry.shown then
      entry.shown = true
      body = M.card_body(entry, update)
    end
    update_card(entry, body)
  elseif kind == "plan" then
    local lines = { "", "Plan:" }
    for _, entry in ipairs(update.entries or {}) do
      lines[#lines + 1] = string.format("  %s %s", PLAN_MARK[entry.status] or "[ ]", entry.content or "")
    end
    M.append_lines(lines, "plan")
  elseif kind == "current_mode_update" then
    M.note("mode: " .. tostring(update.currentModeId))
  end
end

--- The fenced code blocks of the chat, in order: { first, last (1-based rows of the fences), lang,
--- lines (the code) }. A fence is ``` or ~~~ (or longer) at the start of a line; the model's
--- answers are Markdown, tool output is indented and never matches.
function M.code_blocks()
  if not M.bufnr or not vim.api.nvim_buf_is_valid(M.bufnr) then
    return {}
  end
  local blocks, open = {}, nil
  for row, line in ipairs(vim.api.nvim_buf_get_lines(M.bufnr, 0, -1, false)) do
    local fence, info = line:match("^(```+)%s*(.-)%s*$")
    if not fence then
      fence, info = line:match("^(~~~+)%s*(.-)%s*$")
    end
    if fence and not open then
      open = { first = row, fence = fence, lang = info:match("^%S*"), lines = {} }
    elseif open and fence and info == "" and fence:sub(1, 1) == open.fence:sub(1, 1) and #fence >= #open.fence then
      blocks[#blocks + 1] = { first = open.first, last = row, lang = open.lang, lines = open.lines }
      open = nil
    elseif open then
      open.lines[#open.lines + 1] = line
    end
  end
  return blocks
end

--- The code block at `row` (1-based), else the last one above it; errors when there is none.
function M.code_block_at(row)
  local found = nil
  for _, block in ipairs(M.code_blocks()) do
    if block.first <= row then
      found = block
    end
  end
  if not found then
    error("tandem: no code block under or above the cursor", 0)
  end
  return found
end

--- `gy`: the code block at `row` into the unnamed register (and the clipboard, when there is one).
function M.yank_code(row)
  local block = M.code_block_at(row)
  vim.fn.setreg('"', block.lines, "l")
  pcall(vim.fn.setreg, "+", block.lines, "l")
  vim.api.nvim_echo({ { string.format("Tandem: copied %d line(s) of code", #block.lines) } }, false, {})
  return block.lines
end

--- The window to insert into: the previous window, else the first one with a file.
local function target_window()
  local chat_win = M.window()
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  if previous ~= 0 and previous ~= chat_win and vim.bo[vim.api.nvim_win_get_buf(previous)].buftype == "" then
    return previous
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if win ~= chat_win and vim.bo[vim.api.nvim_win_get_buf(win)].buftype == "" then
      return win
    end
  end
  return nil
end

--- `gp`: the code block at `row` into the last window's buffer, below its cursor line; the cursor
--- goes there. Undo takes it back.
function M.insert_code(row, win)
  local block = M.code_block_at(row)
  win = win or target_window()
  if not win then
    error("tandem: no window with a file to insert the code into", 0)
  end
  local bufnr = vim.api.nvim_win_get_buf(win)
  if not vim.bo[bufnr].modifiable then
    error("tandem: the buffer in that window cannot be changed", 0)
  end
  local line = vim.api.nvim_win_get_cursor(win)[1]
  vim.api.nvim_buf_set_lines(bufnr, line, line, false, block.lines)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { line + 1, 0 })
  return block.lines
end

--- The chat's text (for tests and scripts).
function M.text()
  if not M.bufnr or not vim.api.nvim_buf_is_valid(M.bufnr) then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(M.bufnr, 0, -1, false), "\n")
end

return M
