-- Errors a person reads without pressing Enter. A message that fits on the command line is a
-- plain vim.notify; a longer one (a provider's error, a configuration error naming the file and
-- the key) opens a small floating notice in the top-right corner that closes by itself, with a
-- one-line summary in :messages. When vim.notify has been replaced (nvim-notify, noice, fidget),
-- the replacement shows everything: it does not block either.
local M = {
  -- The open notice: { win, bufnr }, or nil.
  open = nil,
  -- How long a notice stays (ms).
  timeout = 10000,
}

--- Whether vim.notify is still Neovim's own (which echoes, and asks for Enter when the message is
--- longer than the command line).
function M.builtin_notify()
  local info = debug.getinfo(vim.notify, "S")
  return info ~= nil and type(info.source) == "string" and info.source:match("vim/_editor%.lua$") ~= nil
end

--- Whether `text` shows on the command line without a hit-enter prompt.
function M.fits(text)
  return not text:find("\n", 1, true) and vim.fn.strdisplaywidth(text) < vim.o.columns - 12
end

function M.close()
  local open = M.open
  M.open = nil
  if open and vim.api.nvim_win_is_valid(open.win) then
    pcall(vim.api.nvim_win_close, open.win, true)
  end
  if open and vim.api.nvim_buf_is_valid(open.bufnr) then
    pcall(vim.api.nvim_buf_delete, open.bufnr, { force = true })
  end
end

--- The lines of `text` wrapped at `width` display cells (at spaces where it can).
local function wrap(text, width)
  local lines = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    while vim.fn.strdisplaywidth(line) > width do
      local cut = width
      local space = line:sub(1, width):match(".*() ")
      if space and space > width / 2 then
        cut = space
      end
      lines[#lines + 1] = vim.trim(line:sub(1, cut))
      line = line:sub(cut + 1)
    end
    lines[#lines + 1] = line
  end
  return lines
end

--- Shows `text` in a floating notice (replacing one that is open); returns its window.
function M.float(text, level)
  M.close()
  local width = math.max(math.min(80, vim.o.columns - 6), 20)
  local lines = wrap(text, width)
  local widest = 1
  for _, line in ipairs(lines) do
    widest = math.max(widest, vim.fn.strdisplaywidth(line))
  end
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].filetype = "tandem-notice"
  local height = math.max(math.min(#lines, vim.o.lines - 6), 1)
  local win = vim.api.nvim_open_win(bufnr, false, {
    relative = "editor",
    anchor = "NE",
    row = 1,
    col = vim.o.columns,
    width = widest,
    height = height,
    style = "minimal",
    border = "rounded",
    focusable = true,
    zindex = 150,
  })
  local hl = level == vim.log.levels.ERROR and "ErrorMsg" or level == vim.log.levels.WARN and "WarningMsg" or "Normal"
  vim.api.nvim_win_call(win, function()
    vim.opt_local.winhighlight = "Normal:NormalFloat,FloatBorder:" .. hl
    vim.opt_local.wrap = true
  end)
  M.open = { win = win, bufnr = bufnr }
  local this = M.open
  vim.defer_fn(function()
    if M.open == this then
      M.close()
    end
  end, M.timeout)
  return win
end

--- Tells the person `text` at `level` (default ERROR) without a hit-enter prompt.
function M.notify(text, level)
  text = tostring(text)
  level = level or vim.log.levels.ERROR
  if not M.builtin_notify() or M.fits(text) then
    vim.notify(text, level)
    return
  end
  M.float(text, level)
  -- A line for :messages, short enough not to ask for Enter.
  local first = text:match("^[^\n]*")
  local room = math.max(vim.o.columns - 20, 10)
  if vim.fn.strdisplaywidth(first) > room or text:find("\n", 1, true) then
    first = vim.fn.strcharpart(first, 0, room) .. "…"
  end
  vim.api.nvim_echo({ { first, level == vim.log.levels.ERROR and "ErrorMsg" or "WarningMsg" } }, true, {})
end

return M
