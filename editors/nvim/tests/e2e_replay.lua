-- End to end: a resumed session renders as the live one did. With TANDEM_TEST_REPLAY=live, a
-- session with a failed command, an edit reviewed hunk by hunk (one accepted, one rejected), a
-- prompt with an attachment and a cancelled prompt; the chat's transcript and the session's id
-- go to TANDEM_TEST_TRANSCRIPT. With TANDEM_TEST_REPLAY=resume (a fresh Neovim), the session is
-- resumed and its transcript compared with the live one, line for line. Neovim's own notes
-- ("> turn ended: …", "> cancel requested") are the editor's, not the session's: left out.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")
  local chat = require("tandem.chat")
  local phase = os.getenv("TANDEM_TEST_REPLAY")
  local file = os.getenv("TANDEM_TEST_TRANSCRIPT")
  local workspace = os.getenv("TANDEM_TEST_WORKSPACE")

  H.setup_sidecar()

  local function transcript()
    local out = {}
    for _, line in ipairs(vim.api.nvim_buf_get_lines(chat.buffer(), 0, -1, false)) do
      if not line:match("^> ") and not (line == "" and (out[#out] == "" or #out == 0)) then
        out[#out + 1] = line
      end
    end
    while out[#out] == "" do
      table.remove(out)
    end
    return out
  end

  local function allowing(fn)
    H.replacing(vim.ui, "select", function(items, _, on_choice)
      for _, item in ipairs(items) do
        if item.optionId == "allow_once" then
          on_choice(item)
        end
      end
    end, fn)
  end

  local function finished(turn, what)
    H.wait(30000, function()
      return turn.done
    end, what)
    return turn.result and turn.result.stopReason
  end

  if phase == "live" then
    test("e2e replay (live): a failed command, a prompt with an attachment, a hunk review, a cancelled prompt", function()
      -- The unit tests before wrote into the chat: it starts empty, as a fresh session's.
      chat.clear()
      vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/calc.py"))
      vim.cmd("TandemAdd")
      allowing(function()
        eq("end_turn", finished(H.prompt("run the tests"), "the failed command's turn"))
      end)
      local turn = H.prompt("fix add and mul")
      H.wait(30000, function()
        return tandem.review() ~= nil
      end, "the review")
      local hunks = tandem.review().hunks
      eq(2, #hunks)
      tandem.accept(hunks[1].id)
      tandem.reject(hunks[2].id)
      eq("end_turn", finished(turn, "the reviewed turn"))
      -- The model never answers this one: cancelled (again until the turn has started).
      turn = H.prompt("think hard about calc")
      H.wait(30000, function()
        if not turn.done then
          require("tandem.client").notify("tandem/session/cancel", { sessionId = tandem.state().session_id })
        end
        return turn.done
      end, "the cancelled turn")
      eq("cancelled", turn.result.stopReason)
      turn = H.prompt("hello after cancel")
      local ok = pcall(H.wait, 30000, function()
        return turn.done
      end, "the turn after the cancel")
      H.truthy(ok, "the turn after the cancel did not end:\n" .. chat.text() .. "\n" .. vim.inspect(tandem.state()))
      eq("end_turn", turn.result.stopReason)
      local lines = transcript()
      local text = table.concat(lines, "\n")
      -- What the live chat shows, before it is compared with the replay.
      H.truthy(text:find("✗ $ echo 'FAILED (failures=1)'; exit 1  · exit 1", 1, true), text)
      H.truthy(text:find("run the tests\n\n(attached: calc.py)", 1, true), text)
      H.truthy(text:find("## You\nthink hard about calc\n\n## You\nhello after cancel", 1, true), text)
      vim.fn.writefile(vim.list_extend({ tandem.state().session_id }, lines), file)
    end)
  else
    test("e2e replay (resume): a fresh Neovim shows the resumed session exactly as it was live", function()
      local saved = vim.fn.readfile(file)
      local id = table.remove(saved, 1)
      H.replacing(vim.ui, "select", function(items, _, on_choice)
        for _, item in ipairs(items) do
          if item.sessionId == id then
            on_choice(item)
          end
        end
      end, function()
        vim.cmd("TandemSessions")
        H.wait(30000, function()
          return tandem.state().session_id == id and tandem.state().model ~= nil
        end, "the resumed session")
      end)
      local replayed = transcript()
      eq(table.concat(saved, "\n"), table.concat(replayed, "\n"))
    end)
  end
end
