-- Tests of the plugin's parts that need no sidecar: configuration, framing, hunk parsing,
-- the review UI on a real buffer (extmarks, keys, the reply), approvals and questions.
return function(H)
  local test, eq = H.test, H.eq
  local config = require("tandem.config")
  local rpc = require("tandem.rpc")
  local hunks = require("tandem.hunks")
  local review = require("tandem.review")
  local ask = require("tandem.ask")
  local tandem = require("tandem")

  test("config: defaults, and setup options become camelCase initializationOptions", function()
    local c = config.resolve({ provider = { kind = "openai", base_url = "http://h/v1", model = "m", api_key_env = "K" }, mode = "plan" })
    eq({ "tandem", "lsp" }, c.cmd)
    eq("ga", c.keymaps.accept)
    eq({ accept = "ga", reject = "gr", accept_all = "gA", reject_all = "gR", next = "]h", prev = "[h" }, c.keymaps)
    eq("]h", c.keymaps.next)
    eq({ mode = "plan", provider = { kind = "openai", baseUrl = "http://h/v1", model = "m", apiKeyEnv = "K" } }, config.init_options(c))
    eq("{}", vim.json.encode(config.init_options(config.resolve({}))))
    eq({ permissions = { deny = { "read(.env)" } } }, config.init_options(config.resolve({ permissions = { deny = { "read(.env)" } } })))
    eq({ "/opt/tandem", "lsp" }, config.resolve({ cmd = "/opt/tandem" }).cmd)
    eq({ "x", "lsp", "--flag" }, config.resolve({ cmd = { "x", "lsp", "--flag" } }).cmd)
    eq("gA", config.resolve({ keymaps = { accept = "y" } }).keymaps.accept_all)
    eq(20, c.chat.output_lines)
    eq(0, config.resolve({ chat = { output_lines = 0 } }).chat.output_lines)
  end)

  test("config: bad input gets a clear error", function()
    H.errors('`mode` = "fast" is not one of default, auto-edit, plan, yolo', function()
      config.resolve({ mode = "fast" })
    end)
    H.errors("unknown option `modes`", function()
      config.resolve({ modes = "plan" })
    end)
    H.errors("unknown option `provider.baseUrl`", function()
      config.resolve({ provider = { baseUrl = "x" } })
    end)
    H.errors('`provider.kind` = "gpt" is not one of openai, anthropic', function()
      config.resolve({ provider = { kind = "gpt" } })
    end)
    H.errors("`chat.output_lines` must be a whole number", function()
      config.resolve({ chat = { output_lines = -1 } })
    end)
    H.errors("unknown keymap `accpet`", function()
      config.resolve({ keymaps = { accpet = "a" } })
    end)
    H.errors("`cmd` must be a list", function()
      config.resolve({ cmd = {} })
    end)
  end)

  test("rpc: frames split anywhere and several per chunk are decoded", function()
    local decode = rpc.decoder()
    local a = rpc.encode({ id = 1, result = { x = "é" } })
    local b = rpc.encode({ method = "m", params = { 1, 2 } })
    local stream = a .. b
    local bodies = {}
    for i = 1, #stream, 7 do
      for _, body in ipairs(decode(stream:sub(i, i + 6))) do
        bodies[#bodies + 1] = vim.json.decode(body)
      end
    end
    eq({ { id = 1, result = { x = "é" } }, { method = "m", params = { 1, 2 } } }, bodies)
    eq(2, #rpc.decoder()(a .. b))
    H.errors("no Content-Length", function()
      rpc.decoder()("X-Other: 1\r\n\r\n{}")
    end)
  end)

  test("hunks: removed lines and added lines after the right old line", function()
    local p = hunks.parse({ oldStart = 1, oldLines = 4, newStart = 1, newLines = 5,
      patch = "@@ -1,4 +1,5 @@\n a\n-b\n+B\n+B2\n c\n d\n" })
    eq({ 2 }, p.removed)
    eq({ { after = 2, lines = { "B", "B2" } } }, p.added)
    eq(2, p.first)
    eq({ 1, 4 }, p.range)
    local top = hunks.parse({ oldStart = 0, oldLines = 0, newStart = 1, newLines = 1, patch = "@@ -0,0 +1 @@\n+new\n" })
    eq({ { after = 0, lines = { "new" } } }, top.added)
    eq(1, top.first)
    local tail = hunks.parse({ oldStart = 3, oldLines = 1, newStart = 3, newLines = 1,
      patch = "@@ -3 +3 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n" })
    eq({ 3 }, tail.removed)
    eq({ { after = 3, lines = { "y" } } }, tail.added)
    eq(1, hunks.at_line({ p, tail }, 1))
    eq(2, hunks.at_line({ { range = { 1, 2 } }, { range = { 10, 12 } } }, 5))
    eq(2, hunks.at_line({ { range = { 1, 2 } }, { range = { 10, 12 } } }, 20))
    H.errors("needs `patch`", function()
      hunks.parse({ oldStart = 1 })
    end)
  end)

  test("review: the reply names exactly the accepted hunks", function()
    eq({ outcome = { outcome = "selected", optionId = "allow_once", acceptedHunks = { "h2" } } },
      review.outcome({ { id = "h1", state = "rejected" }, { id = "h2", state = "accepted" } }))
    eq({ outcome = { outcome = "selected", optionId = "reject_once" } },
      review.outcome({ { id = "h1", state = "rejected" } }))
  end)

  local function review_fixture()
    local path = vim.fn.tempname() .. ".txt"
    vim.fn.writefile({ "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven" }, path)
    local params = {
      sessionId = "s1",
      toolCall = { toolCallId = "c1", title = "Edit fixture", kind = "edit", content = { {
        type = "diff", path = path, oldText = "", newText = "",
        hunks = {
          { id = "h1", oldStart = 1, oldLines = 3, newStart = 1, newLines = 3, patch = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" },
          { id = "h2", oldStart = 9, oldLines = 3, newStart = 9, newLines = 4, patch = "@@ -9,3 +9,4 @@\n nine\n ten\n eleven\n+twelve\n" },
        },
      } } },
      options = {},
    }
    return path, params
  end

  test("review: extmarks in `tandem-review`, keys a and r, reply with acceptedHunks", function()
    local path, params = review_fixture()
    local reply
    H.truthy(review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps), "a review")
    local bufnr = vim.fn.bufnr(path)
    eq(bufnr, vim.api.nvim_get_current_buf(), "the reviewed file is shown")
    local ns = vim.api.nvim_get_namespaces()["tandem-review"]
    eq(review.ns, ns)
    local marks = vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })
    local removed, added, labels = {}, {}, {}
    for _, m in ipairs(marks) do
      local d = m[4]
      if d.hl_group == "TandemRemoved" then
        removed[#removed + 1] = m[2]
      end
      for _, line in ipairs(d.virt_lines or {}) do
        added[#added + 1] = vim.trim(line[1][1])
        eq("TandemAdded", line[1][2])
        if line[2] then
          labels[#labels + 1] = "+" .. line[2][1]
        end
      end
      if d.virt_text then
        labels[#labels + 1] = m[2] .. d.virt_text[1][1]
      end
    end
    eq({ 1 }, removed, "row of the removed line")
    eq({ "+ TWO", "+ twelve" }, added)
    -- h1's label on its removed line (row 1); h2 only adds: its label on its added line.
    eq({ "1 h1: ga accept, gr reject ", "+ h2: ga accept, gr reject " }, labels)
    eq({ 2, 0 }, vim.api.nvim_win_get_cursor(0), "cursor on the first hunk")
    eq("h1", tandem.review().hunks[1].id)
    vim.api.nvim_feedkeys("ga", "x", false)
    eq("accepted", tandem.review().hunks[1].state)
    eq(nil, reply, "no reply before every hunk is decided")
    eq(11, vim.api.nvim_win_get_cursor(0)[1], "cursor moved to the next pending hunk")
    vim.api.nvim_feedkeys("gr", "x", false)
    eq({ outcome = { outcome = "selected", optionId = "allow_once", acceptedHunks = { "h1" } } }, reply)
    eq(nil, tandem.review())
    eq({}, vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, {}), "extmarks cleared")
    eq("", vim.fn.maparg("ga", "n"), "keys unmapped")
    vim.cmd("bwipeout! " .. bufnr)
  end)

  test("review: a decided hunk's mark sits on a line it changes, never on a context line", function()
    local path, params = review_fixture()
    local reply
    review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps)
    local bufnr = vim.fn.bufnr(path)
    -- h2 (it adds `twelve` below the context lines nine, ten, eleven) rejected first.
    vim.api.nvim_feedkeys("]h", "x", false)
    vim.api.nvim_feedkeys("gr", "x", false)
    eq("rejected", tandem.review().hunks[2].state)
    local on_rows, on_virtual = {}, {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })) do
      local d = m[4]
      if d.virt_text then
        on_rows[#on_rows + 1] = { m[2], d.virt_text[1][1] }
      end
      for _, line in ipairs(d.virt_lines or {}) do
        on_virtual[#on_virtual + 1] = { vim.trim(line[1][1]), line[1][2], line[2] and line[2][1] or "" }
      end
    end
    -- Nothing on rows 8-10 (nine, ten, eleven: context); h1's label on row 1 (`two`, removed).
    eq({ { 1, " h1: ga accept, gr reject " } }, on_rows)
    -- The rejected line stays in view, dimmed, with its label.
    eq({ { "+ TWO", "TandemAdded", "" }, { "+ twelve", "TandemRejected", " h2: rejected " } }, on_virtual)
    -- The cursor went on to the pending h1.
    vim.api.nvim_feedkeys("ga", "x", false)
    eq({ outcome = { outcome = "selected", optionId = "allow_once", acceptedHunks = { "h1" } } }, reply)
    vim.cmd("bwipeout! " .. bufnr)
  end)

  test("review: ]h [h move, A accepts all; closing the buffer rejects what is pending", function()
    local path, params = review_fixture()
    local reply
    review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps)
    vim.api.nvim_feedkeys("]h", "x", false)
    eq(11, vim.api.nvim_win_get_cursor(0)[1])
    vim.api.nvim_feedkeys("[h", "x", false)
    eq(2, vim.api.nvim_win_get_cursor(0)[1])
    vim.api.nvim_feedkeys("gA", "x", false)
    eq({ "h1", "h2" }, reply.outcome.acceptedHunks)
    vim.cmd("bwipeout! " .. vim.fn.bufnr(path))

    params = select(2, review_fixture())
    reply = nil
    review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps)
    tandem.accept("h2")
    vim.cmd("enew")
    eq({ outcome = { outcome = "selected", optionId = "allow_once", acceptedHunks = { "h2" } } }, reply)
    H.errors("no review is open", function()
      tandem.accept()
    end)
  end)

  test("preview: proposed lines map to the current text; columns count Unicode scalar values", function()
    local raw = {
      { id = "h1", oldStart = 1, oldLines = 3, newStart = 1, newLines = 3, patch = "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" },
      { id = "h2", oldStart = 9, oldLines = 3, newStart = 9, newLines = 4, patch = "@@ -9,3 +9,4 @@\n nine\n ten\n eleven\n+twelve\n" },
    }
    eq({ old = 1 }, hunks.new_line(raw, 1))
    eq({ added = true, after = 2, hunk = 1, nth = 1, text = "TWO" }, hunks.new_line(raw, 2), "drawn under the removed line")
    eq({ old = 3 }, hunks.new_line(raw, 3))
    eq({ old = 5 }, hunks.new_line(raw, 5), "between the hunks")
    eq({ old = 11 }, hunks.new_line(raw, 11))
    eq({ added = true, after = 11, hunk = 2, nth = 1, text = "twelve" }, hunks.new_line(raw, 12))
    -- Below a hunk that adds a line, every line moves down by one.
    local grow = { { id = "h1", oldStart = 1, oldLines = 1, newStart = 1, newLines = 2, patch = "@@ -1 +1,2 @@\n a\n+b\n" } }
    eq({ old = 4 }, hunks.new_line(grow, 5))
    eq(0, hunks.byte_col("é😀x", 0))
    eq(2, hunks.byte_col("é😀x", 1))
    eq(6, hunks.byte_col("é😀x", 2))
    eq(7, hunks.byte_col("é😀x", 99), "clamped")
  end)

  test("preview: the headline; not ready says so and is never 'no problems'", function()
    local preview = require("tandem.preview")
    eq(nil, preview.headline(nil))
    eq(nil, preview.of({ diagnostics = vim.NIL }))
    eq("Diagnostics preview: introduces 1 error: a.py:2: bad",
      preview.headline({ status = "ready", summary = "introduces 1 error: a.py:2: bad", files = {} }))
    eq("Diagnostics preview: diagnostics not ready, so nothing is known about errors",
      preview.headline({ status = "notReady", summary = "", files = {} }))
    H.truthy(preview.headline({ status = "notReady", summary = "no new errors or warnings", files = {} }):find("not ready", 1, true),
      "not ready first")
    eq("diagnostics of this file not ready (pyright: timed out): nothing is known about its errors",
      preview.file_line({ path = "/a.py", changed = true, server = "pyright", status = "notReady", reason = "timed out" }))
    eq(nil, preview.file_line({ path = "/a.py", changed = true, status = "ready" }))
    eq("1 new error, 2 new warnings", preview.counts({ { severity = "error" }, { severity = "warning" }, { severity = "warning" } }))
    -- A caller the change would break: at its place in that file's text, saying when.
    local items = preview.place_unchanged({ path = "/w/main.py", changed = false, server = "pyright", status = "ready",
      introduced = { { severity = "error", message = "no attribute increment", line = 2, column = 5, endLine = 2, endColumn = 14 } } },
      { "x = 1", "c.é.increment()" }, "Edit counter.py")
    eq({ 1, 5, 14, vim.diagnostic.severity.ERROR, "no attribute increment (if Edit counter.py is accepted)", "pyright" },
      { items[1].lnum, items[1].col, items[1].end_col, items[1].severity, items[1].message, items[1].source })
  end)

  test("review: the preview's problems are vim.diagnostic items in `tandem-review`, with a headline; gone afterwards", function()
    local path, params = review_fixture()
    params.diagnostics = {
      status = "ready",
      summary = "introduces 1 error: fixture.txt:2: TWO is undefined / introduces 1 warning",
      files = { {
        path = path, changed = true, server = "fake", status = "ready",
        introduced = {
          { severity = "error", message = "TWO is undefined", line = 2, column = 1, endLine = 2, endColumn = 4, hunk = "h1" },
          { severity = "warning", message = "ten is unused", line = 10, column = 1, endLine = 10, endColumn = 4, hunk = "h2" },
        },
      } },
    }
    local reply
    review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps)
    local bufnr = vim.fn.bufnr(path)
    local items = vim.diagnostic.get(bufnr, { namespace = review.ns })
    table.sort(items, function(a, b)
      return a.lnum < b.lnum
    end)
    eq(2, #items)
    -- The error is in an added line: it sits on the line the added line is drawn under.
    eq({ 1, vim.diagnostic.severity.ERROR, "proposed line 2: TWO is undefined" }, { items[1].lnum, items[1].severity, items[1].message })
    -- The warning is in a kept line (new line 10 is old line 10): at its place.
    eq({ 9, 0, 3, vim.diagnostic.severity.WARN, "ten is unused" },
      { items[2].lnum, items[2].col, items[2].end_col, items[2].severity, items[2].message })
    local headline, noted, labels = nil, nil, {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })) do
      for _, line in ipairs(m[4].virt_lines or {}) do
        if line[1][1]:find("Diagnostics preview", 1, true) then
          -- Wrapped at the window's width: the next virtual lines continue it.
          headline = line[1][1]
          eq(true, m[4].virt_lines_above)
          eq("DiagnosticError", line[1][2])
        elseif headline and m[4].virt_lines_above and line[1][2] == "DiagnosticError" then
          headline = headline .. " " .. line[1][1]
        elseif line[2] and line[2][2] == "TandemHunk" then
          -- A hunk that only adds lines has its label on its first added line.
          labels[#labels + 1] = line[2][1]
        elseif line[2] then
          noted = line[2][1]
        end
      end
      if m[4].virt_text then
        labels[#labels + 1] = m[4].virt_text[1][1]
      end
    end
    table.sort(labels)
    eq("Diagnostics preview: introduces 1 error: fixture.txt:2: TWO is undefined / introduces 1 warning", headline)
    eq("  E TWO is undefined", noted, "the note on the added line")
    -- The labels count them; a problem in a kept line gets its message at the line's end.
    eq({ " W ten is unused ", " h1: ga accept, gr reject | 1 new error ", " h2: ga accept, gr reject | 1 new warning " }, labels)
    eq(headline, tandem.review().diagnostics)
    eq("ready", tandem.review().diagnostics_status)
    vim.api.nvim_feedkeys("gR", "x", false)
    H.truthy(reply, "answered")
    eq({}, vim.diagnostic.get(bufnr, { namespace = review.ns }), "the preview's problems are gone")
    eq({}, vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, {}), "the headline is gone")
    vim.cmd("bwipeout! " .. bufnr)
  end)

  test("review: a headline above the first line is scrolled into view", function()
    local path = vim.fn.tempname() .. ".txt"
    vim.fn.writefile({ "one", "two", "three" }, path)
    local reply
    review.start({
      sessionId = "s1",
      toolCall = { toolCallId = "c1", title = "Edit top", kind = "edit", content = { {
        type = "diff", path = path, oldText = "", newText = "",
        hunks = { { id = "h1", oldStart = 1, oldLines = 2, newStart = 1, newLines = 2, patch = "@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n" } },
      } } },
      options = {},
      diagnostics = { status = "ready", summary = "no new errors or warnings", files = {} },
    }, function(r)
      reply = r
    end, config.defaults.keymaps)
    eq(1, vim.fn.winsaveview().topfill, "the headline's filler line is shown")
    tandem.reject_all()
    H.truthy(reply, "answered")
    vim.cmd("bwipeout! " .. vim.fn.bufnr(path))
  end)

  test("review: a preview that is not ready says so above the hunks, with no problems listed", function()
    local path, params = review_fixture()
    params.diagnostics = {
      status = "notReady",
      summary = "diagnostics not ready, so nothing is known about errors; not ready: fixture.txt (fake: timed out)",
      files = { { path = path, changed = true, server = "fake", status = "notReady", reason = "timed out" } },
    }
    review.start(params, function() end, config.defaults.keymaps)
    local bufnr = vim.fn.bufnr(path)
    eq({}, vim.diagnostic.get(bufnr, { namespace = review.ns }))
    local lines = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })) do
      if m[4].virt_lines_above then
        for _, line in ipairs(m[4].virt_lines) do
          lines[#lines + 1] = line[1][1]
        end
      end
    end
    -- Wrapped at the window's width (80 columns headless), not cut at its edge.
    eq({
      "Diagnostics preview: diagnostics not ready, so nothing is known about errors;",
      "not ready: fixture.txt (fake: timed out)",
      "diagnostics of this file not ready (fake: timed out): nothing is known about",
      "its errors",
    }, lines)
    eq("notReady", tandem.review().diagnostics_status)
    tandem.reject_all()
    eq(nil, tandem.review())
    vim.cmd("bwipeout! " .. bufnr)
  end)

  test("review: the buffer's own mappings of the review keys come back afterwards", function()
    local path, params = review_fixture()
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    local bufnr = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_keymap(bufnr, "n", "ga", ":let g:tandem_mine = 1<CR>", { noremap = true, silent = true })
    local reply
    review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps)
    vim.api.nvim_feedkeys("ga", "x", false)
    eq("accepted", tandem.review().hunks[1].state, "the review's `ga` while it is open")
    vim.api.nvim_feedkeys("gR", "x", false)
    H.truthy(reply, "answered")
    eq(":let g:tandem_mine = 1<CR>", vim.fn.maparg("ga", "n"), "the buffer's own `ga` is back")
    eq("", vim.fn.maparg("gr", "n"), "keys the buffer did not map stay unmapped")
    vim.cmd("bwipeout! " .. bufnr)
  end)

  test("review: configured keys, unknown hunk ids refused", function()
    local path, params = review_fixture()
    local reply
    review.start(params, function(r)
      reply = r
    end, vim.tbl_extend("force", config.defaults.keymaps, { accept = "y", reject = "n" }))
    H.errors("no hunk `h9` in the review (hunks: h1, h2)", function()
      tandem.accept("h9")
    end)
    vim.api.nvim_feedkeys("n", "x", false)
    vim.api.nvim_feedkeys("n", "x", false)
    eq({ outcome = { outcome = "selected", optionId = "reject_once" } }, reply)
    vim.cmd("bwipeout! " .. vim.fn.bufnr(path))
  end)

  test("review: two files in one review; ]h crosses files; a modified buffer keeps its window", function()
    local path1, params = review_fixture()
    local path2 = vim.fn.tempname() .. ".txt"
    vim.fn.writefile({ "alpha", "beta" }, path2)
    table.insert(params.toolCall.content, { type = "diff", path = path2, oldText = "", newText = "", hunks = {
      { id = "h3", oldStart = 1, oldLines = 2, newStart = 1, newLines = 2, patch = "@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta\n" },
    } })
    -- The window shows a modified scratch file and 'hidden' is off.
    local hidden = vim.o.hidden
    vim.o.hidden = false
    vim.cmd("enew")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "unsaved" })
    local scratch = vim.api.nvim_get_current_buf()
    local windows = #vim.api.nvim_tabpage_list_wins(0)
    local reply
    review.start(params, function(r)
      reply = r
    end, config.defaults.keymaps)
    eq(windows + 1, #vim.api.nvim_tabpage_list_wins(0), "a split for the review")
    eq(vim.fn.bufnr(path1), vim.api.nvim_get_current_buf())
    eq({ "h1", "h2", "h3" }, vim.tbl_map(function(h)
      return h.id
    end, tandem.review().hunks))
    eq({ path1, path2 }, tandem.review().files)
    vim.api.nvim_feedkeys("]h]h", "x", false)
    eq(vim.fn.bufnr(path2), vim.api.nvim_get_current_buf(), "]h went on to the second file")
    eq(nil, reply, "switching files is not closing the review")
    vim.api.nvim_feedkeys("ga", "x", false)
    vim.api.nvim_feedkeys("gr", "x", false)
    vim.api.nvim_feedkeys("ga", "x", false)
    eq({ outcome = { outcome = "selected", optionId = "allow_once", acceptedHunks = { "h2", "h3" } } }, reply)
    vim.cmd("close")
    vim.cmd("bwipeout! " .. scratch)
    vim.cmd("bwipeout! " .. vim.fn.bufnr(path1) .. " " .. vim.fn.bufnr(path2))
    vim.o.hidden = hidden
  end)

  test(":'<,'>Tandem attaches the selected lines", function()
    vim.cmd("enew")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "one", "two", "three" })
    local seen
    local original = tandem.prompt
    tandem.prompt = function(text, opts)
      seen = { text = text, selection = opts.selection }
    end
    local ok, err = pcall(vim.cmd, "2,3Tandem explain this")
    tandem.prompt = original
    H.truthy(ok, err)
    eq({ text = "explain this", selection = { path = "untitled", from = 2, to = 3, text = "two\nthree" } }, seen)
    vim.cmd("bwipeout!")
  end)

  local function with_ui(select, input, fn)
    local saved_select, saved_input = vim.ui.select, vim.ui.input
    vim.ui.select, vim.ui.input = select, input
    local ok, err = pcall(fn)
    vim.ui.select, vim.ui.input = saved_select, saved_input
    if not ok then
      error(err, 0)
    end
  end

  test("approval: a command asks with vim.ui.select, showing the command and the verdict", function()
    local params = {
      sessionId = "s1",
      toolCall = { title = "touch made.txt", content = { { type = "content", content = { type = "text",
        text = "$ touch made.txt\n\nin `/w`\nneeds approval: writes files" } } } },
      options = {
        { optionId = "allow_once", name = "Run", kind = "allow_once" },
        { optionId = "reject_once", name = "Don't run", kind = "reject_once" },
      },
    }
    local shown, reply
    with_ui(function(items, opts, on_choice)
      shown = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item, items) }
      on_choice(items[1])
    end, nil, function()
      ask.permission(params, function(r)
        reply = r
      end)
    end)
    H.truthy(shown.prompt:find("$ touch made.txt", 1, true), "the command in the prompt")
    H.truthy(shown.prompt:find("needs approval: writes files", 1, true), "the verdict in the prompt")
    eq({ "Run", "Don't run" }, shown.items)
    eq({ outcome = { outcome = "selected", optionId = "allow_once" } }, reply)
    with_ui(function(_, _, on_choice)
      on_choice(nil)
    end, nil, function()
      ask.permission(params, function(r)
        reply = r
      end)
    end)
    eq({ outcome = { outcome = "selected", optionId = "reject_once" } }, reply, "dismissed = rejected")
  end)

  test("askUser: options through vim.ui.select, free text through vim.ui.input, dismissal cancels", function()
    local params = { sessionId = "s1", questions = {
      { question = "Which color?", header = "Color", options = { { label = "red", description = "warm" }, { label = "blue" } }, multiSelect = false },
      { question = "Name?", options = {}, multiSelect = false },
      { question = "Which?", options = { { label = "x" }, { label = "y" } }, multiSelect = true },
    } }
    local reply, prompts = nil, {}
    with_ui(function(items, opts, on_choice)
      prompts[#prompts + 1] = opts.prompt .. " | " .. table.concat(vim.tbl_map(opts.format_item, items), ";")
      on_choice(items[2])
    end, function(opts, on_confirm)
      prompts[#prompts + 1] = opts.prompt
      on_confirm(#prompts == 2 and "Ada" or "x, y")
    end, function()
      ask.ask_user(params, function(r)
        reply = r
      end)
    end)
    eq({ answers = { { "blue" }, { "Ada" }, { "x", "y" } } }, reply)
    eq("Color: Which color? | red - warm;blue", prompts[1])
    with_ui(function(_, _, on_choice)
      on_choice(nil)
    end, nil, function()
      ask.ask_user(params, function(r)
        reply = r
      end)
    end)
    eq({ cancelled = true }, reply)
  end)

  test("chat: a replayed prompt shows its attachments by name, as the live one did", function()
    local chat = require("tandem.chat")
    chat.open("botright vsplit", true)
    chat.clear()
    chat.on_update({ sessionUpdate = "user_message_chunk", content = { type = "text", text = "look at this" } })
    chat.on_update({ sessionUpdate = "user_message_chunk",
      content = { type = "resource_link", uri = "file:///w/calc.py", name = "calc.py" } })
    chat.on_update({ sessionUpdate = "user_message_chunk",
      content = { type = "resource_link", uri = "https://example.com/doc", name = "doc" } })
    local text = chat.text()
    H.truthy(text:find("look at this\n\n(attached: calc.py, doc)", 1, true), text)
    H.truthy(not text:find("file:///", 1, true), text)
  end)

  test("chat: a replayed prompt that got no answer (cancelled) stays its own block, apart from the next", function()
    local chat = require("tandem.chat")
    chat.open("botright vsplit", true)
    chat.clear()
    chat.on_update({ sessionUpdate = "user_message_chunk", content = { type = "text", text = "think hard about calc" },
      messageId = "prompt-1" })
    chat.on_update({ sessionUpdate = "user_message_chunk", content = { type = "text", text = "hello after cancel" },
      messageId = "prompt-2" })
    chat.on_update({ sessionUpdate = "user_message_chunk",
      content = { type = "resource_link", uri = "file:///w/calc.py", name = "calc.py" }, messageId = "prompt-2" })
    local replayed = chat.text()
    eq("\n## You\nthink hard about calc\n\n## You\nhello after cancel\n\n(attached: calc.py)", replayed)
    -- Drawn as the live prompts were.
    chat.clear()
    chat.user("think hard about calc")
    chat.user("hello after cancel\n\n(attached: calc.py)")
    eq(replayed, chat.text())
  end)

  test("progress: the running turn's time and streamed tokens, in the chat and the statusline", function()
    local progress = require("tandem.progress")
    local p = progress.start(1000)
    eq("Waiting for the model… 12s", progress.label(p, 13500))
    progress.count(p, { sessionUpdate = "agent_thought_chunk", content = { type = "text", text = string.rep("x", 400) } })
    progress.count(p, { sessionUpdate = "agent_message_chunk", content = { type = "text", text = string.rep("y", 961) } })
    progress.count(p, { sessionUpdate = "user_message_chunk", content = { type = "text", text = string.rep("z", 4000) } })
    progress.count(p, { sessionUpdate = "tool_call", toolCallId = "c1", title = string.rep("x", 400) })
    eq("Working… 1m 05s · ~341 tokens", progress.label(p, 66000))
    eq("Waiting for your review… 1m 05s · ~341 tokens", progress.label(p, 66000, "your review"))
    eq("1m 05s ~341 tok", progress.short(p, 66000))
    -- The chat shows it under its last line, not in its text, and it follows the chat as it grows.
    local chat = require("tandem.chat")
    chat.clear()
    chat.user("slow one")
    chat.progress("⠋ " .. progress.label(p, 66000))
    local before = chat.text()
    local shown, row = chat.progress_shown()
    eq({ "⠋ Working… 1m 05s · ~341 tokens", vim.api.nvim_buf_line_count(chat.buffer()) - 1 }, { shown, row })
    chat.note("more")
    local _, moved = chat.progress_shown()
    eq(vim.api.nvim_buf_line_count(chat.buffer()) - 1, moved)
    H.truthy(not before:find("Working", 1, true), before)
    chat.progress(nil)
    eq(nil, chat.progress_shown())
  end)

  test("chat: tool cards: an edit's counts with its diff folded, a command's exit and tail, an answer, long output folded", function()
    local chat = require("tandem.chat")
    local function lines()
      return vim.api.nvim_buf_get_lines(chat.buffer(), 0, -1, false)
    end
    local function text_content(text)
      return { { type = "content", content = { type = "text", text = text } } }
    end
    local function index_of(line)
      for i, l in ipairs(lines()) do
        if l == line then
          return i
        end
      end
    end
    local win = chat.open("botright vsplit", true)
    local F, S = chat.FOLDED, chat.SHOWN
    -- An edit: `calc.py +1 −1`, its diff folded under it.
    local diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "e1", title = "Edit calc.py", kind = "edit", status = "pending",
      rawInput = { file_path = "calc.py" } })
    H.truthy(index_of("· Edit calc.py"), "the pending card:\n" .. chat.text())
    chat.on_update({ sessionUpdate = "tool_call_update", toolCallId = "e1", status = "completed", content = text_content("Edited"),
      rawOutput = { output = "Edited", metadata = { additions = 1, deletions = 1, hunks = 1, diff = diff } } })
    local row = index_of("✓ calc.py +1 −1")
    H.truthy(row, "the edit's card:\n" .. chat.text())
    eq(F .. "--- a/calc.py", lines()[row + 1])
    eq(F .. "+    return a + b", lines()[row + 6])
    eq(row + 1, vim.fn.foldclosed(row + 1), "the diff is folded")
    eq(row + 6, vim.fn.foldclosedend(row + 1))
    eq(-1, vim.fn.foldclosed(row), "the header is not")
    -- Several files.
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "e2", title = "Applied 2 edit(s)", kind = "edit", status = "in_progress" })
    chat.on_update({ sessionUpdate = "tool_call_update", toolCallId = "e2", status = "completed", rawOutput = { metadata = {
      files = { "b.py", "a.py" }, diffs = { ["a.py"] = { additions = 2, deletions = 0, diff = "@@ -1 +1,3 @@\n x\n+y\n+z\n" },
        ["b.py"] = { additions = 0, deletions = 1, diff = "@@ -1,2 +1 @@\n x\n-y\n" } } } } })
    H.truthy(index_of("✓ b.py +0 −1, a.py +2 −0"), chat.text())

    -- A failed command: ✗, the exit status, the tail in view and the earlier output folded.
    local long = {}
    for i = 1, 50 do
      long[#long + 1] = "out " .. i
    end
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "t2", title = "Run pytest", kind = "execute", status = "in_progress",
      rawInput = { command = "pytest -q" } })
    H.truthy(index_of("… $ pytest -q"), "the running command:\n" .. chat.text())
    local finished = { sessionUpdate = "tool_call_update", toolCallId = "t2", status = "completed", content = text_content(table.concat(long, "\n")),
      rawOutput = { output = table.concat(long, "\n"), metadata = { exitCode = 1, timedOut = false } } }
    chat.on_update(finished)
    -- A repeated final update (a resumed session, a late notification) does not print it again.
    chat.on_update(finished)
    row = index_of("✗ $ pytest -q  · exit 1")
    H.truthy(row, "the failed command's card:\n" .. chat.text())
    local body = vim.list_slice(lines(), row + 1, row + 50)
    eq(F .. "out 1", body[1])
    eq(S .. "out 31", body[31], "the tail in view")
    eq(S .. "out 50", body[50])
    eq(row + 1, vim.fn.foldclosed(row + 1), "the earlier output is folded")
    eq(row + 30, vim.fn.foldclosedend(row + 1))
    eq(-1, vim.fn.foldclosed(row + 31), "the tail is not")
    eq("", lines()[row + 51] or "", "the output once")
    -- A command that succeeded, and one without output.
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "t3", title = "echo hi", kind = "execute", status = "pending", rawInput = { command = "echo hi" } })
    chat.on_update({ sessionUpdate = "tool_call_update", toolCallId = "t3", status = "completed", content = text_content("hi"),
      rawOutput = { metadata = { exitCode = 0 } } })
    row = index_of("✓ $ echo hi  · exit 0")
    H.truthy(row, chat.text())
    eq(S .. "hi", lines()[row + 1])

    -- A resumed session replays a command as one finished `tool_call`, without its metadata.
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "t4", title = "Exit 2: make", kind = "execute", status = "failed",
      rawInput = { command = "make" }, content = text_content("make: *** No targets.") })
    row = index_of("✗ Exit 2: make")
    H.truthy(row, chat.text())
    eq(S .. "make: *** No targets.", lines()[row + 1])

    -- A question: the answer in view.
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "q1", title = "Ask: Which color?", kind = "other", status = "in_progress" })
    chat.on_update({ sessionUpdate = "tool_call_update", toolCallId = "q1", status = "completed", content = text_content("Q: Which color?\nA: red"),
      rawOutput = { metadata = { answers = { { "red" } } } } })
    row = index_of("✓ Ask: Which color?")
    eq({ S .. "Q: Which color?", S .. "A: red" }, { lines()[row + 1], lines()[row + 2] })
    eq(-1, vim.fn.foldclosed(row + 2))

    -- A read: its output folded whole, and a card's body goes under its own header even when
    -- another card came after it.
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "r1", title = "Read a.py", kind = "read", status = "pending" })
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "r2", title = "Read b.py", kind = "read", status = "pending" })
    chat.on_update({ sessionUpdate = "tool_call_update", toolCallId = "r1", status = "completed", content = text_content("1\ta\n2\tb") })
    row = index_of("✓ Read a.py")
    eq({ F .. "1\ta", F .. "2\tb", "", "· Read b.py" }, vim.list_slice(lines(), row + 1, row + 4))
    eq(row + 1, vim.fn.foldclosed(row + 2))

    -- A failure's reason in view.
    chat.on_update({ sessionUpdate = "tool_call", toolCallId = "w1", title = "Write x", kind = "edit", status = "pending" })
    chat.on_update({ sessionUpdate = "tool_call_update", toolCallId = "w1", status = "failed", content = text_content("blocked: plan mode") })
    row = index_of("✗ Write x")
    eq(S .. "blocked: plan mode", lines()[row + 1])
    -- The chat the end-to-end tests use starts empty.
    vim.api.nvim_win_close(win, true)
    vim.api.nvim_buf_delete(chat.bufnr, { force = true })
  end)

  test("status(): empty before a session; a long error opens a notice instead of a hit-enter prompt", function()
    eq("", tandem.status())
    eq(false, tandem.state().busy)
    local notice = require("tandem.notice")
    H.truthy(notice.builtin_notify(), "Neovim's own vim.notify")
    local long = "tandem: the provider answered 400 Bad Request: " .. string.rep("the model `x` does not exist; ", 12)
    local before = #vim.api.nvim_list_wins()
    notice.notify(long)
    local win = notice.open and notice.open.win
    H.truthy(win and vim.api.nvim_win_is_valid(win), "a floating notice")
    eq("editor", vim.api.nvim_win_get_config(win).relative)
    local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), " ")
    H.truthy(text:find("400 Bad Request", 1, true) and text:find("does not exist", 1, true), text)
    eq(before + 1, #vim.api.nvim_list_wins())
    notice.close()
    eq(before, #vim.api.nvim_list_wins())
    -- A replaced vim.notify (nvim-notify) shows it instead, whole.
    local saved = vim.notify
    local got
    vim.notify = function(message, level)
      got = { message, level }
    end
    notice.notify(long)
    vim.notify = saved
    eq({ long, vim.log.levels.ERROR }, got)
    eq(nil, notice.open)
  end)

  test("sessions: the filter matches every word in the title, id or date, in any case", function()
    local info = { sessionId = "a1b2", title = "Fix the failing test", updatedAt = "2026-11-26T07:00:00Z" }
    H.truthy(tandem.session_matches(info, ""))
    H.truthy(tandem.session_matches(info, "failing FIX"))
    H.truthy(tandem.session_matches(info, "a1b 2026-11"))
    eq(false, tandem.session_matches(info, "fix parser"))
    local ok, why
    tandem.delete_session("../x", function(o, w)
      ok, why = o, w
    end)
    eq(false, ok)
    H.truthy(why:find("not a session id", 1, true), why)
  end)

  test("context variables: #buffer, #file:path and #diagnostics become resources; the Visual key adds the selection", function()
    local path = vim.fn.tempname() .. ".py"
    vim.fn.writefile({ "x = 1", "y = 2" }, path)
    local other = vim.fn.tempname() .. ".txt"
    vim.fn.writefile({ "other" }, other)
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    local bufnr = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(bufnr, 1, 2, false, { "y = UNSAVED" })
    local ns = vim.api.nvim_create_namespace("tandem-test-diagnostics")
    vim.diagnostic.set(ns, bufnr, { { lnum = 1, col = 4, severity = vim.diagnostic.severity.ERROR, message = "undefined name",
      source = "pyflakes" } })
    local contexts = tandem.context_variables("compare #buffer with #file:" .. other .. ", see #diagnostics; issue#3 #buffer")
    eq(3, #contexts, vim.inspect(contexts))
    eq({ path, "x = 1\ny = UNSAVED" }, { contexts[1].path, contexts[1].text }, "the buffer's unsaved text")
    eq("other", contexts[2].text)
    H.truthy(contexts[3].text:find(":2:5: error: undefined name [pyflakes]", 1, true), contexts[3].text)
    local blocks = tandem.prompt_blocks("q", nil, contexts)
    eq({ type = "resource", resource = { uri = vim.uri_from_fname(path), text = "x = 1\ny = UNSAVED" } }, blocks[2])
    eq(vim.uri_from_fname(other), blocks[3].resource.uri)
    eq(vim.uri_from_fname(path) .. "#diagnostics", blocks[4].resource.uri)
    H.truthy(tandem.describe_context(contexts[3]):find("^diagnostics of "), tandem.describe_context(contexts[3]))
    H.errors("#file:nope-missing.txt: no such file", function()
      tandem.context_variables("see #file:nope-missing.txt")
    end)
    eq({}, tandem.context_variables("no variables here, #3 or #bufferish"))
    -- The Visual-mode key: the selected lines go with the next prompt.
    eq("<Plug>(TandemAddSelection)", vim.fn.maparg("<leader>ta", "x"))
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.api.nvim_feedkeys("Vj" .. vim.api.nvim_replace_termcodes("<leader>ta", true, false, true), "x", false)
    local attached = tandem.attached()
    eq(1, #attached)
    eq({ path, 1, 2, "x = 1\ny = UNSAVED" }, { attached[1].path, attached[1].from, attached[1].to, attached[1].text })
    tandem.clear_context()
    vim.diagnostic.reset(ns, bufnr)
    vim.cmd("bwipeout! " .. bufnr)
  end)

  test("setup: [provider] keys are set in config.toml, other keys and sections kept", function()
    local wizard = require("tandem.wizard")
    local lines = { "mode = \"default\"", "", "[provider]", "kind = \"anthropic\"", "max_retries = 1", "", "[tools]", "profile = \"full\"" }
    eq({ kind = "anthropic" }, wizard.read_provider(lines))
    eq({ "mode = \"default\"", "", "[provider]", "kind = \"openai\"", "max_retries = 1", "base_url = \"http://h/v1\"",
      "model = \"m \\\"q\\\"\"", "", "[tools]", "profile = \"full\"" },
      wizard.set_provider(lines, { kind = "openai", base_url = "http://h/v1", model = 'm "q"', api_key_env = "" }))
    eq({ "[tools]", "profile = \"full\"", "", "[provider]", "kind = \"openai\"", "api_key_env = \"K\"" },
      wizard.set_provider({ "[tools]", "profile = \"full\"" }, { kind = "openai", api_key_env = "K" }))
    eq({ "[provider]", "model = \"x\"" }, wizard.set_provider({}, { model = "x" }))
    eq({ model = 'm "q"' }, wizard.read_provider({ "[provider]", 'model = "m \\"q\\""' }))
    eq(2, vim.fn.exists(":TandemSetup"))
  end)

  test("API: bad input to prompt and set_mode is refused with a clear message", function()
    H.errors("the prompt is empty", function()
      tandem.prompt("  ")
    end)
    H.errors('unknown mode "fast" (default, auto-edit, plan, yolo)', function()
      tandem.set_mode("fast")
    end)
    H.errors("the model name is empty", function()
      tandem.set_model("  ")
    end)
    local blocks = tandem.prompt_blocks("explain", { path = "/w/a.lua", from = 3, to = 4, text = "x\ny" })
    eq({ { type = "text", text = "explain" }, { type = "resource", resource = { uri = "file:///w/a.lua#L3-4", text = "x\ny" } } }, blocks)
  end)

  test("commands, highlight groups and the missing-binary error", function()
    for _, name in ipairs({ "Tandem", "TandemChat", "TandemCancel", "TandemMode", "TandemModel", "TandemSessions", "TandemInfo", "TandemCheckpoints",
      "TandemUndo", "TandemRedo", "TandemCompact", "TandemAdd" }) do
      eq(2, vim.fn.exists(":" .. name), name)
    end
    for group, target in pairs({ TandemAdded = "DiffAdd", TandemRemoved = "DiffDelete", TandemHunk = "DiffText",
      TandemCardOk = "String", TandemCardFailed = "DiagnosticError", TandemCardRunning = "Comment" }) do
      -- Where the link ends (String links on to Constant in some versions).
      eq(vim.fn.synIDtrans(vim.fn.hlID(target)), vim.fn.synIDtrans(vim.fn.hlID(group)), group)
    end
    eq({ "default", "auto-edit", "plan", "yolo" }, vim.fn.getcompletion("TandemMode ", "cmdline"))
    eq({ "plan" }, vim.fn.getcompletion("TandemMode pl", "cmdline"))
    local client = require("tandem.client")
    H.errors("`/nonexistent/tandem` is not executable", function()
      client.start(config.resolve({ cmd = { "/nonexistent/tandem", "lsp" } }), { requests = {}, notifications = {} })
    end)
  end)

  test("doc/tandem.txt: help tags build without duplicates and :help finds the commands", function()
    local root = vim.fn.tempname()
    vim.fn.mkdir(root .. "/doc", "p")
    local doc = vim.api.nvim_get_runtime_file("doc/tandem.txt", false)[1]
    vim.fn.writefile(vim.fn.readfile(doc), root .. "/doc/tandem.txt")
    vim.cmd("helptags " .. root .. "/doc")
    vim.opt.rtp:prepend(root)
    for _, tag in ipairs({ ":Tandem", ":TandemMode", ":TandemModel", "tandem-review", "tandem-setup", "hl-TandemAdded", "tandem-api",
      ":TandemCheckpoints", ":TandemUndo", ":TandemRedo", ":TandemCompact", "tandem-checkpoints", ":TandemAdd",
      "tandem-chat-code", ":TandemSetup", ":TandemSessions", "tandem-variables", "tandem-statusline", "tandem-chat-cards",
      "tandem-keys-migration", "hl-TandemCardOk", "hl-TandemCardFailed", "tandem-preview" }) do
      vim.cmd("help " .. tag)
      eq("tandem.txt", vim.fn.expand("%:t"), tag)
      vim.cmd("helpclose")
    end
  end)

  if vim.fn.has("nvim-0.8") == 1 then
    test(":checkhealth tandem reports the sidecar", function()
      vim.cmd("checkhealth tandem")
      local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
      H.truthy(text:find("tandem", 1, true) and text:find("Neovim", 1, true), ":checkhealth output:\n" .. text)
      vim.cmd("bwipeout!")
    end)
  end

  test("checkpoints: a stretch's files, one line per checkpoint, the plan with conflicts, the choices", function()
    local cp = require("tandem.checkpoints")
    local list = {
      { id = 1, kind = "beforeTurn", turn = 1, time = "2025-05-04T10:12:00Z" },
      { id = 2, kind = "beforeTool", turn = 1, toolCallId = "c2", tool = "edit", time = "2025-05-04T10:12:03Z", files = { "calc.py" } },
      { id = 3, kind = "beforeTool", turn = 1, toolCallId = "c3", tool = "write", time = "2025-05-04T10:12:04Z", files = { "new.txt", "calc.py" } },
      { id = 4, kind = "afterTurn", turn = 1, time = "2025-05-04T10:12:09Z", files = { "util.py" } },
      { id = 5, kind = "beforeTurn", turn = 2, time = "2025-05-04T10:13:00Z" },
    }
    eq({ "calc.py", "new.txt" }, cp.span_files(list, 1), "what turn 1 changed")
    eq({ "new.txt", "calc.py" }, cp.span_files(list, 3))
    eq({ "util.py" }, cp.span_files(list, 4), "what the person changed after the turn")
    eq({}, cp.span_files(list, 5))
    local line = cp.describe(list, 2)
    H.truthy(line:find("^#2  turn 1  ") and line:find("before edit c2", 1, true) and line:find("changed: calc.py, new.txt", 1, true), line)
    H.truthy(cp.describe(list, 1):find("start of turn  (changed: calc.py, new.txt)", 1, true), cp.describe(list, 1))
    H.truthy(cp.describe(list, 5):find("(no changes)", 1, true), cp.describe(list, 5))
    local after = vim.tbl_extend("force", list[2], { kind = "afterTool", files = {} })
    H.truthy(cp.describe({ after }, 1):find("after edit c2", 1, true), cp.describe({ after }, 1))
    H.truthy(cp.local_time("2025-05-04T10:12:03Z"):find("%d%d:12:03$"), cp.local_time("2025-05-04T10:12:03Z"))
    eq("not a time", cp.local_time("not a time"))

    local lines, plain = cp.plan_lines("Undo turn 1", {
      restored = { "calc.py", "util.py" }, conflicts = { "util.py" }, skipped = { "big.bin" },
      notCovered = { "build/out.log" },
      diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n",
    })
    eq({ "calc.py" }, plain)
    eq("# Undo turn 1", lines[1])
    eq("Restores (1): calc.py", lines[3])
    eq("CONFLICT, changed by you since (1), kept unless you include them: util.py", lines[4])
    eq("Not restored (too large, not text, or now a symbolic link): big.bin", lines[5])
    eq("Not covered by undo (changed by the agent, left out of checkpoints): build/out.log", lines[6])
    eq("--- a/calc.py", lines[8])
    local choices = cp.choices(plain, { "util.py" })
    eq({ "Restore 1 file(s), keep your changes", "Restore 2 file(s), your changes to util.py too", "Cancel" },
      vim.tbl_map(function(c)
        return c.label
      end, choices))
    eq({ false, true }, { choices[1].include, choices[2].include })
    eq(1, #cp.choices({}, {}), "only Cancel when there is nothing")
    eq("compacted the conversation: 51234 → 9120 tokens (older turns summarised)",
      cp.compact_message({ tokensBefore = 51234, tokensAfter = 9120, summarized = true }))
  end)

  test("usage: short counts and the statusline's meter", function()
    local usage = require("tandem.usage")
    eq({ "950", "1.2k", "12.3k", "128k", "1.5M" }, vim.tbl_map(usage.compact, { 950, 1234, 12345, 128000, 1500000 }))
    eq("12.3k/128k (10%) Σ 40.5k", usage.format({ inputTokens = 12345, outputTokens = 200, cacheReadTokens = 0,
      totalTokens = 40500, contextWindow = 128000 }))
    eq("900 Σ 910", usage.format({ inputTokens = 900, outputTokens = 10, cacheReadTokens = 0, totalTokens = 910 }))
    eq("Σ 1.2k", usage.format({ inputTokens = 0, outputTokens = 0, cacheReadTokens = 0, totalTokens = 1230, contextWindow = 32768 }))
    eq("", usage.format(nil))
    eq("", usage.format({ inputTokens = 0, outputTokens = 0, cacheReadTokens = 0, totalTokens = 0 }))
    -- The session's estimated cost, where the sidecar knows the model's price.
    eq("900 Σ 910 $0.12", usage.format({ inputTokens = 900, outputTokens = 10, cacheReadTokens = 0, totalTokens = 910,
      session = { inputTokens = 900, outputTokens = 10, cacheReadTokens = 0, reasoningTokens = 0, costUsd = 0.1234 } }))
    eq({ "$0", "$0.004", "$0.01", "$2.00" }, vim.tbl_map(usage.dollars, { 0, 0.004, 0.0123, 2 }))
  end)

  test("chat: code blocks are found, gy copies the one under or above the cursor, gp inserts it", function()
    local chat = require("tandem.chat")
    chat.clear()
    chat.on_update({ sessionUpdate = "agent_message_chunk", content = { type = "text",
      text = "First:\n\n```lua\nlocal x = 1\n```\n\nThen:\n\n~~~\nplain\n  ```not a fence end\n~~~\n\nDone." } })
    local blocks = chat.code_blocks()
    eq(2, #blocks)
    eq({ "local x = 1" }, blocks[1].lines)
    eq("lua", blocks[1].lang)
    eq({ "plain", "  ```not a fence end" }, blocks[2].lines)
    local text = vim.split(chat.text(), "\n", { plain = true })
    local last = #text
    eq(blocks[2].lines, chat.code_block_at(last).lines, "below every block: the last one above")
    eq(blocks[1].lines, chat.code_block_at(blocks[1].first + 1).lines, "inside the first block")
    H.errors("no code block under or above the cursor", function()
      chat.code_block_at(1)
    end)
    -- The keys, from the chat's window: gy yanks, gp inserts into the previous window's buffer.
    vim.cmd("enew")
    local target = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(target, 0, -1, false, { "before", "after" })
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    local win = chat.open("botright split", true)
    vim.api.nvim_win_set_cursor(win, { blocks[1].first + 1, 0 })
    vim.api.nvim_feedkeys("gy", "x", false)
    eq("local x = 1\n", vim.fn.getreg('"'))
    eq("V", vim.fn.getregtype('"'))
    vim.api.nvim_feedkeys("gp", "x", false)
    eq({ "before", "local x = 1", "after" }, vim.api.nvim_buf_get_lines(target, 0, -1, false))
    eq(target, vim.api.nvim_get_current_buf(), "the cursor went to the inserted code")
    eq({ 2, 0 }, vim.api.nvim_win_get_cursor(0))
    vim.api.nvim_win_close(win, true)
    vim.cmd("bwipeout!")
  end)

  test(":TandemAdd adds lines or the file to the next prompt; :TandemAdd! drops them", function()
    vim.cmd("enew")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "one", "two", "three" })
    vim.cmd("2,3TandemAdd")
    eq({ { path = "untitled", from = 2, to = 3, text = "two\nthree" } }, tandem.attached())
    vim.cmd("TandemAdd!")
    eq({}, tandem.attached())
    local file = vim.fn.tempname() .. ".txt"
    vim.cmd("file " .. vim.fn.fnameescape(file))
    vim.cmd("TandemAdd")
    eq({ { path = file, text = "one\ntwo\nthree" } }, tandem.attached())
    H.truthy(require("tandem.chat").text():find("with the next prompt: ", 1, true), "the chat's note")
    local blocks = tandem.prompt_blocks("explain", nil, tandem.attached())
    eq({ type = "resource", resource = { uri = vim.uri_from_fname(file), text = "one\ntwo\nthree" } }, blocks[2])
    tandem.clear_context()
    vim.cmd("bwipeout!")
    vim.cmd("enew")
    vim.bo.buftype = "nofile"
    local notified
    local saved = vim.notify
    vim.notify = function(message)
      notified = message
    end
    vim.cmd("TandemAdd")
    vim.notify = saved
    H.truthy(notified and notified:find("this buffer is not a file", 1, true), tostring(notified))
    eq({}, tandem.attached())
    vim.cmd("bwipeout!")
  end)

  test("#url: and #symbol: in a prompt: a link the agent may fetch; a symbol waits for the language servers", function()
    local contexts = tandem.context_variables("read #url:https://example.com/x, then #symbol:Counter.increment and #url:https://example.com/x")
    eq({ { uri = "https://example.com/x", link = true, label = "https://example.com/x" }, { symbol = "Counter.increment" } }, contexts)
    eq({ type = "resource_link", uri = "https://example.com/x", name = "https://example.com/x" },
      tandem.prompt_blocks("q", nil, { contexts[1] })[2])
    H.errors("#url:ftp://example.com: not an http or https address", function()
      tandem.context_variables("see #url:ftp://example.com")
    end)
    -- Without a #symbol:, nothing is asked: the contexts come back at once.
    local got
    tandem.resolve_symbols({ contexts[1] }, function(err, resolved)
      got = { err, resolved }
    end)
    eq({ nil, { contexts[1] } }, got)
  end)

  test("#symbol: the best match among the language server's symbols, and its definition's lines", function()
    local symbols = require("tandem.symbols")
    local parsed = symbols.parse({ count = 4, symbols = {
      { name = "counter", kind = "variable", path = "shop/main.py", line = 5, character = 5, endLine = 5 },
      { name = "Counter", kind = "class", path = "shop/counter.py", line = 1, character = 7, endLine = 1 },
      { name = "increment", kind = "method", path = "shop/counter.py", line = 7, character = 9, endLine = 7, container = "Counter" },
      { name = "increment", kind = "function", path = "other.py", line = 1, character = 5, endLine = 1 },
      { name = "", path = "x.py", line = 1 },
      "junk",
    } })
    eq(4, #parsed)
    eq("class", symbols.best(parsed, "Counter").kind, "the exact name first")
    eq("variable", symbols.best(parsed, "counter").kind, "the exact name first, in its case")
    eq("shop/counter.py", symbols.best(parsed, "count").path, "a name starting with it; the class first")
    eq("shop/counter.py", symbols.best(parsed, "Counter.increment").path, "the container named wins")
    eq("other.py", symbols.best(parsed, "increment").path, "equally good: the shorter path")
    eq(nil, symbols.best(parsed, "decrement"))
    eq({ "Counter", "increment" }, { symbols.split("Counter::increment") })
    eq({ nil, "increment" }, { symbols.split("increment") })

    local py = { "class Counter:", '    """A counter."""', "", "    @property", "    def value(self,",
      "              x: int = (1)) -> int:", "        # the value", "        return self.count", "",
      "    def reset(self): return 0", "", "LIMIT = {", '    "a": 1,', "}", "counter = Counter()" }
    eq({ 1, 10 }, { symbols.extent(py, 1, nil, "a.py") })
    eq({ 4, 8 }, { symbols.extent(py, 5, nil, "a.py") })
    eq({ 10, 10 }, { symbols.extent(py, 10, nil, "a.py") })
    eq({ 12, 14 }, { symbols.extent(py, 12, nil, "a.py") })
    eq({ 15, 15 }, { symbols.extent(py, 15, 15, "a.py") })
    eq({ 1, 3 }, { symbols.extent(py, 1, 3, "a.py") }, "a range the server gave over several lines wins")
    local rs = { "/// Adds.", "#[inline]", "pub fn add<'a>(a: &'a str, b: i32) -> i32", "where", "    i32: Copy,", "{",
      '    let s = "}"; // }', "    let c = '{';", "    b", "}", "pub const X: i32 = 5;" }
    eq({ 1, 10 }, { symbols.extent(rs, 3, nil, "lib.rs") })
    eq({ 11, 11 }, { symbols.extent(rs, 11, nil, "lib.rs") })
    local ts = { "export class A extends B {", "  f(): string { return `}`; }", "}", "export const g = (a: number) =>",
      "  a + 1;", "const h = 1", "function k() {}" }
    eq({ 1, 3 }, { symbols.extent(ts, 1, nil, "a.ts") })
    eq({ 4, 5 }, { symbols.extent(ts, 4, nil, "a.ts") })
    eq({ 6, 6 }, { symbols.extent(ts, 6, nil, "a.ts") })

    local root = vim.fn.tempname()
    vim.fn.mkdir(root .. "/shop", "p")
    vim.fn.writefile(py, root .. "/shop/counter.py")
    local context = symbols.context({ name = "value", kind = "method", path = "shop/counter.py", line = 5 }, root)
    eq(vim.uri_from_fname(root .. "/shop/counter.py") .. "#L4-L8", context.uri)
    eq(table.concat(vim.list_slice(py, 4, 8), "\n"), context.text)
    H.truthy(context.label:find("^value %(.*counter%.py:4%-8%)$"), context.label)
    eq({ type = "resource", resource = { uri = context.uri, text = context.text, mimeType = "text/plain" } },
      tandem.prompt_blocks("q", nil, { context })[2])

    -- What the language servers answer decides: a match, nothing, an error.
    local answers = {}
    local function request(_, params, callback)
      answers[#answers + 1] = params.arguments
      callback(nil, { metadata = { symbols = { { name = "value", kind = "method", path = "shop/counter.py", line = 5 } } } })
    end
    local got
    symbols.resolve(request, "value", root .. "/shop/counter.py", root, function(err, c)
      got = { err, c and c.uri }
    end)
    eq({ nil, context.uri }, got)
    eq({ { operation = "workspace_symbols", query = "value", file_path = root .. "/shop/counter.py" } }, answers)
    symbols.resolve(function(_, params, callback)
      if params.arguments.file_path then
        callback(nil, { error = "no language server covers .md files" })
      else
        callback(nil, { metadata = { count = 0, symbols = {} } })
      end
    end, "Nope", "/w/notes.md", root, function(err)
      got = err
    end)
    eq("tandem: #symbol:Nope: no symbol of that name in the workspace: the language server did not answer (no language server covers .md files)", got)
    vim.fn.delete(root, "rf")
  end)

  test("models: the model option of configOptions, its labels in vim.ui.select, :TandemModel's completion", function()
    local models = require("tandem.models")
    local function result(current, choices, err)
      local options = {}
      for i, value in ipairs(choices) do
        options[i] = { value = value, name = value == "claude-sonnet-4-5" and "Claude Sonnet 4.5" or value,
          description = i == 1 and "the configured model" or vim.NIL }
      end
      return { modelsError = err, configOptions = {
        { type = "select", id = "mode", currentValue = "default", options = { { value = "default", name = "Default" } } },
        { type = "select", id = "model", currentValue = current, options = options },
      } }
    end
    local got = models.from_result(result("gpt-4o-mini", { "scripted", "gpt-4.1", "gpt-4o-mini" }))
    eq({ current = "gpt-4o-mini", choices = {
      { value = "scripted", name = "scripted", description = "the configured model" },
      { value = "gpt-4.1", name = "gpt-4.1" },
      { value = "gpt-4o-mini", name = "gpt-4o-mini" },
    } }, got)
    eq("scripted — the configured model", models.label(got.choices[1], got.current))
    eq("gpt-4o-mini  ← current", models.label(got.choices[3], got.current))
    local anthropic = models.from_result(result("claude-sonnet-4-5", { "claude-opus-4-1", "claude-sonnet-4-5" }))
    eq("Claude Sonnet 4.5 (claude-sonnet-4-5)  ← current", models.label(anthropic.choices[2], anthropic.current))
    -- The session's model is always a choice; the reason a provider's list is missing is kept.
    local short = models.from_result(result("my-finetune", { "scripted" }, "could not list the models at http://h/v1/models: HTTP 404"))
    eq({ "my-finetune", "scripted" }, vim.tbl_map(function(c)
      return c.value
    end, short.choices))
    eq("could not list the models at http://h/v1/models: HTTP 404", short.error)
    eq(nil, models.from_result(result("m", { "m" }, vim.NIL)).error)
    eq(nil, models.from_result({ configOptions = {} }))
    eq(nil, models.from_result(nil))
    -- Completion: the choices listed, else the names known; each once.
    eq({ "gpt-4.1", "gpt-4o-mini" }, models.complete("gpt", got, { "gpt-4o-mini" }))
    eq({ "scripted", "gpt-4.1", "gpt-4o-mini" }, models.complete("", got, {}))
    eq({ "mine", "scripted" }, models.complete("", nil, { "mine", "scripted", "mine" }))
  end)

  test("errors about the configuration name the setup() option to set, and :TandemSetup", function()
    local advice = require("tandem.advice")
    local key = advice.for_error("the provider at https://api.example/v1 refused the API key (HTTP 401). No API key is configured: set TANDEM_API_KEY_ENV (or api_key_env under [provider] in .tandem/config.toml) to the name of the environment variable that holds it.")
    eq('To fix it, set the environment variable that holds the API key: require("tandem").setup({ provider = { api_key_env = "ANTHROPIC_API_KEY" } }), or run :TandemSetup.', vim.split(key, "\n")[1])
    H.truthy(advice.for_error("no model provider answered at http://127.0.0.1:11434/v1 (connection refused)"):find("base_url", 1, true))
    H.truthy(advice.for_error("the provider at http://x rejected the request for model gpt-9 (HTTP 404: model not found)"):find('model = "', 1, true))
    H.truthy(advice.for_error("unknown provider kind `gemini`"):find('kind = "openai"', 1, true))
    eq('To fix it, set where the tandem binary is: require("tandem").setup({ cmd = { "/path/to/tandem", "lsp" } }).',
      advice.for_error("tandem: `tandem` is not executable (is it on PATH?); set `cmd` in require(\"tandem\").setup()"))
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. "/.tandem", "p")
    vim.fn.writefile({ "[tools]" }, dir .. "/.tandem/config.toml")
    eq("The file: :edit " .. dir .. "/.tandem/config.toml",
      advice.for_error("unknown key `profil` in [tools] of " .. dir .. "/.tandem/config.toml: did you mean `profile`?"))
    eq(nil, advice.for_error("the provider at http://x is rate-limiting requests for model m (HTTP 429)"))
    eq("plain", advice.explain("plain"))
  end)
  test("the review's headline wraps at the window's width instead of being cut", function()
    local rv = require("tandem.review")
    eq({ "Diagnostics preview:", "introduces 1 error:", "shop/main.py:9: Type" }, rv.wrap("Diagnostics preview: introduces 1 error: shop/main.py:9: Type", 20))
    eq({ "abcdefghij", "klm" }, rv.wrap("abcdefghijklm", 10))
    eq({ "" }, rv.wrap("", 30))
  end)
  test("advice names the setting in use and only a file that exists", function()
    local advice = require("tandem.advice")
    local refused = "the provider at https://api.example/v1 refused the API key (HTTP 401) from OPENAI_API_KEY"
    local said = advice.for_error(refused, { provider = { kind = "openai", api_key_env = "OPENAI_API_KEY" } })
    H.truthy(said:find("OPENAI_API_KEY", 1, true), said)
    eq(nil, said:find("ANTHROPIC", 1, true))
    -- Without api_key_env, the example is the provider kind's usual variable.
    said = advice.for_error("refused the API key (HTTP 401)", { provider = { kind = "openai" } })
    H.truthy(said:find('api_key_env = "OPENAI_API_KEY"', 1, true), said)
    -- A file that does not exist is not offered to :edit; :TandemSetup writes it.
    said = advice.for_error("unknown key `x` in [tools] of /nonexistent/.tandem/config.toml")
    eq(nil, said:find(":edit", 1, true))
    H.truthy(said:find("TandemSetup", 1, true), said)
  end)
  test("slash: :Tandem completes /name from tandem/commands/list, only as the first word", function()
    local slash = require("tandem.slash")
    local commands = slash.from_result({ commands = {
      { name = "context", description = "What is in force" },
      { name = "review", description = "Review a file", input = { hint = "<file>" } },
      { name = "release", description = "Cut a release" },
    } })
    eq({ name = "review", description = "Review a file", hint = "<file>" }, commands[2])
    eq({ "/review", "/release" }, slash.complete("/re", "Tandem /re", commands))
    eq({ "/context", "/review", "/release" }, slash.complete("/", "Tandem /", commands))
    eq({}, slash.complete("/re", "Tandem fix /re", commands))
    eq({}, slash.complete("re", "Tandem re", commands))
    eq({}, slash.complete("/re", "Tandem /re", nil))
    eq({ "/review" }, slash.complete("/rev", "'<,'>Tandem /rev", commands))
  end)
end
