-- The diagnostics preview of a permission request (`params.diagnostics`): what the language
-- servers say the proposed change would break, turned into what the review shows: the headline,
-- `vim.diagnostic` items on the reviewed buffer (which holds the current text: a problem in a
-- line the change adds sits on the line the added lines are drawn under) and notes on the added
-- lines. Pure: no buffers, no extmarks.
local hunks_mod = require("tandem.hunks")

local M = {}

local NOT_READY = "diagnostics not ready, so nothing is known about errors"

local function list(value)
  return type(value) == "table" and value or {}
end

--- The preview of a request, or nil (absent, or JSON null).
function M.of(params)
  local preview = type(params) == "table" and params.diagnostics or nil
  return type(preview) == "table" and preview or nil
end

--- The line the review shows: "Diagnostics preview: introduces 1 error: …". A preview that is
--- not ready says so, never "no problems"; nil without a preview.
function M.headline(preview)
  if type(preview) ~= "table" then
    return nil
  end
  local summary = vim.trim(type(preview.summary) == "string" and preview.summary or "")
  if preview.status == "notReady" and not summary:lower():find("not ready", 1, true) then
    summary = summary ~= "" and (NOT_READY .. "; " .. summary) or NOT_READY
  end
  if summary == "" then
    summary = preview.status == "ready" and "no new errors or warnings" or NOT_READY
  end
  return "Diagnostics preview: " .. summary
end

--- The highlight group of the headline: errors, else warnings or not known, else fine.
function M.highlight(preview)
  local errors, warnings = false, false
  for _, file in ipairs(list(preview and preview.files)) do
    for _, d in ipairs(list(file.introduced)) do
      errors = errors or d.severity == "error"
      warnings = warnings or d.severity ~= "error"
    end
  end
  if errors then
    return "DiagnosticError"
  elseif warnings or not preview or preview.status ~= "ready" then
    return "DiagnosticWarn"
  end
  return "DiagnosticInfo"
end

local function norm(path)
  return (type(path) == "string" and path or ""):gsub("[/\\]+$", "")
end

--- The preview's entry for `path` (compared as given, then as real paths).
function M.file_of(preview, path)
  if type(preview) ~= "table" then
    return nil
  end
  local real = vim.loop.fs_realpath(path)
  for _, file in ipairs(list(preview.files)) do
    if norm(file.path) == norm(path) or (real and vim.loop.fs_realpath(file.path) == real) then
      return file
    end
  end
  return nil
end

