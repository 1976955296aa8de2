-- End to end: `#symbol:` and `#url:` in a prompt, from the real sidecar (TANDEM_TEST_BIN) with real
-- pyright, the scripted provider (TANDEM_TEST_BASE_URL) and a copy of tests/fixtures/python
-- (TANDEM_TEST_WORKSPACE). The provider's turns are scripted in tests/e2e/nvim.rs, which checks
-- what the model was sent.
return function(H)
  local test, eq = H.test, H.eq
  local tandem = require("tandem")
  local chat = require("tandem.chat")
  local workspace = os.getenv("TANDEM_TEST_WORKSPACE")

  H.setup_sidecar()

  local prompt = H.prompt

  test("e2e symbol: #symbol:increment attaches its definition from pyright, #url: the address as a link", function()
    -- The file in the window picks the language server; pyright starts for this prompt.
    vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/shop/main.py"))
    local turn = prompt("explain #symbol:increment, see #url:https://example.com/x")
    -- Generous: pyright starts and analyses the workspace first; this is not a timing test.
    H.wait(120000, function()
      return turn.done
    end, "the turn")
    eq(nil, turn.err)
    eq("end_turn", turn.result.stopReason)
    H.truthy(chat.text():find("(attached: increment (shop/counter.py:7-9), https://example.com/x)", 1, true), chat.text())
    H.truthy(chat.text():find("Explained.", 1, true), chat.text())
  end)

  test("e2e symbol: a #symbol: that matches nothing is a clear error, and the prompt is not sent", function()
    local notified, turn
    H.replacing(vim, "notify", function(message)
      notified = message
    end, function()
      turn = prompt("explain #symbol:NoSuchSymbolAnywhere")
      H.wait(60000, function()
        return turn.done
      end, "the answer of the language server")
    end)
    H.truthy(turn.err and turn.err:find("#symbol:NoSuchSymbolAnywhere: no symbol of that name in the workspace", 1, true),
      tostring(turn.err))
    H.truthy(notified and notified:find("no symbol of that name", 1, true), tostring(notified))
    eq(false, tandem.state().busy)
  end)
end
