-- Inline review of a proposed edit (`tandem/session/requestPermission` with diff content):
-- each hunk drawn in its file with extmarks (removed lines highlighted, added lines as virtual
-- lines), one key per decision, the reply (with `acceptedHunks`) sent when every hunk is
-- decided. Closing a reviewed buffer rejects what is still pending. The request's diagnostics
-- preview shows as `vim.diagnostic` items in the same namespace, a headline above each file's
-- first hunk, a count on each hunk's label and a note on each added line with a problem; all of
-- it goes when the review ends.
local hunks_mod = require("tandem.hunks")
local preview_mod = require("tandem.preview")

local M = {
  -- The open review, or nil: { title, files = { { path, bufnr, hunks } }, hunks (all, in order),
  --   respond, keymaps, autocmds, saved = { [bufnr] = bufhidden } }.
  active = nil,
  -- Requests that arrived while a review was open: { params, respond, keymaps }.
  waiting = {},
  ns = vim.api.nvim_create_namespace("tandem-review"),
  -- Set while the review itself switches buffers, so that hiding one is not a close.
  navigating = false,
}

local KEY_NAMES = {
  accept = "accept",
  reject = "reject",
  accept_all = "accept all",
  reject_all = "reject all",
  next = "next",
  prev = "previous",
}

