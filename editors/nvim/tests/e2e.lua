-- End to end: the real sidecar (TANDEM_TEST_BIN) with the scripted provider
-- (TANDEM_TEST_BASE_URL) in a real workspace (TANDEM_TEST_WORKSPACE). The provider's turns are
-- scripted in tests/e2e/nvim.rs, in the order of these tests.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")
  local chat = require("tandem.chat")
  local review = require("tandem.review")
  local workspace = os.getenv("TANDEM_TEST_WORKSPACE")
  local calc = workspace .. "/calc.py"

  local CALC_ADD_FIXED = { "def add(a, b):", "    return a + b", "", "", "def one():", "    return 1", "", "",
    "def two():", "    return 2", "", "", "def mul(a, b):", "    return a / b" }

  H.setup_sidecar()

  local prompt = H.prompt

  local function has(text)
    return chat.text():find(text, 1, true) ~= nil
  end

  test("e2e: review: streamed answer, two hunks inline, accept one with ga, reject the other with gr", function()
    -- An open buffer with unsaved text: the model's read of it must see that text.
    local notes = vim.fn.bufadd(workspace .. "/notes.md")
    vim.fn.bufload(notes)
    vim.api.nvim_buf_set_lines(notes, 0, -1, false, { "draft UNSAVED-MARKER" })
    vim.cmd("edit " .. vim.fn.fnameescape(calc))
    local bufnr = vim.api.nvim_get_current_buf()
    local turn = prompt("fix the failing test")
    H.wait(30000, function()
      return tandem.review() ~= nil
    end, "the review")
    H.truthy(has("Reading calc.py first."), "the streamed answer in the chat:\n" .. chat.text())
    eq("tandem-chat", vim.bo[chat.bufnr].filetype)
    local r = tandem.review()
    eq({ "h1", "h2" }, vim.tbl_map(function(h)
      return h.id
    end, r.hunks))
    eq(vim.loop.fs_realpath(calc), vim.loop.fs_realpath(r.file))
    eq(bufnr, vim.api.nvim_get_current_buf(), "the review is in the file's window")
    local removed, added = {}, {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })) do
      if m[4].hl_group == "TandemRemoved" then
        removed[#removed + 1] = vim.api.nvim_buf_get_lines(bufnr, m[2], m[2] + 1, false)[1]
      end
      for _, line in ipairs(m[4].virt_lines or {}) do
        added[#added + 1] = vim.trim(line[1][1])
      end
    end
    eq({ "    return a - b", "    return a / b" }, removed)
    eq({ "+     return a + b", "+     return a * b" }, added)
    vim.api.nvim_feedkeys("ga", "x", false)
    eq("accepted", tandem.review().hunks[1].state)
    vim.api.nvim_feedkeys("gr", "x", false)
    H.wait(30000, function()
      return turn.done
    end, "the end of the turn")
    eq(nil, turn.err)
    eq("end_turn", turn.result.stopReason)
    eq(CALC_ADD_FIXED, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "the buffer")
    eq(false, vim.bo[bufnr].modified, "the buffer was saved")
    eq(CALC_ADD_FIXED, vim.fn.readfile(calc), "the file")
    H.truthy(has("Fixed what you accepted."), "the last answer in the chat:\n" .. chat.text())
    H.truthy(has("review of Edit calc.py: 1 accepted, 1 rejected") or has("1 accepted, 1 rejected"), "the review's note")
    -- The edit's card: the file and what was applied (one hunk of two), the diff folded under it.
    H.truthy(has("✓ calc.py +1 −1"), "the edit's card:\n" .. chat.text())
    H.truthy(has(chat.FOLDED .. "+    return a + b"), "the applied diff under the card:\n" .. chat.text())
    H.truthy(not has(chat.FOLDED .. "+    return a * b"), "not the rejected hunk:\n" .. chat.text())
    -- Undo takes the accepted hunk back: it came through workspace/applyEdit.
    vim.cmd("silent undo")
    eq("    return a - b", vim.api.nvim_buf_get_lines(bufnr, 1, 2, false)[1])
    vim.cmd("silent redo")
    vim.cmd("silent write")
  end)

  test("e2e: :TandemCancel stops a turn mid-stream", function()
    local turn = prompt("think hard")
    H.wait(30000, function()
      return has("Thinking about it")
    end, "the first chunk")
    H.truthy(tandem.state().busy, "the turn is running")
    -- The statusline item: a spinner frame and "Tandem" while the turn runs.
    local status = tandem.status()
    local frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
    H.truthy(vim.tbl_contains(frames, status:sub(1, #"⠋")) and status:find(" Tandem", 1, true), "status() during a turn: " .. status)
    vim.cmd("TandemCancel")
    H.wait(10000, function()
      return turn.done
    end, "the cancelled turn")
    eq(nil, turn.err)
    eq("cancelled", turn.result.stopReason)
    H.truthy(not has("for a long time"), "nothing after the cancel")
    H.truthy(tandem.status():find("^Tandem"), "status() after the turn: " .. tandem.status())
  end)

  test("e2e: :TandemMode plan blocks a write (no review, file unchanged)", function()
    vim.cmd("TandemMode plan")
    H.wait(10000, function()
      return tandem.state().mode == "plan"
    end, "plan mode")
    local original = review.start
    local reviewed = false
    review.start = function(...)
      reviewed = true
      return original(...)
    end
    local turn = prompt("rewrite calc.py")
    local ok, err = pcall(H.wait, 30000, function()
      return turn.done
    end, "the turn")
    review.start = original
    H.truthy(ok, err)
    eq("end_turn", turn.result.stopReason)
    eq(false, reviewed, "no review in plan mode")
    eq(CALC_ADD_FIXED, vim.fn.readfile(calc))
    H.truthy(has("✗ ") and has(chat.SHOWN .. "the session is in plan mode"), "the blocked call in the chat:\n" .. chat.text())
    H.truthy(has("Plan mode kept me out."), "the answer")
    vim.cmd("TandemMode default")
    H.wait(10000, function()
      return tandem.state().mode == "default"
    end, "default mode")
  end)

  test("e2e: a command asks with vim.ui.select showing the command and the verdict; Run runs it", function()
    local saved = vim.ui.select
    local shown
    vim.ui.select = function(items, opts, on_choice)
      shown = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item, items) }
      for _, item in ipairs(items) do
        if item.optionId == "allow_once" then
          on_choice(item)
        end
      end
    end
    local turn = prompt("make a file")
    local ok, err = pcall(H.wait, 30000, function()
      return turn.done
    end, "the turn")
    vim.ui.select = saved
    H.truthy(ok, err)
    H.truthy(shown, "vim.ui.select was used")
    H.truthy(shown.prompt:find("$ touch made.txt", 1, true), "the command in: " .. shown.prompt)
    H.truthy(shown.prompt:find("needs approval", 1, true), "the verdict in: " .. shown.prompt)
    eq("Run", shown.items[1])
    eq(1, vim.fn.filereadable(workspace .. "/made.txt"))
    -- The completed command's output is in the chat (the command line itself says "$((6*7))").
    H.truthy(has("made-42"), "the command's output in the chat:\n" .. chat.text())
    H.truthy(has("Made it."), "the answer")
  end)

  test("e2e: a new file and a file not open in Neovim are reviewed, applied and saved too", function()
    local turn = prompt("create notes and bump x")
    local function reviewing(name)
      return function()
        local r = tandem.review()
        return r ~= nil and r.file:sub(-#name) == name
      end
    end
    H.wait(30000, reviewing("notes/new.txt"), "the review of the new file")
    eq(1, #tandem.review().hunks)
    vim.api.nvim_feedkeys("ga", "x", false)
    H.wait(30000, reviewing("util.py"), "the review of util.py")
    vim.api.nvim_feedkeys("ga", "x", false)
    H.wait(30000, function()
      return turn.done
    end, "the end of the turn")
    eq("end_turn", turn.result.stopReason)
    eq({ "hello" }, vim.fn.readfile(workspace .. "/notes/new.txt"))
    eq({ "x = 2" }, vim.fn.readfile(workspace .. "/util.py"))
    for path, lines in pairs({ [workspace .. "/notes/new.txt"] = { "hello" }, [workspace .. "/util.py"] = { "x = 2" } }) do
      -- The review loaded the buffer; it now holds what the sidecar wrote, and is in sync.
      local b = vim.fn.bufnr(path)
      H.truthy(b ~= -1 and vim.api.nvim_buf_is_loaded(b), "a loaded buffer for " .. path)
      eq(lines, vim.api.nvim_buf_get_lines(b, 0, -1, false), "buffer of " .. path)
      eq(false, vim.bo[b].modified, "buffer of " .. path .. " saved")
      eq(true, vim.lsp.buf_is_attached(b, tandem.state().client_id), "buffer of " .. path .. " attached")
    end
    H.truthy(has("Created and edited."), "the answer")
  end)

  test("e2e: :TandemCancel during a review closes it, answers cancelled, and changes nothing", function()
    local turn = prompt("bump x again")
    H.wait(30000, function()
      return tandem.review() ~= nil
    end, "the review")
    local bufnr = vim.fn.bufnr(workspace .. "/util.py")
    vim.cmd("TandemCancel")
    eq(nil, tandem.review())
    eq({}, vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, {}), "extmarks cleared")
    H.wait(10000, function()
      return turn.done
    end, "the cancelled turn")
    eq("cancelled", turn.result.stopReason)
    eq({ "x = 2" }, vim.fn.readfile(workspace .. "/util.py"))
    eq({ "x = 2" }, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
  end)

  test("e2e: a provider error ends the turn with the reason in the chat", function()
    local notified = {}
    local saved = vim.notify
    vim.notify = function(message, level)
      notified[#notified + 1] = { message, level }
    end
    local turn = prompt("one more")
    local ok, err = pcall(H.wait, 30000, function()
      return turn.done
    end, "the turn")
    vim.notify = saved
    H.truthy(ok, err)
    eq("error", turn.result.stopReason)
    H.truthy(has("turn ended (error): "), "the reason in the chat:\n" .. chat.text())
    H.truthy(has("400"), "the status in the chat:\n" .. chat.text())
    eq(vim.log.levels.ERROR, notified[1] and notified[1][2])
  end)

  test("e2e: :TandemInfo and :TandemSessions show the running sidecar and this session", function()
    local info = table.concat(tandem.info(), "\n")
    H.truthy(info:find("sidecar: running", 1, true), info)
    H.truthy(info:find("session: " .. tandem.state().session_id, 1, true), info)
    local saved = vim.ui.select
    local items
    local session = tandem.state().session_id
    vim.ui.select = function(list, opts, on_choice)
      items = vim.tbl_map(opts.format_item, list)
      on_choice(list[2])
    end
    local function count(text)
      local n = 0
      for _ in chat.text():gmatch(vim.pesc(text)) do
        n = n + 1
      end
      return n
    end
    eq(1, count("fix the failing test"), "the first prompt in the chat before resuming")
    vim.cmd("TandemSessions")
    -- Resuming replays the session's history into the chat: after the session's note, up to a
    -- later turn's answer.
    local ok, err = pcall(H.wait, 10000, function()
      local text = chat.text()
      local note = text:find("> session " .. session, 1, true)
      return items ~= nil and note ~= nil and text:find("Created and edited.", note, true) ~= nil
    end, "the replayed session")
    vim.ui.select = saved
    H.truthy(ok, err)
    -- The replay replaces what the chat showed: the history once, not twice.
    eq(1, count("fix the failing test"), "the first prompt in the resumed chat:\n" .. chat.text())
    eq("+ new session", items[1])
    H.truthy(items[2] and items[2]:find(session, 1, true), vim.inspect(items))
    eq(session, tandem.state().session_id)
  end)

  test("e2e: an answer's code block: gy copies it, gp inserts it into the file's window", function()
    local turn = prompt("write sub")
    H.wait(30000, function()
      return turn.done
    end, "the turn")
    eq("end_turn", turn.result.stopReason)
    vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/scratch.py"))
    local scratch = vim.api.nvim_get_current_buf()
    local win = chat.open("botright vsplit", true)
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(chat.bufnr), 0 })
    vim.api.nvim_feedkeys("gy", "x", false)
    eq("def sub(a, b):\n    return a - b\n", vim.fn.getreg('"'))
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_feedkeys("gp", "x", false)
    eq({ "", "def sub(a, b):", "    return a - b" }, vim.api.nvim_buf_get_lines(scratch, 0, -1, false))
    eq(scratch, vim.api.nvim_get_current_buf())
  end)

  test("e2e: :TandemAdd lines go with the next prompt, then are dropped", function()
    vim.cmd("edit " .. vim.fn.fnameescape(calc))
    vim.cmd("1,2TandemAdd")
    eq(1, #tandem.attached())
    local turn = prompt("what are these?")
    H.wait(30000, function()
      return turn.done
    end, "the turn")
    eq("end_turn", turn.result.stopReason)
    eq({}, tandem.attached(), "sent once")
    H.truthy(has("(attached: calc.py lines 1-2)"), chat.text())
    H.truthy(has("Saw the lines."), chat.text())
  end)

  test("e2e: a failed command's card shows ✗, the command, its exit status and the tail of its output", function()
    local saved = vim.ui.select
    vim.ui.select = function(items, _, on_choice)
      for _, item in ipairs(items) do
        if item.optionId == "allow_once" then
          on_choice(item)
        end
      end
    end
    local turn = prompt("show util.py and missing.txt")
    local ok, err = pcall(H.wait, 30000, function()
      return turn.done
    end, "the turn")
    vim.ui.select = saved
    H.truthy(ok, err)
    eq("end_turn", turn.result.stopReason)
    local lines = vim.api.nvim_buf_get_lines(chat.bufnr, 0, -1, false)
    local row
    for i, line in ipairs(lines) do
      if line == "✗ $ cat util.py missing.txt  · exit 1" then
        row = i
      end
    end
    H.truthy(row, "the failed command's card:\n" .. chat.text())
    local body = table.concat(vim.list_slice(lines, row + 1, row + 3), "\n")
    H.truthy(body:find(chat.SHOWN .. "x = 2", 1, true), "the output's tail in view:\n" .. body)
    H.truthy(body:find("missing.txt: No such file or directory", 1, true), "the error in the tail:\n" .. body)
    H.truthy(has("It failed."), "the answer")
  end)

  test("e2e: #buffer, #file:a.txt and #diagnostics in a prompt reach the model as resources", function()
    vim.fn.writefile({ "A-FILE-MARKER" }, workspace .. "/a.txt")
    vim.cmd("edit " .. vim.fn.fnameescape(calc))
    local bufnr = vim.api.nvim_get_current_buf()
    local ns = vim.api.nvim_create_namespace("tandem-e2e-diagnostics")
    vim.diagnostic.set(ns, bufnr, { { lnum = 13, col = 11, severity = vim.diagnostic.severity.ERROR,
      message = "DIAG-MARKER division by b", source = "lint" } })
    local turn = prompt("compare #buffer with #file:a.txt given #diagnostics")
    local ok, err = pcall(H.wait, 30000, function()
      return turn.done
    end, "the turn")
    vim.diagnostic.reset(ns, bufnr)
    H.truthy(ok, err)
    eq("end_turn", turn.result.stopReason)
    H.truthy(has("(attached: calc.py, a.txt, diagnostics of calc.py)"), chat.text())
    H.truthy(has("Compared."), chat.text())
  end)

  test("e2e: a prompt sent while a turn runs is queued, shown, sent when the turn ends; :TandemCancel! drops one", function()
    -- The turn waits for the person's approval of a command while prompts are sent.
    local saved = vim.ui.select
    local approve
    vim.ui.select = function(items, _, on_choice)
      for _, item in ipairs(items) do
        if item.optionId == "allow_once" then
          approve = function()
            on_choice(item)
          end
        end
      end
    end
    local first = prompt("count the files")
    local ok, err = pcall(H.wait, 30000, function()
      return approve ~= nil
    end, "the approval")
    vim.ui.select = saved
    H.truthy(ok, err)
    local dropped = prompt("never mind this")
    eq({ "never mind this" }, tandem.state().queued)
    H.truthy(has("queued: never mind this"), chat.text())
    H.truthy(tandem.status():find("(1 queued)", 1, true), "status(): " .. tandem.status())
    vim.cmd("TandemCancel!")
    eq({}, tandem.state().queued)
    eq("the queued prompt was dropped", dropped.err)
    H.truthy(has("dropped the queued prompt: never mind this"), chat.text())
    local second = prompt("and then the lines")
    eq({ "and then the lines" }, tandem.state().queued)
    eq(nil, second.done)
    approve()
    H.wait(30000, function()
      return second.done
    end, "the queued prompt's turn")
    eq("end_turn", first.result.stopReason)
    eq(nil, second.err)
    eq("end_turn", second.result.stopReason)
    H.truthy(has("Counted."), chat.text())
    H.truthy(has("Lines too."), chat.text())
    eq({}, tandem.state().queued)
  end)

  test("e2e: :TandemSessions {words} filters the list; :TandemSessions! deletes the chosen one after asking", function()
    -- Sessions are kept in the sidecar's state directory, outside the workspace.
    local old = os.getenv("TANDEM_TEST_SESSIONS") .. "/old-one.jsonl"
    vim.fn.mkdir(os.getenv("TANDEM_TEST_SESSIONS"), "p")
    vim.fn.writefile({ vim.json.encode({ type = "meta", session_id = "old-one", cwd = workspace, model = "m",
      mode = "default", created_at = "2020-01-01T00:00:00Z" }) }, old)
    local saved = vim.ui.select
    local seen = {}
    vim.ui.select = function(list, opts, on_choice)
      seen[#seen + 1] = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item or tostring, list) }
      if opts.kind == "tandem.confirm" then
        on_choice("Delete")
      elseif opts.prompt:find("Delete", 1, true) then
        on_choice(list[1])
      else
        on_choice(nil)
      end
    end
    local ok, err = pcall(function()
      vim.cmd("TandemSessions old-ONE")
      H.wait(10000, function()
        return #seen == 1
      end, "the filtered list")
      eq(2, #seen[1].items, vim.inspect(seen[1].items))
      eq("+ new session", seen[1].items[1])
      H.truthy(seen[1].items[2]:find("old-one", 1, true), seen[1].items[2])
      vim.cmd("TandemSessions! old")
      H.wait(10000, function()
        return vim.fn.filereadable(old) == 0
      end, "the deleted session")
      eq({ "Delete a Tandem session", 1 }, { seen[2].prompt, #seen[2].items }, vim.inspect(seen[2]))
      H.truthy(seen[3].prompt:find("Delete the session", 1, true), seen[3].prompt)
    end)
    vim.ui.select = saved
    H.truthy(ok, err)
    local deleted, why
    tandem.delete_session(tandem.state().session_id, function(d, w)
      deleted, why = d, w
    end)
    eq(false, deleted, "the current session is not deleted")
    H.truthy(why:find("current session", 1, true), why)
  end)

  test("e2e: :TandemSetup writes [provider] to .tandem/config.toml, keeps the rest, shows tandem doctor, restarts the sidecar", function()
    local saved_select, saved_input = vim.ui.select, vim.ui.input
    local asked = {}
    vim.ui.select = function(items, opts, on_choice)
      asked[#asked + 1] = opts.prompt
      on_choice(items[1])
    end
    local answers = { ["Base URL: "] = os.getenv("TANDEM_TEST_BASE_URL"), ["Model: "] = "scripted" }
    vim.ui.input = function(opts, on_confirm)
      asked[#asked + 1] = opts.prompt
      on_confirm(answers[opts.prompt] or "SETUP_TEST_API_KEY")
    end
    local shown
    local ok, err = pcall(function()
      require("tandem.wizard").run({ on_done = function(lines)
        shown = table.concat(lines, "\n")
      end })
      H.wait(30000, function()
        return shown ~= nil
      end, "the doctor's report")
    end)
    vim.ui.select, vim.ui.input = saved_select, saved_input
    H.truthy(ok, err)
    eq(4, #asked, vim.inspect(asked))
    local written = table.concat(vim.fn.readfile(workspace .. "/.tandem/config.toml"), "\n")
    for _, line in ipairs({ "[tools]", 'profile = "full"', "[provider]", "max_retries = 1", 'kind = "openai"',
      'base_url = "' .. os.getenv("TANDEM_TEST_BASE_URL") .. '"', 'model = "scripted"', 'api_key_env = "SETUP_TEST_API_KEY"' }) do
      H.truthy(written:find(line, 1, true), line .. " in:\n" .. written)
    end
    H.truthy(shown:find("SETUP_TEST_API_KEY (NOT set", 1, true), shown)
    H.truthy(shown:find("Language servers", 1, true), "tandem doctor's findings:\n" .. shown)
    H.truthy(require("tandem.wizard").bufnr and vim.api.nvim_buf_get_name(require("tandem.wizard").bufnr):find("tandem://doctor", 1, true))
    -- The next command starts the sidecar again, with the file as it is now.
    local listed
    tandem.request("tandem/session/list", vim.empty_dict(), function(list_err, result)
      listed = { list_err, result }
    end)
    H.wait(30000, function()
      return listed ~= nil
    end, "the restarted sidecar")
    eq(nil, listed[1])
  end)
end
