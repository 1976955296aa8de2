-- The chat buffer (filetype `tandem-chat`): the session's transcript as Markdown, streamed as
-- `tandem/session/update` notifications arrive; tool calls as one line each, updated in place,
-- with their output (the tail of it) under them once they finish; the plan as a checklist.
local M = {
  bufnr = nil,
  -- What the last lines are: "user", "agent", "thought", "tool", "note", or nil.
  last = nil,
  -- toolCallId -> { row, title, kind, status, shown }.
  tools = {},
  -- The most lines of a finished call's output shown; a test run's failures are at its end, so
  -- longer output keeps its tail. 0 shows none. Set from setup's `chat.output_lines`.
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

local function edit(fn)
  local bufnr = M.buffer()
  vim.bo[bufnr].modifiable = true
  local ok, err = pcall(fn, bufnr)
  vim.bo[bufnr].modifiable = false
  if not ok then
    error(err)
  end
  scroll()
end

--- Empties the chat (a resumed session replays its history into it).
function M.clear()
  edit(function(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, {})
  end)
  M.last, M.tools = nil, {}
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

function M.user(text)
  M.append_lines({ "", "## You", "" }, "user")
  M.append_lines(vim.split(text, "\n", { plain = true }), "user")
end

local function tool_line(entry)
  return string.format("* [%s] %s (%s)", entry.kind or "tool", entry.title or "?", entry.status or "pending")
end

local function content_text(content)
  return require("tandem.content").text(content, "diff: ")
end

--- `text` indented under its call, cut to its last `max` lines.
local function output_lines(text, max)
  local all = vim.split((text:gsub("\n+$", "")), "\n", { plain = true })
  local lines = {}
  local first = 1
  if #all > max then
    first = #all - max + 1
    lines[1] = string.format("    … %d earlier lines", first - 1)
  end
  if max == 0 then
    return lines
  end
  for i = first, #all do
    lines[#lines + 1] = "    " .. all[i]
  end
  return lines
end

local PLAN_MARK = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

--- Renders one SessionUpdate (ACP shape).
---@param update tandem.SessionUpdate
function M.on_update(update)
  local kind = update.sessionUpdate
  if kind == "agent_message_chunk" then
    M.stream("agent", "## Tandem", update.content and update.content.text or "")
  elseif kind == "agent_thought_chunk" then
    M.stream("thought", "### Thinking", update.content and update.content.text or "")
  elseif kind == "user_message_chunk" then
    M.stream("user", "## You", update.content and update.content.text or "")
  elseif kind == "tool_call" then
    local entry = { title = update.title, kind = update.kind, status = update.status }
    M.append_lines({ "", tool_line(entry) }, "tool")
    entry.row = vim.api.nvim_buf_line_count(M.buffer()) - 1
    M.tools[update.toolCallId] = entry
  elseif kind == "tool_call_update" then
    local entry = M.tools[update.toolCallId]
    if not entry then
      entry = { title = update.title or update.toolCallId, kind = update.kind }
      M.append_lines({ "", tool_line(entry) }, "tool")
      entry.row = vim.api.nvim_buf_line_count(M.buffer()) - 1
      M.tools[update.toolCallId] = entry
    end
    entry.title = update.title or entry.title
    entry.status = update.status or entry.status
    edit(function(bufnr)
      vim.api.nvim_buf_set_lines(bufnr, entry.row, entry.row + 1, false, { tool_line(entry) })
    end)
    -- A finished call's output, once: a failure in full (it says what went wrong), a success's
    -- tail (what a test run or a build printed last).
    if (entry.status == "failed" or entry.status == "completed") and not entry.shown then
      local text = content_text(update.content)
      if text ~= "" then
        entry.shown = true
        M.append_lines(output_lines(text, entry.status == "failed" and math.huge or M.output_lines), "tool")
      end
    end
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