--- The diff items of a permission request that carry hunks; nil when there are none.
function M.diffs_of(params)
  local files = {}
  local tool_call = params and params.toolCall or {}
  for _, item in ipairs(tool_call.content or {}) do
    if item.type == "diff" and type(item.hunks) == "table" and #item.hunks > 0 then
      files[#files + 1] = item
    end
  end
  return #files > 0 and files or nil
end

--- The reply for the decided hunks (a list of { id, state }).
function M.outcome(hunks)
  local accepted = {}
  for _, h in ipairs(hunks) do
    if h.state == "accepted" then
      accepted[#accepted + 1] = h.id
    end
  end
  if #accepted == 0 then
    return { outcome = { outcome = "selected", optionId = "reject_once" } }
  end
  return { outcome = { outcome = "selected", optionId = "allow_once", acceptedHunks = accepted } }
end

local function counts(review)
  local c = { pending = 0, accepted = 0, rejected = 0 }
  for _, h in ipairs(review.hunks) do
    c[h.state] = c[h.state] + 1
  end
  return c
end

-- The review draws the preview's messages itself (on the added lines, which vim.diagnostic cannot
-- reach), and the sign column is the review's (`-`): the items show as underlines, and are there
-- for `vim.diagnostic.get`, the quickfix list and the like. `vim.diagnostic.config({ ... },
-- require("tandem.review").ns)` changes that.
pcall(vim.diagnostic.config, { virtual_text = false, signs = false, severity_sort = true }, M.ns)

local function label(review, h)
  local k = review.keymaps
  local problems = preview_mod.counts(preview_mod.in_hunk(h.file.preview, h.id))
  local suffix = problems ~= "" and ("| " .. problems .. " ") or ""
  if h.state == "pending" then
    return string.format(" %s: %s accept, %s reject %s", h.id, k.accept or "-", k.reject or "-", suffix)
  end
  return string.format(" %s: %s %s", h.id, h.state, suffix)
end

local function text_offset(bufnr)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      local info = vim.fn.getwininfo(win)[1]
      return info and info.textoff or 0
    end
  end
  return 0
end

--- `text` cut into lines of at most `width` display cells, at spaces where it can (virtual lines
--- do not wrap: a long headline would be cut at the window's edge).
function M.wrap(text, width)
  width = math.max(width, 10)
  local lines = {}
  local line = ""
  for word in text:gmatch("%S+") do
    while vim.fn.strdisplaywidth(word) > width do
      if line ~= "" then
        lines[#lines + 1] = line
        line = ""
      end
      local cut = vim.fn.strcharpart(word, 0, width)
      lines[#lines + 1] = cut
      word = vim.fn.strcharpart(word, vim.fn.strchars(cut))
    end
    local joined = line == "" and word or (line .. " " .. word)
    if vim.fn.strdisplaywidth(joined) > width and line ~= "" then
      lines[#lines + 1] = line
      line = word
    else
      line = joined
    end
  end
  if line ~= "" or #lines == 0 then
    lines[#lines + 1] = line
  end
  return lines
end

--- The width of a window showing `bufnr` (else the screen's).
local function window_width(bufnr)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return vim.api.nvim_win_get_width(win)
    end
  end
  return vim.o.columns
end

local function render(review, file)
  local bufnr = file.bufnr
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local last_row = vim.api.nvim_buf_line_count(bufnr) - 1
  local function row(line)
    return math.min(math.max(line - 1, 0), last_row)
  end
  -- Removed lines get a sign, so the text area starts after the sign column.
  local offset = math.max(text_offset(bufnr), 2)
  local prefix = "+" .. string.rep(" ", offset - 1)
  if review.headline and file.hunks[1] then
    -- The preview's headline (and this file's state when it is not known) above the first hunk.
    local width = window_width(bufnr) - 1
    local virt = {}
    for _, line in ipairs(M.wrap(review.headline, width)) do
      virt[#virt + 1] = { { line, preview_mod.highlight(review.preview) } }
    end
    local own = preview_mod.file_line(file.preview)
    for _, line in ipairs(own and M.wrap(own, width) or {}) do
      virt[#virt + 1] = { { line, "DiagnosticWarn" } }
    end
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(file.hunks[1].parsed.first), 0, {
      virt_lines = virt,
      virt_lines_above = true,
      virt_lines_leftcol = true,
    })
  end
  local notes = file.notes or {}
  for key, list in pairs(notes) do
    local line = tonumber(key:match("^old:(%d+)$"))
    if line then
      local chunks = {}
      for _, note in ipairs(list) do
        chunks[#chunks + 1] = { note.text, note.hl }
      end
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(line), 0, { virt_text = chunks, virt_text_pos = "eol" })
    end
  end
  for index, h in ipairs(file.hunks) do
    local p = h.parsed
    -- The hunk's label goes on a line it changes: its first removed line, else its first added
    -- (virtual) line; never on a context line.
    local tag = { label(review, h), "TandemHunk" }
    if #p.removed > 0 then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(p.removed[1]), 0, { virt_text = { tag }, virt_text_pos = "eol" })
      tag = nil
    end
    if h.state == "rejected" then
      -- A rejected hunk's added lines stay in view, dimmed, so its label has its own lines.
      for _, block in ipairs(p.added) do
        local virt = {}
        for _, text in ipairs(block.lines) do
          local chunks = { { prefix .. text, "TandemRejected" } }
          if tag then
            chunks[#chunks + 1] = tag
            tag = nil
          end
          virt[#virt + 1] = chunks
        end
        vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(math.max(block.after, 1)), 0, {
          virt_lines = virt,
          virt_lines_above = block.after == 0,
          virt_lines_leftcol = true,
        })
      end
    else
      for _, line in ipairs(p.removed) do
        -- The text to the end of the line (hl_group: 0.7 reads back no line_hl_group), and
        -- apart from it (a sign on a range is drawn on every line of it in 0.10+) the sign
        -- and the whole width.
        vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(line), 0, {
          end_row = row(line) + 1,
          end_col = 0,
          hl_group = "TandemRemoved",
          hl_eol = true,
        })
        vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(line), 0, {
          line_hl_group = "TandemRemoved",
          sign_text = "-",
          sign_hl_group = "TandemRemoved",
        })
      end
      for _, block in ipairs(p.added) do
        local virt = {}
        for nth, text in ipairs(block.lines) do
          local chunks = { { prefix .. text, "TandemAdded" } }
          if tag then
            chunks[#chunks + 1] = tag
            tag = nil
          end
          for _, note in ipairs(notes[string.format("%d:%d:%d", index, block.after, nth)] or {}) do
            chunks[#chunks + 1] = { note.text, note.hl }
          end
          virt[#virt + 1] = chunks
        end
        vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(math.max(block.after, 1)), 0, {
          virt_lines = virt,
          virt_lines_above = block.after == 0,
          virt_lines_leftcol = true,
        })
      end
    end
    if tag then
      -- A hunk that neither removes nor adds a line (cannot come from a diff): its first line.
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, row(p.first), 0, { virt_text = { tag }, virt_text_pos = "eol" })
    end
  end
end

local function render_all(review)
  for _, file in ipairs(review.files) do
    render(review, file)
  end
end

--- The command-line summary of the review.
function M.summary(review)
  review = review or M.active
  if not review then
    return "no review"
  end
  local c = counts(review)
  local k = review.keymaps
  local keys = {}
  for _, name in ipairs({ "accept", "reject", "accept_all", "reject_all", "next", "prev" }) do
    if k[name] then
      keys[#keys + 1] = k[name] .. " " .. KEY_NAMES[name]
    end
  end
  return string.format(
    "Tandem: %s: %d hunk(s): %d pending, %d accepted, %d rejected | %s",
    review.title,
    #review.hunks,
    c.pending,
    c.accepted,
    c.rejected,
    table.concat(keys, ", ")
  )
end

local function echo(text)
  local width = math.max(vim.o.columns - 12, 20)
  if #text > width then
    text = text:sub(1, width - 3) .. "..."
  end
  vim.api.nvim_echo({ { text } }, false, {})
  M.echoed = true
end

--- The turn ended: a review's summary left in the command line goes ("2 hunk(s): 1 accepted…"
--- is stale once the turn is over; the chat keeps the review's outcome).
function M.clear_echo()
  if M.echoed and not M.active then
    M.echoed = false
    vim.api.nvim_echo({ { "" } }, false, {})
  end
end

--- A window for the reviewed file: the current one unless it shows the chat.
local function target_window()
  local chat = require("tandem.chat")
  local current = vim.api.nvim_get_current_win()
  if vim.api.nvim_win_get_buf(current) ~= chat.bufnr then
    return current
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) ~= chat.bufnr and vim.api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
  vim.cmd("aboveleft split")
  return vim.api.nvim_get_current_win()
end

local function show(review, h)
  local win = target_window()
  M.navigating = true
  local ok, err = pcall(function()
    vim.api.nvim_set_current_win(win)
    local shown = vim.api.nvim_win_get_buf(win)
    if shown ~= h.file.bufnr then
      -- A modified buffer that cannot be hidden keeps its window: the review gets a split.
      if vim.bo[shown].modified and not vim.o.hidden and vim.bo[shown].bufhidden ~= "hide" then
        vim.cmd("aboveleft split")
        win = vim.api.nvim_get_current_win()
      end
      vim.api.nvim_win_set_buf(win, h.file.bufnr)
    end
    local line = math.min(h.parsed.first, vim.api.nvim_buf_line_count(h.file.bufnr))
    vim.api.nvim_win_set_cursor(win, { line, 0 })
  end)
  M.navigating = false
  if not ok then
    error(err)
  end
  render(review, h.file)
  if h.parsed.first <= 1 then
    -- Virtual lines above the first line (the preview's headline, lines added at the top) show
    -- only as filler lines above it: scroll them into view.
    local above = 0
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(h.file.bufnr, M.ns, { 0, 0 }, { 0, -1 }, { details = true })) do
      if m[4].virt_lines_above and m[4].virt_lines then
        above = above + #m[4].virt_lines
      end
    end
    if above > 0 then
      pcall(vim.api.nvim_win_call, win, function()
        vim.fn.winrestview({ topline = 1, topfill = above })
      end)
    end
  end
end

--- The hunk under the cursor (in a reviewed buffer), else the first pending one.
local function current(review)
  local bufnr = vim.api.nvim_get_current_buf()
  for _, file in ipairs(review.files) do
    if file.bufnr == bufnr then
      local parsed = {}
      for i, h in ipairs(file.hunks) do
        parsed[i] = h.parsed
      end
      local index = hunks_mod.at_line(parsed, vim.api.nvim_win_get_cursor(0)[1])
      if index then
        return file.hunks[index]
      end
    end
  end
  for _, h in ipairs(review.hunks) do
    if h.state == "pending" then
      return h
    end
  end
  return review.hunks[1]
end

local function find(review, id)
  for _, h in ipairs(review.hunks) do
    if h.id == id then
      return h
    end
  end
  error(string.format("tandem: no hunk `%s` in the review (hunks: %s)", tostring(id), table.concat(vim.tbl_map(function(h)
    return h.id
  end, review.hunks), ", ")), 0)
end

--- The buffer's own normal-mode mapping of `key` (not a global one), or nil.
local function buffer_mapping(bufnr, key)
  local ok, mapping = pcall(vim.api.nvim_buf_call, bufnr, function()
    return vim.fn.maparg(key, "n", false, true)
  end)
  if ok and type(mapping) == "table" and mapping.buffer == 1 then
    return mapping
  end
  return nil
end

--- Puts back a buffer-local mapping the review's keys shadowed.
local function restore_mapping(bufnr, m)
  local opts = {
    noremap = m.noremap == 1,
    silent = m.silent == 1,
    expr = m.expr == 1,
    nowait = m.nowait == 1,
    script = m.script == 1,
    callback = m.callback,
    desc = m.desc,
  }
  local ok, err = pcall(vim.api.nvim_buf_set_keymap, bufnr, "n", m.lhs, m.rhs or "", opts)
  if not ok then
    vim.notify("tandem: could not restore your mapping of " .. tostring(m.lhs) .. ": " .. tostring(err), vim.log.levels.WARN)
  end
end

local function cleanup(review)
  for _, id in ipairs(review.autocmds) do
    pcall(vim.api.nvim_del_autocmd, id)
  end
  for _, bufnr in ipairs(review.diagnosed or {}) do
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.diagnostic.reset(M.ns, bufnr)
    end
  end
  for _, file in ipairs(review.files) do
    if vim.api.nvim_buf_is_valid(file.bufnr) then
      vim.api.nvim_buf_clear_namespace(file.bufnr, M.ns, 0, -1)
      for _, key in pairs(review.keymaps) do
        if key then
          pcall(vim.keymap.del, "n", key, { buffer = file.bufnr })
        end
      end
      for _, mapping in pairs((review.shadowed or {})[file.bufnr] or {}) do
        restore_mapping(file.bufnr, mapping)
      end
      if review.saved[file.bufnr] ~= nil then
        vim.bo[file.bufnr].bufhidden = review.saved[file.bufnr]
      end
    end
  end
end

--- Ends the review: `how` = "decided" (reply from the hunk states) or "cancelled".
function M.finish(how)
  local review = M.active
  if not review then
    return
  end
  M.active = nil
  cleanup(review)
  for _, file in ipairs(review.files) do
    require("tandem.client").review_done(file.bufnr)
  end
  local reply
  if how == "cancelled" then
    reply = { outcome = { outcome = "cancelled" } }
  else
    for _, h in ipairs(review.hunks) do
      if h.state == "pending" then
        h.state = "rejected"
      end
    end
    reply = M.outcome(review.hunks)
  end
  local c = counts(review)
  echo(string.format("Tandem: %s: %d accepted, %d rejected%s", review.title, c.accepted, c.rejected, how == "cancelled" and " (cancelled)" or ""))
  require("tandem.chat").note(string.format("review of %s: %d accepted, %d rejected", review.title, c.accepted, c.rejected))
  review.respond(reply)
  local next_one = table.remove(M.waiting, 1)
  if next_one then
    M.start(next_one.params, next_one.respond, next_one.keymaps)
  end
end

local function after_decision(review, h)
  local c = counts(review)
  if c.pending == 0 then
    M.finish("decided")
    return
  end
  -- Move on to the next pending hunk.
  local start = 1
  for i, other in ipairs(review.hunks) do
    if other == h then
      start = i
    end
  end
  for offset = 1, #review.hunks do
    local candidate = review.hunks[(start + offset - 1) % #review.hunks + 1]
    if candidate.state == "pending" then
      show(review, candidate)
      break
    end
  end
  render_all(review)
  echo(M.summary(review))
end

--- Sets the hunk `id` (default: under the cursor) to `state`.
--- The open review, or an error a person can read (for the keys and the Lua API).
local function open_review()
  if not M.active then
    error("tandem: no review is open", 0)
  end
  return M.active
end

function M.decide(state, id)
  local review = open_review()
  local h = id and find(review, id) or current(review)
  h.state = state
  after_decision(review, h)
end

function M.decide_all(state)
  local review = open_review()
  for _, h in ipairs(review.hunks) do
    if h.state == "pending" then
      h.state = state
    end
  end
  M.finish("decided")
end

--- Moves the cursor to the next (`step` 1) or previous (-1) hunk.
function M.jump(step)
  local review = open_review()
  local h = current(review)
  local index = 1
  for i, other in ipairs(review.hunks) do
    if other == h then
      index = i
    end
  end
  local target = review.hunks[(index - 1 + step) % #review.hunks + 1]
  show(review, target)
  echo(M.summary(review))
end

local function set_keymaps(review, bufnr)
  local k = review.keymaps
  -- The buffer's own mappings of these keys come back when the review ends.
  review.shadowed = review.shadowed or {}
  if not review.shadowed[bufnr] then
    review.shadowed[bufnr] = {}
    for _, key in pairs(k) do
      local mapping = key and buffer_mapping(bufnr, key)
      if mapping then
        table.insert(review.shadowed[bufnr], mapping)
      end
    end
  end
  local actions = {
    accept = function()
      M.decide("accepted")
    end,
    reject = function()
      M.decide("rejected")
    end,
    accept_all = function()
      M.decide_all("accepted")
    end,
    reject_all = function()
      M.decide_all("rejected")
    end,
    next = function()
      M.jump(1)
    end,
    prev = function()
      M.jump(-1)
    end,
  }
  for name, action in pairs(actions) do
    if k[name] then
      vim.keymap.set("n", k[name], function()
        local ok, err = pcall(action)
        if not ok then
          vim.notify(tostring(err), vim.log.levels.ERROR)
        end
      end, { buffer = bufnr, nowait = true, desc = "Tandem: " .. KEY_NAMES[name] .. " hunk" })
    end
  end
end

--- A loaded buffer of `path`, or nil.
local function loaded_buffer(path)
  local real = vim.loop.fs_realpath(path) or path
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      local name = vim.api.nvim_buf_get_name(bufnr)
      if name == path or (name ~= "" and vim.loop.fs_realpath(name) == real) then
        return bufnr
      end
    end
  end
  return nil
end

--- The preview's introduced problems as `vim.diagnostic` items: on the reviewed buffers, and on
--- loaded buffers of other files the change would break.
local function show_diagnostics(review)
  review.diagnosed = {}
  if not review.preview then
    return
  end
  local reviewed = {}
  for _, file in ipairs(review.files) do
    reviewed[file.bufnr] = true
    if file.preview then
      local lines = vim.api.nvim_buf_get_lines(file.bufnr, 0, -1, false)
      local diagnostics, notes = preview_mod.place(file.preview, file.raw_hunks, lines)
      file.notes = notes
      vim.diagnostic.set(M.ns, file.bufnr, diagnostics)
      table.insert(review.diagnosed, file.bufnr)
    end
  end
  for _, entry in ipairs(type(review.preview.files) == "table" and review.preview.files or {}) do
    local bufnr = type(entry.introduced) == "table" and #entry.introduced > 0 and loaded_buffer(entry.path)
    if bufnr and not reviewed[bufnr] then
      local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
      vim.diagnostic.set(M.ns, bufnr, preview_mod.place_unchanged(entry, lines, review.title))
      table.insert(review.diagnosed, bufnr)
    end
  end
end

--- Opens the review for a permission request with diffs. `respond(result)` gets the reply.
--- Returns false when the request has no hunks to review.
function M.start(params, respond, keymaps)
  local diffs = M.diffs_of(params)
  if not diffs then
    return false
  end
  if M.active then
    M.waiting[#M.waiting + 1] = { params = params, respond = respond, keymaps = keymaps }
    return true
  end
  local review = {
    title = params.toolCall.title or "edit",
    session_id = params.sessionId,
    files = {},
    hunks = {},
    respond = respond,
    keymaps = keymaps,
    autocmds = {},
    saved = {},
    preview = preview_mod.of(params),
  }
  review.headline = preview_mod.headline(review.preview)
  for _, diff in ipairs(diffs) do
    local bufnr = vim.fn.bufadd(diff.path)
    local held = require("tandem.client").hold(bufnr)
    vim.fn.bufload(bufnr)
    vim.bo[bufnr].buflisted = true
    local file = {
      path = diff.path,
      bufnr = bufnr,
      hunks = {},
      held = held,
      raw_hunks = diff.hunks,
      preview = preview_mod.file_of(review.preview, diff.path),
    }
    for _, hunk in ipairs(diff.hunks) do
      local h = {
        id = hunk.id,
        state = "pending",
        file = file,
        oldStart = hunk.oldStart,
        oldLines = hunk.oldLines,
        newStart = hunk.newStart,
        newLines = hunk.newLines,
        patch = hunk.patch,
        parsed = hunks_mod.parse(hunk),
      }
      file.hunks[#file.hunks + 1] = h
      review.hunks[#review.hunks + 1] = h
    end
    review.files[#review.files + 1] = file
    -- Hidden, not unloaded, while under review: the extmarks stay.
    review.saved[bufnr] = vim.bo[bufnr].bufhidden
    vim.bo[bufnr].bufhidden = "hide"
    set_keymaps(review, bufnr)
    for _, event in ipairs({ "BufHidden", "BufUnload", "BufWipeout" }) do
      review.autocmds[#review.autocmds + 1] = vim.api.nvim_create_autocmd(event, {
        buffer = bufnr,
        callback = function()
          if M.active == review and not M.navigating then
            M.finish("decided")
          end
        end,
      })
    end
    review.autocmds[#review.autocmds + 1] = vim.api.nvim_create_autocmd("BufWinEnter", {
      buffer = bufnr,
      callback = function()
        if M.active == review then
          render(review, file)
        end
      end,
    })
  end
  M.active = review
  show_diagnostics(review)
  if review.headline then
    require("tandem.chat").note(string.format("%s: %s", review.title, review.headline))
  end
  render_all(review)
  show(review, review.hunks[1])
  echo(M.summary(review))
  return true
end

--- The open review for scripts and tests: { title, file, files, hunks = { { id, state, file } } }.
function M.snapshot()
  local review = M.active
  if not review then
    return nil
  end
  local hunks = {}
  for _, h in ipairs(review.hunks) do
    hunks[#hunks + 1] = {
      id = h.id,
      state = h.state,
      file = h.file.path,
      oldStart = h.oldStart,
      oldLines = h.oldLines,
      newStart = h.newStart,
      newLines = h.newLines,
      patch = h.patch,
    }
  end
  local files = {}
  for _, file in ipairs(review.files) do
    files[#files + 1] = file.path
  end
  return {
    title = review.title,
    file = files[1],
    files = files,
    hunks = hunks,
    -- The preview's headline ("Diagnostics preview: …") and status, when the request had one.
    diagnostics = review.headline,
    diagnostics_status = review.preview and review.preview.status or nil,
  }
end

return M
