-- End to end: checkpoints, undo, redo and compaction with the real sidecar (TANDEM_TEST_BIN)
-- and the scripted provider (TANDEM_TEST_BASE_URL) in a real workspace (TANDEM_TEST_WORKSPACE).
-- The provider's turns are scripted in tests/e2e/nvim.rs, in the order of these tests.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")
  local chat = require("tandem.chat")
  local checkpoints = require("tandem.checkpoints")
  local workspace = os.getenv("TANDEM_TEST_WORKSPACE")
  local calc = workspace .. "/calc.py"
  local util = workspace .. "/util.py"

  local function calc_with(add, mul)
    return { "def add(a, b):", "    return a " .. add .. " b", "", "", "def one():", "    return 1", "", "",
      "def two():", "    return 2", "", "", "def mul(a, b):", "    return a " .. mul .. " b" }
  end

  H.setup_sidecar()

  local function has(text)
    return chat.text():find(text, 1, true) ~= nil
  end

  --- A prompt whose edit is accepted whole; waits for the end of the turn.
  local function prompt_and_accept(text)
    local turn = {}
    tandem.prompt(text, {
      on_done = function(err, result)
        turn.err, turn.result, turn.done = err, result, true
      end,
    })
    H.wait(30000, function()
      return tandem.review() ~= nil or turn.done
    end, "the review of " .. text)
    if tandem.review() then
      tandem.accept_all()
    end
    H.wait(30000, function()
      return turn.done
    end, "the end of the turn " .. text)
    eq(nil, turn.err)
    eq("end_turn", turn.result.stopReason)
  end

  --- Replaces vim.ui.select while `fn` runs: `choose(kind, items, labels, prompt)` returns the
  --- index to choose (nil dismisses). Returns what each select showed.
  local function with_select(choose, fn)
    local shown = {}
    local saved = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      local labels = vim.tbl_map(opts.format_item or tostring, items)
      shown[#shown + 1] = { kind = opts.kind, prompt = opts.prompt, labels = labels, plan = checkpoints.plan_text() }
      local index = choose(opts.kind, items, labels, opts.prompt)
      on_choice(index and items[index] or nil, index)
    end
    local ok, err = pcall(fn)
    vim.ui.select = saved
    H.truthy(ok, err)
    return shown
  end

  --- Runs a restore command; the restore's review is accepted whole. Waits for the chat's note.
  local function restore_with(command, note, choose)
    local shown = with_select(choose, function()
      vim.cmd(command)
      H.wait(30000, function()
        return tandem.review() ~= nil
      end, "the review of the restore")
      tandem.accept_all()
      H.wait(30000, function()
        return has(note)
      end, "the note " .. note .. " in the chat:\n" .. chat.text())
    end)
    return shown
  end

  test("e2e checkpoints: two turns, and the person's own edit between them; the token meter", function()
    vim.cmd("edit " .. vim.fn.fnameescape(calc))
    prompt_and_accept("fix add")
    eq(calc_with("+", "/"), vim.fn.readfile(calc))
    -- The statusline's token meter: the 1200 prompt tokens the model reported.
    local meter = tandem.statusline()
    H.truthy(meter:find("^Tandem 1%.2k/[%d.]+k %(%d+%%%) Σ [%d.]+k$"), "the token meter: " .. meter)
    -- The person changes util.py by hand, then the second turn.
    vim.cmd("edit " .. vim.fn.fnameescape(util))
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "x = 5" })
    vim.cmd("silent write")
    vim.cmd("edit " .. vim.fn.fnameescape(calc))
    prompt_and_accept("fix mul")
    eq(calc_with("+", "*"), vim.fn.readfile(calc))
  end)

  test("e2e :TandemCheckpoints: the list, the plan with the person's change as a conflict, restore keeps it", function()
    local shown = restore_with("TandemCheckpoints", "Restore to checkpoint #1", function(kind, items)
      if kind == "tandem.checkpoints" then
        return #items -- the oldest: the session's start
      end
      return 1 -- "Restore 1 file(s), keep your changes"
    end)
    local list, ask = shown[1], shown[2]
    eq("tandem.checkpoints", list.kind)
    -- Newest first; the oldest is the start of turn 1, whose turn changed calc.py.
    local oldest = list.labels[#list.labels]
    H.truthy(oldest:find("^#1  turn 1  %d%d:%d%d:%d%d  start of turn  %(changed: calc.py%)$"), oldest)
    H.truthy(vim.tbl_filter(function(l)
      return l:find("before edit c2  (changed: calc.py)", 1, true) ~= nil
    end, list.labels)[1], table.concat(list.labels, "\n"))
    H.truthy(vim.tbl_filter(function(l)
      return l:find("end of turn  (changed: util.py)", 1, true) ~= nil
    end, list.labels)[1], "the person's change after turn 1:\n" .. table.concat(list.labels, "\n"))
    -- The plan: calc.py restored, util.py a conflict, the diff; then the question.
    eq("tandem.restore", ask.kind)
    H.truthy(ask.plan:find("Restores (1): calc.py", 1, true), ask.plan)
    H.truthy(ask.plan:find("CONFLICT, changed by you since (1), kept unless you include them: util.py", 1, true), ask.plan)
    H.truthy(ask.plan:find("-    return a + b\n+    return a - b", 1, true), ask.plan)
    eq({ "Restore 1 file(s), keep your changes", "Restore 2 file(s), your changes to util.py too", "Cancel" }, ask.labels)
    eq(calc_with("-", "/"), vim.fn.readfile(calc))
    eq(calc_with("-", "/"), vim.api.nvim_buf_get_lines(vim.fn.bufnr(calc), 0, -1, false), "the buffer")
    eq({ "x = 5" }, vim.fn.readfile(util), "the person's change is kept")
    H.truthy(has("Kept your changes to util.py."), chat.text())
  end)

  test("e2e :TandemRedo brings back what the restore undid", function()
    local shown = restore_with("TandemRedo", "Redo (back to checkpoint", function()
      return 1
    end)
    H.truthy(shown[1].plan:find("Restores (1): calc.py", 1, true), shown[1].plan)
    eq(calc_with("+", "*"), vim.fn.readfile(calc))
    eq({ "x = 5" }, vim.fn.readfile(util))
  end)

  test("e2e :TandemUndo restores to before the last turn; Cancel changes nothing", function()
    local cancelled = with_select(function()
      return 2 -- "Cancel" (the only other choice)
    end, function()
      vim.cmd("TandemUndo")
      H.wait(10000, function()
        return checkpoints.plan_text():find("# Undo turn 2", 1, true) ~= nil
      end, "the plan")
    end)
    eq({ "Restore 1 file(s), keep your changes", "Cancel" }, cancelled[1].labels)
    eq(calc_with("+", "*"), vim.fn.readfile(calc), "Cancel restored nothing")
    restore_with("TandemUndo", "Undo turn 2", function()
      return 1
    end)
    eq(calc_with("+", "/"), vim.fn.readfile(calc))
  end)

  test("e2e: the model is told what was restored", function()
    local turn = {}
    tandem.prompt("what changed?", {
      on_done = function(err, result)
        turn.err, turn.result, turn.done = err, result, true
      end,
    })
    H.wait(30000, function()
      return turn.done
    end, "the turn")
    eq("end_turn", turn.result.stopReason)
    H.truthy(has("Noted."), chat.text())
  end)

  test("e2e :TandemCompact shows the token estimate before and after", function()
    local done = {}
    checkpoints.compact({
      on_done = function(err, result)
        done.err, done.result = err, result
      end,
    })
    H.wait(30000, function()
      return done.result ~= nil or done.err ~= nil
    end, "the compaction")
    eq(nil, done.err)
    H.truthy(done.result.tokensBefore > 0 and done.result.tokensAfter > 0, vim.inspect(done.result))
    local text = string.format("compacted the conversation: %d → %d tokens", done.result.tokensBefore, done.result.tokensAfter)
    H.truthy(has(text), chat.text())
  end)
end