--- "1 new error, 2 new warnings"; "" for none.
function M.counts(diagnostics)
  local errors, warnings = 0, 0
  for _, d in ipairs(list(diagnostics)) do
    if d.severity == "error" then
      errors = errors + 1
    else
      warnings = warnings + 1
    end
  end
  local parts = {}
  if errors > 0 then
    parts[#parts + 1] = string.format("%d new error%s", errors, errors == 1 and "" or "s")
  end
  if warnings > 0 then
    parts[#parts + 1] = string.format("%d new warning%s", warnings, warnings == 1 and "" or "s")
  end
  return table.concat(parts, ", ")
end

--- The introduced diagnostics of `file` (a preview entry) in hunk `id`.
function M.in_hunk(file, id)
  local out = {}
  for _, d in ipairs(list(file and file.introduced)) do
    if d.hunk == id then
      out[#out + 1] = d
    end
  end
  return out
end

--- The line for one file when it is not ready (nil when it is).
function M.file_line(file)
  if type(file) ~= "table" or file.status == "ready" then
    return nil
  end
  local who = type(file.server) == "string" and (file.server .. ": ") or ""
  local reason = type(file.reason) == "string" and file.reason or "no answer"
  return string.format("diagnostics of this file not ready (%s%s): nothing is known about its errors", who, reason)
end

local function severity(d)
  return d.severity == "error" and vim.diagnostic.severity.ERROR or vim.diagnostic.severity.WARN
end

local function first_line(message)
  return (tostring(message or ""):gsub("\n.*", ""))
end

--- Places the introduced diagnostics of `file` (a preview entry) in the current text `lines`
--- (the buffer's lines), the proposed text being `hunks` (raw hunks of the request, in file
--- order) applied to it. Returns the `vim.diagnostic` items and the notes the review draws: for
--- an added line keyed "<hunk index>:<after>:<nth>" (see hunks.new_line), for a kept line
--- "old:<line>"; each a list of { text, hl }.
function M.place(file, hunks, lines)
  local diagnostics, notes = {}, {}
  local count = math.max(#lines, 1)
  local function clamp(row)
    return math.min(math.max(row, 1), count)
  end
  for _, d in ipairs(list(file and file.introduced)) do
    local start = hunks_mod.new_line(hunks, d.line)
    local item = {
      severity = severity(d),
      source = type(d.source) == "string" and d.source or (type(file.server) == "string" and file.server or nil),
      code = type(d.code) == "string" and d.code or nil,
      user_data = { hunk = type(d.hunk) == "string" and d.hunk or nil, line = d.line },
    }
    if start.added then
      -- The line exists only as a virtual line: the item goes on the line it is drawn under
      -- (the first line when drawn above it) and says where it is.
      local row = clamp(math.max(start.after, 1))
      item.lnum, item.col, item.end_lnum, item.end_col = row - 1, 0, row - 1, 0
      item.message = string.format("proposed line %d: %s", d.line, tostring(d.message))
      local key = string.format("%d:%d:%d", start.hunk, start.after, start.nth)
      notes[key] = notes[key] or {}
      table.insert(notes[key], {
        text = string.format("  %s %s", d.severity == "error" and "E" or "W", first_line(d.message)),
        hl = d.severity == "error" and "DiagnosticError" or "DiagnosticWarn",
      })
    else
      local row = clamp(start.old)
      local text = lines[row] or ""
      local key = "old:" .. row
      notes[key] = notes[key] or {}
      table.insert(notes[key], {
        text = string.format(" %s %s ", d.severity == "error" and "E" or "W", first_line(d.message)),
        hl = d.severity == "error" and "DiagnosticError" or "DiagnosticWarn",
      })
      item.lnum = row - 1
      item.col = hunks_mod.byte_col(text, math.max((d.column or 1) - 1, 0))
      item.message = tostring(d.message)
      local finish = hunks_mod.new_line(hunks, d.endLine or d.line)
      if finish.old and clamp(finish.old) >= row then
        local end_row = clamp(finish.old)
        item.end_lnum = end_row - 1
        item.end_col = hunks_mod.byte_col(lines[end_row] or "", math.max((d.endColumn or 1) - 1, 0))
        if end_row == row and item.end_col < item.col then
          item.end_col = item.col
        end
      else
        item.end_lnum, item.end_col = item.lnum, #text
      end
    end
    diagnostics[#diagnostics + 1] = item
  end
  return diagnostics, notes
end

--- The introduced diagnostics of a file the change does not touch (positions in its text).
function M.place_unchanged(file, lines, title)
  local out = {}
  local count = math.max(#lines, 1)
  for _, d in ipairs(list(file and file.introduced)) do
    local row = math.min(math.max(d.line or 1, 1), count)
    local end_row = math.min(math.max(d.endLine or row, row), count)
    local col = hunks_mod.byte_col(lines[row] or "", math.max((d.column or 1) - 1, 0))
    local end_col = hunks_mod.byte_col(lines[end_row] or "", math.max((d.endColumn or 1) - 1, 0))
    if end_row == row and end_col < col then
      end_col = col
    end
    out[#out + 1] = {
      lnum = row - 1,
      col = col,
      end_lnum = end_row - 1,
      end_col = end_col,
      severity = severity(d),
      message = string.format("%s (if %s is accepted)", tostring(d.message), title or "the change"),
      source = type(d.source) == "string" and d.source or (type(file.server) == "string" and file.server or nil),
      code = type(d.code) == "string" and d.code or nil,
    }
  end
  return out
end

return M
