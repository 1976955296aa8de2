-- `#symbol:<name>`: a symbol's definition from the sidecar's language servers. The `lsp` tool's
-- `workspace_symbols` lists where each name is (`metadata.symbols`); the best match's definition
-- (the lines of its block: up to the brace that closes it, or the lines indented under it) goes
-- with the prompt as an embedded resource (`file:///w/a.py#L7-L9`), or as a link when it is long.
local M = {}

-- Lines looked at past a symbol's first one to find where its definition ends.
M.MAX_SCAN_LINES = 5000
-- A definition longer than this goes as a resource_link.
M.EMBED_MAX_CHARS = 64000

local function family_of(path)
  local ext = ((path or ""):match("%.(%w+)$") or ""):lower()
  if ext == "py" or ext == "pyi" or ext == "pyw" then
    return "python"
  end
  return ext == "rs" and "rust" or "c-like"
end

--- A line's code with the text of its strings left out (their quotes kept) and its comment cut,
--- so that brackets in them do not count.
local function code_of(line, family)
  local out, i, n, quote = {}, 1, #line, nil
  while i <= n do
    local c = line:sub(i, i)
    if quote then
      if c == "\\" then
        i = i + 1
      elseif c == quote then
        out[#out + 1] = c
        quote = nil
      end
    elseif (family == "python" and c == "#") or (family ~= "python" and line:sub(i, i + 1) == "//") then
      break
    elseif line:sub(i, i + 1) == "/*" then
      local close = line:find("*/", i + 2, true)
      if not close then
        break
      end
      out[#out + 1] = " "
      i = close + 1
    elseif c == '"' or (c == "`" and family == "c-like") or (c == "'" and family ~= "rust") then
      out[#out + 1] = c
      quote = c
    elseif c == "'" then
      -- Rust: a char literal ('x', '\n') is skipped; a lifetime ('a) is not a quote.
      if line:sub(i + 1, i + 1) == "\\" then
        i = line:find("'", i + 2, true) or n
      elseif line:sub(i + 2, i + 2) == "'" then
        i = i + 2
      end
    else
      out[#out + 1] = c
    end
    i = i + 1
  end
  return table.concat(out)
end

local function indent_of(line)
  return #line:match("^%s*")
end

local function trim(text)
  return (text:gsub("^%s+", ""):gsub("%s+$", ""))
end

--- Whether a line goes on with the definition above it (`{` on its own line, `where`, `->`, …).
local function continues(text)
  if text:match("^[{%.=:?|&+]") or text:match("^%->") then
    return true
  end
  for _, word in ipairs({ "where", "extends", "implements", "throws" }) do
    if text:match("^" .. word .. "%f[^%w_]") then
      return true
    end
  end
  return false
end

--- Whether a line ends so that the next one, indented deeper, goes on with it (`=>`, `where`, …).
local function open_end(text)
  return text:match("[=>,(+|&]$") ~= nil or text:match("%f[%w_]where$") ~= nil
end

--- Lines that belong to the definition below them: decorators, attributes, doc comments.
local function leading(text)
  return text:match("^@") or text:match("^#%[") or text:match("^//") or text:match("^/%*") or text:match("^%*")
    or text:match("^#%s") or text == "#"
end

--- The last line indented deeper than `first`, after the header that ends on `header` (1-based).
local function indented_end(lines, first, header, last)
  local base, stop = indent_of(lines[first]), header
  for j = header + 1, last do
    local text = lines[j]
    if trim(text) ~= "" then
      if indent_of(text) <= base then
        break
      end
      stop = j
    end
  end
  return stop
end

local function block_end(lines, first, family)
  local last = math.min(#lines, first + M.MAX_SCAN_LINES)
  local depth, braced = 0, false
  for i = first, last do
    local code = code_of(lines[i], family)
    for c in code:gmatch("[%(%[{%)%]}]") do
      if c == "(" or c == "[" or c == "{" then
        depth = depth + 1
        braced = braced or c == "{"
      else
        depth = depth - 1
      end
    end
    if depth <= 0 then
      if braced or depth < 0 then
        return i
      end
      local trimmed = code:gsub("%s+$", "")
      if trimmed:sub(-1) == ":" then
        return indented_end(lines, first, i, last)
      end
      if trimmed:sub(-1) == ";" then
        return i
      end
      local following
      for j = i + 1, last do
        if trim(lines[j]) ~= "" then
          following = lines[j]
          break
        end
      end
      if not following then
        return i
      end
      local goes_on = continues(trim(following)) or (open_end(trimmed) and indent_of(following) > indent_of(lines[i]))
      if not goes_on then
        return i
      end
    end
  end
  return last
end

--- The first and last line (1-based) of the definition of the symbol named on `line`: the range
--- the server gave when it spans lines (`end_line`); else the block that starts there — up to
--- the brace that closes it, or (a line ending in `:`, as in Python) the lines indented deeper —,
--- or the statement (brackets balanced). Decorators, attributes and doc comments right above go
--- too. `path` says how the language writes strings and comments.
function M.extent(lines, line, end_line, path)
  local first = math.max(1, math.min(line, #lines))
  local stop
  if end_line and end_line > first then
    stop = math.min(end_line, #lines)
  else
    stop = block_end(lines, first, family_of(path))
  end
  local start = first
  while start > 1 and leading(trim(lines[start - 1])) do
    start = start - 1
  end
  return start, stop
end

-- Kinds that are definitions worth attaching first (a class before a variable of the same name).
local KIND_RANK = { class = 0, struct = 0, interface = 0, enum = 0, ["function"] = 0, method = 0, constructor = 0,
  module = 1, namespace = 1, constant = 1, field = 2, property = 2, enum_member = 2, variable = 3 }

--- The symbols of an `lsp` `workspace_symbols` result's metadata (malformed entries left out).
function M.parse(metadata)
  local out = {}
  for _, s in ipairs(type(metadata) == "table" and type(metadata.symbols) == "table" and metadata.symbols or {}) do
    if type(s) == "table" and type(s.name) == "string" and s.name ~= "" and type(s.path) == "string" and s.path ~= ""
      and type(s.line) == "number" and s.line >= 1 then
      out[#out + 1] = { name = s.name, kind = type(s.kind) == "string" and s.kind or "symbol", path = s.path,
        line = s.line, end_line = type(s.endLine) == "number" and s.endLine or nil,
        container = type(s.container) == "string" and s.container or nil }
    end
  end
  return out
end

--- `Type.method`, `Type::method` or `Type/method`: the container and the name.
function M.split(name)
  local container, last = name:match("^(.+)[%.:/]+([^%.:/]+)$")
  if container then
    return container:gsub("[%.:/]+$", ""), last
  end
  return nil, name
end

--- The symbol `name` means among `symbols` (M.parse's), best first: the exact name, then one
--- starting with it, then one containing it (any case); in the container named, if any; a
--- definition before a variable, a file of the workspace before a library's. nil when none
--- contains the name.
function M.best(symbols, name)
  local container, wanted = M.split(name)
  local q = wanted:lower()
  local best, best_rank
  for _, s in ipairs(symbols) do
    local lower = s.name:lower()
    local match = s.name == wanted and 0 or lower == q and 1 or vim.startswith(lower, q) and 2
      or lower:find(q, 1, true) and 3 or nil
    if match then
      local rank = {
        container and (s.container or ""):lower() ~= container:lower() and 1 or 0,
        match,
        s.path:sub(1, 1) == "/" and 1 or 0,
        KIND_RANK[s.kind] or 2,
        #s.path,
        s.line,
      }
      local better = not best_rank
      if best_rank then
        for i = 1, #rank do
          if rank[i] ~= best_rank[i] then
            better = rank[i] < best_rank[i]
            break
          end
        end
      end
      if better then
        best, best_rank = s, rank
      end
    end
  end
  return best
end

--- The lines of `path`: the buffer's when it is loaded (unsaved changes included), else the file's.
local function file_lines(path)
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  end
  if vim.fn.filereadable(path) == 0 then
    return nil
  end
  return vim.fn.readfile(path)
end

--- The context of symbol `s` (M.parse's) in the workspace at `root`: { path, uri, text, label }
--- with the definition's lines, or { link = true, uri, label } when it is long; nil and why.
function M.context(s, root)
  local path = s.path:sub(1, 1) == "/" and s.path or (root .. "/" .. s.path)
  local lines = file_lines(path)
  if not lines then
    return nil, "cannot read " .. s.path
  end
  local first, last = M.extent(lines, s.line, s.end_line, s.path)
  local uri = string.format("%s#L%d-L%d", vim.uri_from_fname(path), first, last)
  local where = first == last and tostring(first) or string.format("%d-%d", first, last)
  local label = string.format("%s (%s:%s)", s.name, vim.fn.fnamemodify(path, ":~:."), where)
  local text = table.concat(vim.list_slice(lines, first, last), "\n")
  if #text > M.EMBED_MAX_CHARS then
    return { path = path, uri = uri, link = true, label = label }
  end
  return { path = path, uri = uri, text = text, mime_type = "text/plain", label = label }
end

--- Resolves `#symbol:<name>`: asks the language servers (through `request`, as
--- require("tandem").request) with `hint` (a file whose language server to ask; nil: any
--- running one), then callback(nil, context) or callback(error message). `root` is the
--- workspace (or a function that says it once the sidecar runs).
function M.resolve(request, name, hint, root, callback)
  local _, query = M.split(name)
  local tries = hint and { hint, false } or { false }
  local why = {}
  local function try(i)
    if i > #tries then
      local reason = #why > 0 and (": " .. table.concat(why, "; ")) or ""
      callback(string.format("tandem: #symbol:%s: no symbol of that name in the workspace%s", name, reason))
      return
    end
    local args = { operation = "workspace_symbols", query = query }
    if tries[i] then
      args.file_path = tries[i]
    end
    request("tandem/tools/call", { name = "lsp", arguments = args }, function(err, result)
      local problem = err or (result and result.error ~= vim.NIL and result.error) or nil
      if problem then
        why[#why + 1] = "the language server did not answer (" .. tostring(problem) .. ")"
        try(i + 1)
        return
      end
      local s = M.best(M.parse(result and result.metadata), name)
      if not s then
        try(i + 1)
        return
      end
      local context, reason = M.context(s, type(root) == "function" and root() or root)
      if context then
        callback(nil, context)
      else
        callback(string.format("tandem: #symbol:%s: %s", name, reason))
      end
    end)
  end
  try(1)
end

return M
