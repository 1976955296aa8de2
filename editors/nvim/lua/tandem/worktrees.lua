-- Agents' git worktrees (`tandem run --worktree NAME`): :TandemWorktree lists them with their
-- branch, sessions and changed files, and reviews the one chosen; :TandemWorktree NAME reviews
-- that one. A review brings the worktree's change (against its base) into the workspace through
-- the inline review, hunk by hunk, like any edit. The sidecar computes the change, carries it over
-- onto the files the person changed since the base (or leaves them, named) and writes only what is
-- accepted; this file lists, asks and reports.
local M = {
  -- The names of the last list, for completion.
  names = {},
  -- The last review's result (WorktreeReviewResult), for scripts and tests.
  last = nil,
}

local function tandem()
  return require("tandem")
end

local function notify_error(err)
  local text = type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
  require("tandem.notice").notify("tandem: " .. text, vim.log.levels.ERROR)
end

--- One worktree as a line of the list.
function M.describe(w)
  return string.format(
    "%s  %s  %d changed file(s), %d session(s)",
    w.name,
    w.branch or "",
    w.changes or 0,
    w.sessions or 0
  )
end

--- The worktrees (WorktreeInfo list) to `callback`; nil after saying why when they cannot be listed.
function M.list(callback)
  tandem().request("tandem/worktree/list", vim.empty_dict(), function(err, result)
    if err then
      notify_error(err)
      return callback(nil)
    end
    local list = (result or {}).worktrees or {}
    M.names = vim.tbl_map(function(w)
      return w.name
    end, list)
    callback(list)
  end)
end

--- Reviews the worktree `name`: the review opens inline; `done(result)` when it is over.
function M.review(name, done)
  done = done or function() end
  vim.api.nvim_echo({ { "Tandem: reviewing worktree " .. name .. "…" } }, false, {})
  tandem().request("tandem/worktree/review", { name = name }, function(err, result)
    if err then
      notify_error(err)
      return done(nil)
    end
    M.last = result
    local chunks = {}
    for line in tostring(result.message or ""):gmatch("[^\n]+") do
      chunks[#chunks + 1] = { "Tandem: " .. line .. "\n", #chunks > 0 and "WarningMsg" or nil }
    end
    vim.api.nvim_echo(chunks, true, {})
    -- Files changed on disk behind unmodified buffers show their new text.
    vim.cmd("checktime")
    done(result)
  end)
end

--- :TandemWorktree [NAME].
function M.command(name)
  name = vim.trim(name or "")
  if name ~= "" then
    return M.review(name)
  end
  M.list(function(list)
    if not list then
      return
    end
    if #list == 0 then
      vim.api.nvim_echo({ { "Tandem: no agent worktrees (`tandem run --worktree NAME` makes one)" } }, false, {})
      return
    end
    vim.ui.select(list, { prompt = "Tandem: review a worktree", format_item = M.describe, kind = "tandem.worktree" }, function(choice)
      if choice then
        M.review(choice.name)
      end
    end)
  end)
end

--- Completion of :TandemWorktree: the names of the last list.
function M.complete(lead)
  return vim.tbl_filter(function(name)
    return name:sub(1, #lead) == lead
  end, M.names)
end

return M
