-- Checkpoints, undo, redo and compaction: :TandemCheckpoints, :TandemUndo, :TandemRedo and
-- :TandemCompact. The sidecar snapshots the workspace around every turn and every changing tool
-- call; a restore is previewed first (a dry run: the files, the ones the person changed since,
-- the diff), asked for, then reviewed inline like any edit. The plans, diffs and what gets
-- written come from the sidecar; this file shows them and passes on the person's choice.
local M = {
  -- The plan window's buffer (`tandem://restore`), reused.
  plan_bufnr = nil,
}

local KINDS = {
  beforeTurn = "start of turn",
  beforeTool = "before",
  afterTool = "after",
  afterTurn = "end of turn",
  beforeRestore = "before a restore",
  afterRestore = "after a restore",
}

local function tandem()
  return require("tandem")
end

local function notify_error(err)
  require("tandem.notice").notify("tandem: " .. tostring(err), vim.log.levels.ERROR)
end

local function echo(text)
  vim.api.nvim_echo({ { "Tandem: " .. text } }, false, {})
end

--- An RFC 3339 UTC time ("2025-05-04T10:12:03Z") as the local "HH:MM:SS" (the date too when
--- it is not today).
function M.local_time(rfc3339)
  local y, mo, d, h, mi, s = tostring(rfc3339):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return tostring(rfc3339)
  end
  local utc = { year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(s) }
  -- os.time reads the table as local time: add the local offset from UTC.
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date("!*t", now)))
  local t = os.time(utc) + offset
  if os.date("%Y-%m-%d", t) == os.date("%Y-%m-%d", now) then
    return os.date("%H:%M:%S", t)
  end
  return os.date("%Y-%m-%d %H:%M:%S", t)
end

