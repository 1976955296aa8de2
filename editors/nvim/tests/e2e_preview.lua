-- End to end: a review whose permission request carries a diagnostics preview, from the real
-- sidecar (TANDEM_TEST_BIN) with real pyright, the scripted provider (TANDEM_TEST_BASE_URL) and
-- a copy of tests/fixtures/python (TANDEM_TEST_WORKSPACE). The provider's turns are scripted in
-- tests/e2e/nvim.rs, in the order of these tests. With TANDEM_TEST_PREVIEW=notReady the
-- workspace gives pyright no time to answer, and the review must say that nothing is known.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")
  local chat = require("tandem.chat")
  local review = require("tandem.review")
  local workspace = os.getenv("TANDEM_TEST_WORKSPACE")
  local main = workspace .. "/shop/main.py"

  H.setup_sidecar()

  local prompt = H.prompt

  if os.getenv("TANDEM_TEST_PREVIEW") == "notReady" then
    test("e2e preview: a preview that is not ready says so in the review, with no problems listed", function()
      vim.cmd("edit " .. vim.fn.fnameescape(main))
      local bufnr = vim.api.nvim_get_current_buf()
      local turn = prompt("return a string from count_to")
      H.wait(60000, function()
        return tandem.review() ~= nil
      end, "the review")
      local r = tandem.review()
      eq("notReady", r.diagnostics_status, r.diagnostics)
      H.truthy(r.diagnostics:find("Diagnostics preview: diagnostics not ready, so nothing is known about errors", 1, true) == 1,
        r.diagnostics)
      eq({}, vim.diagnostic.get(bufnr, { namespace = review.ns }))
      local shown = {}
      for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })) do
        if m[4].virt_lines_above then
          for _, line in ipairs(m[4].virt_lines) do
            shown[#shown + 1] = line[1][1]
          end
        end
      end
      -- Wrapped at the window's width: every virtual line above, joined, is the headline and then
      -- the file's own line.
      local joined = table.concat(shown, " ")
      eq(r.diagnostics, joined:sub(1, #r.diagnostics), "the headline above the hunk")
      H.truthy(joined:sub(#r.diagnostics + 2):find("^diagnostics of this file not ready %(pyright: "), vim.inspect(shown))
      for _, line in ipairs(shown) do
        H.truthy(vim.fn.strdisplaywidth(line) < vim.api.nvim_win_get_width(0), "a line wider than the window: " .. line)
      end
      vim.api.nvim_feedkeys("gr", "x", false)
      H.wait(30000, function()
        return turn.done
      end, "the end of the turn")
      eq(nil, tandem.review())
      eq({}, vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, {}), "the headline is gone")
    end)
    return
  end

  test("e2e preview: pyright's new error shows in the review (vim.diagnostic, headline, chat); r clears it", function()
    local original = vim.fn.readfile(main)
    vim.cmd("edit " .. vim.fn.fnameescape(main))
    local bufnr = vim.api.nvim_get_current_buf()
    local turn = prompt("return a string from count_to")
    -- pyright starts for the preview: generous, this is not a timing test.
    H.wait(120000, function()
      return tandem.review() ~= nil
    end, "the review")
    local r = tandem.review()
    eq("ready", r.diagnostics_status, r.diagnostics)
    H.truthy(r.diagnostics:find("Diagnostics preview: introduces 1 error: shop/main.py:9: ", 1, true) == 1,
      "the headline: " .. tostring(r.diagnostics))

    -- The error is in the added line `return "total"`: it sits on the removed line it is drawn under.
    local items = vim.diagnostic.get(bufnr, { namespace = review.ns })
    eq(1, #items, vim.inspect(items))
    eq({ 8, vim.diagnostic.severity.ERROR, "h1" }, { items[1].lnum, items[1].severity, items[1].user_data.hunk })
    H.truthy(items[1].message:find("proposed line 9: ", 1, true) == 1, items[1].message)
    eq("    return total", vim.api.nvim_buf_get_lines(bufnr, 8, 9, false)[1])

    local headline, note, label
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })) do
      for _, line in ipairs(m[4].virt_lines or {}) do
        if line[1][1]:find("Diagnostics preview", 1, true) then
          headline = line[1][1]
        elseif headline and m[4].virt_lines_above and not line[2] then
          -- The headline goes on, wrapped at the window's width.
          headline = headline .. " " .. line[1][1]
        elseif line[1][1]:find('return "total"', 1, true) then
          note = line[2] and line[2][1]
        end
      end
      if m[4].virt_text then
        label = m[4].virt_text[1][1]
      end
    end
    eq(r.diagnostics, headline, "the headline above the hunk")
    H.truthy(note and note:find("^  E "), "the note on the added line: " .. tostring(note))
    eq(" h1: ga accept, gr reject | 1 new error ", label)
    H.truthy(chat.text():find("Diagnostics preview: introduces 1 error", 1, true), "the chat:\n" .. chat.text())
    local info = table.concat(tandem.info(), "\n")
    H.truthy(info:find(r.diagnostics, 1, true), ":Tandem shows it:\n" .. info)

    vim.api.nvim_feedkeys("gr", "x", false)
    H.wait(30000, function()
      return turn.done
    end, "the end of the turn")
    eq(nil, turn.err)
    eq(nil, tandem.review())
    eq({}, vim.diagnostic.get(bufnr, { namespace = review.ns }), "the preview's problems are gone")
    eq({}, vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, {}), "the headline and notes are gone")
    eq(original, vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "the buffer")
    eq(original, vim.fn.readfile(main), "the file")
  end)
end
