-- A small test harness (no plenary here): test(name, fn), eq, wait; prints `ok`/`FAIL` lines
-- and `N passed, N failed`; exits non-zero on failure. Output goes to stdout and, when
-- TANDEM_TEST_OUT is set, to that file.
local H = { tests = {}, passed = 0, failed = 0 }

local out_path = os.getenv("TANDEM_TEST_OUT")
local out_file = out_path and io.open(out_path, "w")

function H.log(line)
  io.stdout:write(line .. "\n")
  if out_file then
    out_file:write(line .. "\n")
    out_file:flush()
  end
end

function H.test(name, fn)
  H.tests[#H.tests + 1] = { name = name, fn = fn }
end

function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(string.format("%sexpected %s, got %s", what and (what .. ": ") or "", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function H.truthy(value, what)
  if not value then
    error("expected " .. (what or "a true value"), 2)
  end
  return value
end

--- Waits (processing events) until predicate() is true; errors with `what` after `ms`.
function H.wait(ms, predicate, what)
  if not vim.wait(ms, predicate, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what, 2)
  end
end

--- fn must error with a message containing `part`.
function H.errors(part, fn)
  local ok, err = pcall(fn)
  if ok then
    error("expected an error containing " .. vim.inspect(part), 2)
  end
  if not tostring(err):find(part, 1, true) then
    error(string.format("expected an error containing %q, got %q", part, tostring(err)), 2)
  end
end

--- Runs fn() with `object[key]` replaced by `value` (vim.notify, say), and puts it back, also
--- when fn fails.
function H.replacing(object, key, value, fn)
  local saved = object[key]
  object[key] = value
  local ok, err = pcall(fn)
  object[key] = saved
  if not ok then
    error(err, 0)
  end
end

--- For the end-to-end files: setup() against the sidecar (TANDEM_TEST_BIN) and the scripted
--- provider (TANDEM_TEST_BASE_URL) in the workspace TANDEM_TEST_WORKSPACE.
function H.setup_sidecar()
  require("tandem").setup({
    cmd = { os.getenv("TANDEM_TEST_BIN"), "lsp" },
    provider = { kind = "openai", base_url = os.getenv("TANDEM_TEST_BASE_URL"), model = "scripted" },
    root_dir = os.getenv("TANDEM_TEST_WORKSPACE"),
    env = { TANDEM_LOG = os.getenv("TANDEM_LOG") or "warn" },
  })
end

--- Sends prompt `text`; the table returned gets `err`, `result` and `done = true` when the turn ends.
function H.prompt(text)
  local turn = {}
  require("tandem").prompt(text, {
    on_done = function(err, result)
      turn.err, turn.result, turn.done = err, result, true
    end,
  })
  return turn
end

--- Sends prompt `text` and waits (up to `ms`, default 30 s) for its turn to end normally.
function H.answered(text, ms)
  local turn = H.prompt(text)
  if not vim.wait(ms or 30000, function()
    return turn.done
  end, 20) then
    error("timed out waiting for the turn of " .. text, 2)
  end
  H.eq(nil, turn.err, text)
  H.eq("end_turn", turn.result.stopReason, text)
end

function H.run()
  local started = vim.loop.hrtime()
  for _, t in ipairs(H.tests) do
    local ok, err = xpcall(t.fn, debug.traceback)
    if ok then
      H.passed = H.passed + 1
      H.log("ok " .. t.name)
    else
      H.failed = H.failed + 1
      H.log("FAIL " .. t.name .. "\n    " .. tostring(err):gsub("\n", "\n    "))
    end
  end
  H.log(string.format("(%.1f s)", (vim.loop.hrtime() - started) / 1e9))
  H.log(string.format("%d passed, %d failed", H.passed, H.failed))
  if out_file then
    out_file:close()
  end
  return H.failed == 0
end

return H
