-- What a hunk of a permission request looks like in the buffer: which old lines it removes and
-- which lines it adds after which old line. Pure: no buffers, no extmarks.
local M = {}

--- Parses `hunk` ({ id, oldStart, oldLines, newStart, newLines, patch }) into
--- { removed = { old line numbers, 1-based }, added = { { after = old line (0: above the first), lines } },
---   first = first old line the hunk changes (1-based, at least 1), range = { from, to } (context included) }.
function M.parse(hunk)
  if type(hunk) ~= "table" or type(hunk.patch) ~= "string" or type(hunk.oldStart) ~= "number" then
    error("tandem: a hunk needs `patch` and `oldStart`", 0)
  end
  local lines = vim.split(hunk.patch, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  -- `@@ -5,0 +6,2 @@` adds after old line 5; otherwise the hunk starts at old line oldStart.
  local old = hunk.oldLines == 0 and hunk.oldStart + 1 or hunk.oldStart
  local removed, added = {}, {}
  local block = nil
  local first = nil
  for _, line in ipairs(lines) do
    local mark, text = line:sub(1, 1), line:sub(2)
    if mark == "@" or mark == "\\" then
      -- the header, or "\ No newline at end of file"
    elseif mark == "+" then
      if not block then
        block = { after = old - 1, lines = {} }
        added[#added + 1] = block
        first = first or math.max(old - 1, 1)
      end
      block.lines[#block.lines + 1] = text
    elseif mark == "-" then
      block = nil
      removed[#removed + 1] = old
      first = first or old
      old = old + 1
    else
      block = nil
      old = old + 1
    end
  end
  local from = math.max(hunk.oldStart, 1)
  local to = math.max(hunk.oldStart + hunk.oldLines - 1, from)
  return { removed = removed, added = added, first = first or from, range = { from, to } }
end

--- The index in `hunks` (parsed, in file order) of the hunk at `line`: the one whose range holds it,
--- else the next one after it, else the last one. nil for an empty list.
function M.at_line(parsed, line)
  for i, p in ipairs(parsed) do
    if line >= p.range[1] and line <= p.range[2] then
      return i
    end
  end
  for i, p in ipairs(parsed) do
    if p.range[1] > line then
      return i
    end
  end
  return #parsed > 0 and #parsed or nil
end

return M