--- The files the stretch starting at checkpoint `i` changed: its own and the following
--- checkpoints' until the workspace went back to the person (the end of a turn or a restore).
--- For a turn's start, what the turn changed; for an end of turn, what the person changed next.
function M.span_files(list, i)
  local seen, files = {}, {}
  for j = i, #list do
    local c = list[j]
    if j > i and (c.kind == "afterTurn" or c.kind == "afterRestore") then
      break
    end
    for _, f in ipairs(c.files or {}) do
      if not seen[f] then
        seen[f] = true
        files[#files + 1] = f
      end
    end
    if c.kind == "afterTurn" or c.kind == "afterRestore" then
      break
    end
  end
  return files
end

--- One line per checkpoint: id, turn, time, kind, the files its stretch changed.
function M.describe(list, i)
  local c = list[i]
  local what = KINDS[c.kind] or tostring(c.kind)
  if c.kind == "beforeTool" or c.kind == "afterTool" then
    what = string.format("%s %s %s", KINDS[c.kind], c.tool or "tool", c.toolCallId or "")
  end
  local files = M.span_files(list, i)
  local changed = #files > 0 and ("changed: " .. table.concat(files, ", ")) or "no changes"
  return string.format("#%d  turn %d  %s  %s  (%s)", c.id, c.turn, M.local_time(c.time), what, changed)
end

--- The plan's lines: what would be restored, the person's own changes (left alone unless they
--- choose them), what cannot be, then the diff. `plan` is a dry run with includeConflicts.
function M.plan_lines(title, plan)
  local conflicts = {}
  for _, f in ipairs(plan.conflicts or {}) do
    conflicts[f] = true
  end
  local plain = vim.tbl_filter(function(f)
    return not conflicts[f]
  end, plan.restored or {})
  local lines = { "# " .. title, "" }
  if #plain > 0 then
    lines[#lines + 1] = string.format("Restores (%d): %s", #plain, table.concat(plain, ", "))
  else
    lines[#lines + 1] = "Restores: nothing of the agent's"
  end
  if #(plan.conflicts or {}) > 0 then
    lines[#lines + 1] = string.format("CONFLICT, changed by you since (%d), kept unless you include them: %s",
      #plan.conflicts, table.concat(plan.conflicts, ", "))
  end
  if #(plan.skipped or {}) > 0 then
    lines[#lines + 1] = "Not restored (too large, not text, or now a symbolic link): " .. table.concat(plan.skipped, ", ")
  end
  if #(plan.notCovered or {}) > 0 then
    lines[#lines + 1] = "Not covered by undo (changed by the agent, left out of checkpoints): "
      .. table.concat(plan.notCovered, ", ")
  end
  lines[#lines + 1] = ""
  for _, line in ipairs(vim.split(plan.diff or "", "\n", { plain = true })) do
    lines[#lines + 1] = line
  end
  return lines, plain
end

--- The choices after a plan: restore the agent's files, also the person's, or nothing.
function M.choices(plain, conflicts)
  local items = {}
  if #plain > 0 then
    items[#items + 1] = { label = string.format("Restore %d file(s), keep your changes", #plain), include = false }
  end
  if #conflicts > 0 then
    items[#items + 1] = {
      label = string.format("Restore %d file(s), your changes to %s too", #plain + #conflicts, table.concat(conflicts, ", ")),
      include = true,
    }
  end
  items[#items + 1] = { label = "Cancel" }
  return items
end

local function show_plan(lines)
  local bufnr = M.plan_bufnr
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, "tandem://restore")
    vim.bo[bufnr].buftype = "nofile"
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
    vim.bo[bufnr].filetype = "diff"
    M.plan_bufnr = bufnr
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      return
    end
  end
  local previous = vim.api.nvim_get_current_win()
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_height(0, math.min(#lines + 1, math.floor(vim.o.lines / 2)))
  vim.api.nvim_set_current_win(previous)
end

--- Closes the plan window (before the review opens its files).
function M.close_plan()
  local bufnr = M.plan_bufnr
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == bufnr and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
end

--- The plan buffer's text (for tests and scripts).
function M.plan_text()
  if not M.plan_bufnr or not vim.api.nvim_buf_is_valid(M.plan_bufnr) then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(M.plan_bufnr, 0, -1, false), "\n")
end

--- The session, when no turn is running; else nil after saying why.
local function idle_session()
  local status = tandem().state()
  if not status.session_id then
    notify_error("no session yet (ask something first, or resume one with :TandemSessions)")
    return nil
  end
  if status.busy then
    notify_error("a turn is running (:TandemCancel first)")
    return nil
  end
  return status.session_id
end

--- Restores `target` (checkpointId, turn or toolCallId) after showing the plan and asking.
--- opts.on_done(err, result) when it ended (result nil when nothing was restored).
function M.restore(target, title, opts)
  opts = opts or {}
  local function done(err, result)
    if opts.on_done then
      opts.on_done(err, result)
    end
  end
  local session = idle_session()
  if not session then
    return done("no session")
  end
  local params = vim.tbl_extend("force", { sessionId = session, dryRun = true, includeConflicts = true }, target)
  tandem().request("tandem/session/restore", params, function(err, plan)
    if err then
      notify_error(err)
      return done(err)
    end
    if #(plan.restored or {}) == 0 then
      echo(title .. ": nothing to restore, the files are as they were then")
      return done(nil, nil)
    end
    local lines, plain = M.plan_lines(title, plan)
    show_plan(lines)
    vim.ui.select(M.choices(plain, plan.conflicts or {}), {
      prompt = title .. "?",
      kind = "tandem.restore",
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      M.close_plan()
      if not choice or choice.include == nil then
        echo(title .. ": cancelled")
        return done(nil, nil)
      end
      local real = vim.tbl_extend("force", { sessionId = session, includeConflicts = choice.include }, target)
      tandem().request("tandem/session/restore", real, function(restore_err, result)
        tandem().reload_changed()
        if restore_err then
          notify_error(restore_err)
          return done(restore_err)
        end
        local note = title .. ": " .. (result.message or "")
        if #(result.conflicts or {}) > 0 and not choice.include then
          note = note .. " Kept your changes to " .. table.concat(result.conflicts, ", ") .. "."
        end
        require("tandem.chat").note(note)
        echo(note)
        done(nil, result)
      end)
    end)
  end)
end

local function with_checkpoints(callback)
  local session = idle_session()
  if not session then
    return
  end
  tandem().request("tandem/session/checkpoints", { sessionId = session }, function(err, result)
    if err then
      notify_error(err)
      return
    end
    callback(result.checkpoints or {})
  end)
end

--- :TandemCheckpoints: the session's checkpoints, newest first; the chosen one is restored
--- (plan, question, review).
function M.pick(opts)
  with_checkpoints(function(list)
    if #list == 0 then
      echo("this session has no checkpoints yet")
      return
    end
    local items = {}
    for i = #list, 1, -1 do
      items[#items + 1] = { index = i, checkpoint = list[i] }
    end
    vim.ui.select(items, {
      prompt = "Tandem checkpoints (restore to one)",
      kind = "tandem.checkpoints",
      format_item = function(item)
        return M.describe(list, item.index)
      end,
    }, function(choice)
      if choice then
        local c = choice.checkpoint
        M.restore({ checkpointId = c.id }, string.format("Restore to checkpoint #%d (turn %d, %s)", c.id, c.turn,
          KINDS[c.kind] or c.kind), opts)
      end
    end)
  end)
end

--- :TandemUndo: back to before the session's last turn.
function M.undo(opts)
  with_checkpoints(function(list)
    local turn = nil
    for _, c in ipairs(list) do
      if c.kind == "beforeTurn" then
        turn = math.max(turn or 0, c.turn)
      end
    end
    if not turn then
      echo("this session has no turn to undo yet")
      return
    end
    M.restore({ turn = turn }, string.format("Undo turn %d", turn), opts)
  end)
end

--- :TandemRedo: back to the state the last restore replaced (its `beforeRestore` checkpoint,
--- the `redoCheckpointId` it answered with).
function M.redo(opts)
  with_checkpoints(function(list)
    local ended = false
    local target = nil
    for i = #list, 1, -1 do
      local c = list[i]
      if c.kind == "afterRestore" then
        ended = true
      elseif ended and c.kind == "beforeRestore" then
        target = c
        break
      end
    end
    if not target then
      echo("nothing to redo: no restore yet in this session")
      return
    end
    M.restore({ checkpointId = target.id }, string.format("Redo (back to checkpoint #%d)", target.id), opts)
  end)
end

--- The line :TandemCompact shows.
function M.compact_message(result)
  return string.format("compacted the conversation: %d → %d tokens%s", result.tokensBefore or 0,
    result.tokensAfter or 0, result.summarized and " (older turns summarised)" or "")
end

--- :TandemCompact: the sidecar shortens what the model sees now; the counts before and after.
function M.compact(opts)
  opts = opts or {}
  local session = idle_session()
  if not session then
    return
  end
  echo("compacting the conversation…")
  tandem().request("tandem/session/compact", { sessionId = session }, function(err, result)
    if err then
      notify_error(err)
    else
      local text = M.compact_message(result)
      require("tandem.chat").note(text)
      echo(text)
    end
    if opts.on_done then
      opts.on_done(err, result)
    end
  end)
end

return M
