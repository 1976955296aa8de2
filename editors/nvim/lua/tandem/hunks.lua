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
    if mark == "+" then
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
    elseif mark ~= "@" and mark ~= "\\" then
      -- A context line (the header, and "\ No newline at end of file", are neither).
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

--- Where line `line` (1-based) of the proposed text is in the current text, given the file's
--- hunks (raw: { oldStart, oldLines, newStart, newLines, patch }, in file order):
--- { old = old line } for a line the change keeps, { added = true, after = old line (0: above the
--- first), hunk = index, nth = its place among the lines added there (1-based), text = the line }
--- for a line it adds.
function M.new_line(hunks, line)
  local delta = 0
  for index, hunk in ipairs(hunks) do
    local first_new = hunk.newLines == 0 and hunk.newStart + 1 or hunk.newStart
    if line < first_new then
      break
    end
    if line < first_new + hunk.newLines then
      local old = hunk.oldLines == 0 and hunk.oldStart + 1 or hunk.oldStart
      local new = first_new
      local lines = vim.split(hunk.patch or "", "\n", { plain = true })
      if lines[#lines] == "" then
        table.remove(lines)
      end
      local run = 0
      for _, l in ipairs(lines) do
        local mark, text = l:sub(1, 1), l:sub(2)
        if mark == "+" then
          run = run + 1
          if new == line then
            return { added = true, after = old - 1, hunk = index, nth = run, text = text }
          end
          new = new + 1
        elseif mark == "-" then
          run = 0
          old = old + 1
        elseif mark ~= "@" and mark ~= "\\" then
          run = 0
          if new == line then
            return { old = old }
          end
          old, new = old + 1, new + 1
        end
      end
      -- A patch that does not cover its own range: the hunk's start is the best guess.
      return { old = math.max(line - delta, 1) }
    end
    delta = delta + hunk.newLines - hunk.oldLines
  end
  return { old = math.max(line - delta, 1) }
end

--- The byte offset (0-based) of the `scalar`-th (0-based) Unicode scalar value of `text`,
--- clamped to its length.
function M.byte_col(text, scalar)
  local byte, seen = 0, 0
  while byte < #text and seen < scalar do
    local c = text:byte(byte + 1)
    local len = c >= 0xF0 and 4 or c >= 0xE0 and 3 or c >= 0xC0 and 2 or 1
    byte = byte + len
    seen = seen + 1
  end
  return math.min(byte, #text)
end

return M
